"""ldmsim: a simulated Sunway-like local-store many-core processor, from Python (docs/python.md).

The compiled module ``ldmsim._ldmsim`` holds everything; this package re-exports it.
"""
from ._ldmsim import *  # noqa: F401,F403
from ._ldmsim import __version__  # noqa: F401
