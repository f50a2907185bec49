"""Which BLAS kernels torch's matrix products run on, for the benches that time torch as the baseline.

Debian's torch multiplies through the system BLAS (OpenBLAS), which picks its kernels from the CPU at load time. On
a CPU it does not recognise (a VM that reports a generic model) it falls back to a core as old as Prescott: SSE3
kernels, about a third of the speed of the AVX-512 ones on the same machine, which would flatter every ratio
against torch. OPENBLAS_CORETYPE names the core to use instead (for example SkylakeX, Haswell).
"""
import os
import subprocess
import sys

# OpenBLAS cores older than AVX2: a fallback on any x86-64 machine that has AVX2.
_OLD_CORES = {"Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom", "Core2", "Penryn", "Dunnington",
              "Nehalem", "Opteron", "Opteron_SSE3", "Barcelona", "Bobcat", "Sandybridge"}


def _has_avx2():
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            return any(line.startswith("flags") and " avx2" in line for line in f)
    except OSError:
        return False


def openblas_core():
    """The core OpenBLAS chose in a fresh torch process (None: torch's BLAS is not OpenBLAS, or it did not say)."""
    env = dict(os.environ, OPENBLAS_VERBOSE="2")
    code = "import torch; torch.mm(torch.ones(2, 2), torch.ones(2, 2))"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("Core:"):
            return line.split(":", 1)[1].strip()
    return None


def blas_note():
    """One line for a bench's output: the core torch's products run on, and a warning when it is a fallback."""
    core = openblas_core()
    if core is None:
        return "torch's BLAS: not OpenBLAS, or it did not name its core"
    forced = os.environ.get("OPENBLAS_CORETYPE")
    note = f"torch's BLAS: OpenBLAS, {core} kernels" + (f" (OPENBLAS_CORETYPE={forced})" if forced else "")
    if core in _OLD_CORES and _has_avx2():
        note += (" -- a fallback on this AVX2 machine that slows torch's products about 3x and flatters the ratios;"
                 " set OPENBLAS_CORETYPE (SkylakeX on an AVX-512 Xeon, Haswell on an AVX2 one) for a fair baseline")
    return note
