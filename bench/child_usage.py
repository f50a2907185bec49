"""A child process run to its end and timed, as the bench scripts that time whole `ldmsim` processes need it."""
import os
import subprocess
import tempfile
import time


def run_child(argv):
    """Wall seconds and CPU seconds (user + system) of `argv` run to its end, its standard output discarded.
    SystemExit with its standard error when it fails (kept in a file, so a child that writes much never blocks)."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen([str(a) for a in argv], stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if status != 0:
            errors.seek(0)
            raise SystemExit(f"{' '.join(str(a) for a in argv)} failed (exit {os.waitstatus_to_exitcode(status)}):\n"
                             f"{errors.read().decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime
