"""Ctrl-C during a run: the run stops between two ops and KeyboardInterrupt reaches the caller; the session and
the model run again afterwards."""
import _thread
import threading
import time

import numpy as np
import pytest

import ldmsim
from conftest import long_chain_workload


def test_keyboard_interrupt_stops_a_run_cleanly():
    session = ldmsim.Session(fusion=False)  # one op a step, so the run is long and has many stop points
    # A chain long enough to interrupt on this host: doubled until a run takes half a second.
    for ops in (3000, 6000, 12000, 24000):
        model = session.load(long_chain_workload(ops=ops))
        start = time.perf_counter()
        full = session.run(model)
        full_seconds = time.perf_counter() - start
        if full_seconds > 0.5:
            break
    assert full_seconds > 0.5, "the workload must run long enough to interrupt"

    timer = threading.Timer(full_seconds / 4, _thread.interrupt_main)
    timer.start()
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        session.run(model)
    interrupted_seconds = time.perf_counter() - start
    timer.join()
    assert interrupted_seconds < full_seconds * 0.75
    again = session.run(model)
    assert again.cycles == full.cycles
    assert np.array_equal(again.outputs[model.outputs[0]["name"]], full.outputs[model.outputs[0]["name"]])
