"""ldmsim.Trace: events as a numpy structured array equal to the CLI's CSV export field by field, launches and
markers, and malformed or hostile files refused with an exception naming them."""
import csv
import json
import os
import sys

import numpy as np
import pytest

import ldmsim
from conftest import run_cli

MODES = {"PE": 0, "BCAST": 1, "ROW": 2}
STATUSES = {"ok": 0, "trapped": 1, "lint": 2}


def csv_events(trace, tmp_path):
    out = tmp_path / "events.csv"
    run_cli("trace", "export", trace, "--format", "csv", "-o", out)
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def test_events_equal_the_csv_export_field_by_field(conv_run, tmp_path):
    trace = ldmsim.Trace(conv_run / "trace.ldmtrace")
    events = trace.events()
    rows = csv_events(conv_run / "trace.ldmtrace", tmp_path)
    assert events.dtype == ldmsim.EVENT_DTYPE and events.dtype.itemsize == 64
    assert len(events) == len(rows) > 500
    for field, column in [("cg", "cg"), ("core", "core"), ("bytes", "bytes"), ("main", "main"), ("ldm", "ldm"),
                          ("bsize", "bsize"), ("stride", "stride"), ("issue", "issue_cycle"),
                          ("start", "start_cycle"), ("end", "end_cycle")]:
        expected = np.array([int(r[column], 0) for r in rows], dtype=np.uint64)
        assert np.array_equal(events[field].astype(np.uint64), expected), field
    assert np.array_equal(events["op"], [0 if r["op"] == "get" else 1 for r in rows])
    assert np.array_equal(events["mode"], [MODES[r["mode"]] for r in rows])
    assert np.array_equal(events["status"], [STATUSES[r["status"]] for r in rows])


def test_header_totals_kernels_and_markers(conv_run):
    trace = ldmsim.Trace(str(conv_run / "trace.ldmtrace"))
    stats = json.loads((conv_run / "stats.json").read_text())
    assert trace.version == 2
    assert trace.header["cycles"] == stats["cycles"]
    assert trace.header["fault"] is None
    events = trace.events()
    assert trace.totals["dma_events"] == len(events)
    kernels = trace.kernels()
    launches = [m for m in trace.markers() if m["kind"] == "launch begin"]
    assert len(launches) > 0 and {k["name"] for k in kernels} == {m["text"] for m in launches}
    assert [(k["begin"], k["name"]) for k in kernels] == sorted((k["begin"], k["name"]) for k in kernels)
    # Every event lies in the launch it is given, which began on its core group.
    assert (events["kernel"] >= 0).all()
    begins = np.array([k["begin"] for k in kernels], dtype=np.uint64)
    ends = np.array([k["end"] for k in kernels], dtype=np.uint64)
    assert (begins[events["kernel"]] <= events["issue"]).all()
    assert (events["end"] <= ends[events["kernel"]]).all()
    # ... and its name is that of the launch begun last on the event's own group at or before its issue.
    names = np.array([k["name"] for k in kernels])
    for cg in np.unique(events["cg"]):
        own = sorted(((m["cycle"], m["text"]) for m in launches if m["cg"] == cg), key=lambda b: b[0])  # stable
        cycles = np.array([c for c, _ in own], dtype=np.uint64)
        mine = events[events["cg"] == cg]
        latest = np.searchsorted(cycles, mine["issue"], side="right") - 1
        assert (latest >= 0).all()
        assert (np.array([t for _, t in own])[latest] == names[mine["kernel"]]).all()


def test_events_build_no_python_object_per_event(conv_run):
    trace = ldmsim.Trace(conv_run / "trace.ldmtrace")
    trace.events()  # warm up: the dtype, the module's first use
    before = sys.getallocatedblocks()
    events = trace.events()
    assert len(events) > 500
    assert sys.getallocatedblocks() - before < 200
    assert events.base is not None and events.flags["C_CONTIGUOUS"]


def test_events_the_host_cannot_hold_are_refused_before_allocating(conv_run, monkeypatch):
    trace = ldmsim.Trace(conv_run / "trace.ldmtrace")
    monkeypatch.setenv("LDMSIM_HOST_MEMORY_BYTES", "4096")
    with pytest.raises(ldmsim.ConfigError, match="events of trace .*trace.ldmtrace"):
        trace.events()
    monkeypatch.delenv("LDMSIM_HOST_MEMORY_BYTES")
    assert len(trace.events()) > 500


def test_truncated_and_corrupt_traces_raise_trace_format_error(conv_run, tmp_path):
    data = (conv_run / "trace.ldmtrace").read_bytes()
    cut = tmp_path / "cut.ldmtrace"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ldmsim.TraceFormatError, match="cut.ldmtrace") as error:
        ldmsim.Trace(cut).events()
    assert isinstance(error.value, ValueError)
    assert error.value.file.endswith("cut.ldmtrace") and 0 < error.value.offset <= len(data) // 2
    bad = tmp_path / "bad.ldmtrace"
    bad.write_bytes(b"NOTATRACE" + data[9:])
    with pytest.raises(ldmsim.TraceFormatError, match="bad magic"):
        ldmsim.Trace(bad)
    header_only = tmp_path / "header.ldmtrace"
    header_only.write_bytes(data[:20])
    with pytest.raises(ldmsim.TraceFormatError, match="header.ldmtrace"):
        ldmsim.Trace(header_only)


def test_a_fifo_a_directory_and_a_missing_file_are_named(tmp_path):
    fifo = tmp_path / "fifo.ldmtrace"
    os.mkfifo(fifo)
    with pytest.raises(ldmsim.ConfigError, match="fifo.ldmtrace.*FIFO"):
        ldmsim.Trace(fifo)
    with pytest.raises(ldmsim.ConfigError, match="not a regular file|directory"):
        ldmsim.Trace(tmp_path)
    with pytest.raises(ldmsim.ConfigError, match="missing.ldmtrace"):
        ldmsim.Trace(tmp_path / "missing.ldmtrace")
    with pytest.raises(TypeError):
        ldmsim.Trace(42)
