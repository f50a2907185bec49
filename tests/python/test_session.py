"""ldmsim.Session: models from a file or a dict, numpy inputs and outputs equal to a numpy reference, fp16 on
request, faults and bad input as Python exceptions that name the culprit, the GIL released while a run goes on."""
import json
import os
import threading
import time

import numpy as np
import pytest

import ldmsim
from conftest import long_chain_workload


def add_relu_workload(shape=(3, 5, 7)):
    """relu(x + y) on an odd shape: x and y are given when the model runs."""
    tensor = {"shape": list(shape), "init": {"value": 0}, "constant": False}
    return {"name": "add_relu", "arch": "tiny", "tensors": {"x": dict(tensor), "y": dict(tensor)},
            "ops": [{"type": "add", "inputs": ["x", "y"], "outputs": ["s"]},
                    {"type": "relu", "inputs": ["s"], "outputs": ["r"]}],
            "outputs": ["r"]}


def test_outputs_equal_a_numpy_reference_in_both_dtypes():
    session = ldmsim.Session()
    model = session.load(add_relu_workload())
    assert model.format == "workload-json" and model.name == "add_relu"
    assert [(i["name"], i["shape"]) for i in model.inputs] == [("x", (3, 5, 7)), ("y", (3, 5, 7))]
    assert [(o["name"], o["shape"]) for o in model.outputs] == [("r", (3, 5, 7))]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 7)).astype(np.float32)
    y = rng.standard_normal((3, 5, 7)).astype(np.float16)  # fp16 inputs are taken as they are
    expected = np.maximum((x.astype(np.float16).astype(np.float32) + y.astype(np.float32)).astype(np.float16), 0)
    result = session.run(model, {"x": x, "y": y})
    assert result.outputs["r"].dtype == np.float32
    assert np.array_equal(result.outputs["r"], expected.astype(np.float32))
    halves = session.run(model, {"x": x, "y": y}, dtype="float16").outputs["r"]
    assert halves.dtype == np.float16 and not halves.flags.writeable
    assert np.array_equal(halves.view(np.uint16), expected.view(np.uint16))
    # A non-contiguous, big-endian input is the same values.
    xt = np.ascontiguousarray(x.transpose(2, 1, 0)).astype(">f4").transpose(2, 1, 0)
    again = session.run(model, {"x": xt, "y": y})
    assert np.array_equal(again.outputs["r"], result.outputs["r"])
    # Inputs left out keep the model's values (zeros here).
    only_x = session.run(model, {"x": x}).outputs["r"]
    assert np.array_equal(only_x, np.maximum(x.astype(np.float16), 0).astype(np.float32))


def test_stats_and_layers(root):
    import pandas as pd
    session = ldmsim.Session()
    model = session.load(root / "examples" / "cnn_block.json")
    result = session.run(model)
    assert result.cycles == result.stats["cycles"] > 0
    assert result.stats["arch"] == model.arch["name"] == "tiny"  # the workload's own arch
    layers = pd.DataFrame(result.layers)
    assert list(layers["index"]) == sorted(layers["index"])
    assert layers["cycles"].sum() <= result.cycles
    assert {"name", "type", "bound", "cycles", "start_cycle", "end_cycle", "flops", "dma_bytes"} <= set(layers.columns)
    assert {"arithmetic_intensity", "roofline_fraction", "roofline_limit", "source_layers"} <= set(layers.columns)
    assert "ldm_high_water" not in layers.columns  # read from the trace, which this session does not record
    traced = ldmsim.Session(trace=True).run(model)
    ldm = [layer["ldm_high_water"] for layer in traced.layers]
    assert all(0 < bytes <= model.arch["core_groups"]["cores"]["ldm_bytes"] for bytes in ldm)
    assert max(ldm) == traced.stats["ldm_high_water"]


def test_a_file_and_a_dict_load_the_same_model(root):
    path = root / "examples" / "cnn_block.json"
    session = ldmsim.Session()
    from_file = session.run(session.load(path))
    from_dict = session.run(session.load(json.loads(path.read_text()), base_dir=path.parent))
    assert from_file.stats == from_dict.stats
    for name, value in from_file.outputs.items():
        assert np.array_equal(value, from_dict.outputs[name])


def test_an_arch_dict_changes_the_machine():
    tree = ldmsim.arch("tiny")
    tree["clock_hz"] = tree["clock_hz"] * 2
    model_default = ldmsim.Session(arch="tiny").load(add_relu_workload())
    faster = ldmsim.Session(arch=tree)
    model_faster = faster.load(add_relu_workload())
    assert model_faster.arch["clock_hz"] == tree["clock_hz"]
    a = ldmsim.Session(arch="tiny").run(model_default)
    b = faster.run(model_faster)
    assert a.cycles == b.cycles and b.seconds == pytest.approx(a.seconds / 2)


def test_bad_inputs_name_the_culprit():
    session = ldmsim.Session()
    model = session.load(add_relu_workload())
    x = np.zeros((3, 5, 7), np.float32)
    with pytest.raises(ldmsim.ConfigError, match=r"input 'nope': model add_relu has no such input \(its inputs: x, y\)"):
        session.run(model, {"nope": x})
    with pytest.raises(ldmsim.ConfigError, match=r"input 'x': shape \[3, 5, 6\] given"):
        session.run(model, {"x": np.zeros((3, 5, 6), np.float32)})
    with pytest.raises(TypeError, match="input 'x' has dtype float64"):
        session.run(model, {"x": np.zeros((3, 5, 7))})
    with pytest.raises(ldmsim.ConfigError, match="input 'y': int32 values given, the model's input is f16"):
        session.run(model, {"y": np.zeros((3, 5, 7), np.int32)})
    with pytest.raises(TypeError, match="input 'y' has dtype complex64"):
        session.run(model, {"y": np.zeros((3, 5, 7), np.complex64)})
    with pytest.raises(TypeError, match="inputs must be a dict"):
        session.run(model, [x])
    with pytest.raises(ldmsim.ConfigError, match="dtype must be"):
        session.run(model, {"x": x}, dtype="int8")
    with pytest.raises(ldmsim.ConfigError, match="staging"):
        ldmsim.Session(staging="sideways")
    with pytest.raises(TypeError, match="arch must be"):
        ldmsim.Session(arch=3)


def test_bad_model_files_name_the_file(tmp_path, onnx_models):
    session = ldmsim.Session()
    fifo = tmp_path / "model.onnx"
    os.mkfifo(fifo)
    with pytest.raises(ldmsim.ConfigError, match="model.onnx.*FIFO"):
        session.load(fifo)
    with pytest.raises(ldmsim.ConfigError, match="missing.json"):
        session.load(tmp_path / "missing.json")
    data = (onnx_models / "cnn.onnx").read_bytes()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ldmsim.ConfigError, match="cut.onnx"):
        session.load(cut)
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ldmsim.ConfigError, match="notes.txt"):
        session.load(text)
    with pytest.raises(ldmsim.ConfigError, match="no-such-arch"):
        ldmsim.Session(arch="no-such-arch").load(add_relu_workload())
    with pytest.raises(TypeError, match="load"):
        session.load(42)


def test_a_fault_is_an_exception_with_its_fields(root, tmp_path):
    session = ldmsim.Session(staging="none")  # odd shapes unpadded: a DMA request breaks the 4-byte rule
    model = session.load(root / "examples" / "cnn_block.json")
    with pytest.raises(ldmsim.Fault) as trapped:
        session.run(model, out=tmp_path / "run")
    fault = trapped.value
    assert isinstance(fault, RuntimeError) and isinstance(fault, ldmsim.Error)
    assert fault.kind == "dma-misaligned"
    assert fault.kernel == "fused#0" and fault.cg == 0 and fault.core >= 0 and fault.cycle >= 0
    assert fault.detail in str(fault)
    # The request field the trap is about, typed: its name and value, which break the 4-byte rule.
    assert fault.field in ("main address", "ldm address", "length", "bsize", "stride")
    assert isinstance(fault.value, int) and fault.value % 4 != 0
    assert f"{fault.field} = {fault.value}" in fault.detail
    stats = json.loads((tmp_path / "run" / "stats.json").read_text())  # a trapped run still writes its stats
    assert stats["fault"]["kind"] == "dma-misaligned"
    assert (stats["fault"]["field"], stats["fault"]["value"]) == (fault.field, fault.value)


def test_the_gil_is_released_while_a_run_goes_on():
    session = ldmsim.Session(fusion=False)
    model = session.load(long_chain_workload(ops=1500))
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    start = time.perf_counter()
    try:
        session.run(model)
    finally:
        end = time.perf_counter()
        done.set()
        counter.join()
    during = [t for t in ticks if start < t < end]
    assert end - start > 0.1 and len(during) >= 20  # with the GIL held the counter could not tick at all


def test_int_and_bool_inputs_and_outputs_keep_their_dtypes():
    """An embedding lookup by int64 ids and a bool mask: ids and masks go in as numpy integers and bools, and the
    int32 and bool outputs come back as such."""
    workload = {"name": "typed", "arch": "tiny",
                "tensors": {"ids": {"shape": [2, 3], "dtype": "int64", "init": {"value": 0}},
                            "table": {"shape": [5, 4], "init": {"value": 0}, "constant": False},
                            "pad": {"shape": [2, 3], "dtype": "bool", "init": {"value": 0}},
                            "fill": {"shape": [1], "init": {"value": -1}}},
                "ops": [{"type": "gather", "inputs": ["table", "ids"], "outputs": ["emb"]},
                        {"type": "not", "inputs": ["pad"], "outputs": ["keep"]},
                        {"type": "cast", "inputs": ["keep"], "outputs": ["keep_i"], "attrs": {"to": "int32"}},
                        {"type": "reshape", "inputs": ["pad"], "outputs": ["pad3"], "attrs": {"shape": [2, 3, 1]}},
                        {"type": "where", "inputs": ["pad3", "fill", "emb"], "outputs": ["masked"]}],
                "outputs": ["masked", "keep", "keep_i"]}
    session = ldmsim.Session()
    model = session.load(workload)
    assert {i["name"]: i["dtype"] for i in model.inputs}["ids"] == "int32"
    ids = np.array([[4, 0, 2], [1, -1, 3]], dtype=np.int64)
    table = np.arange(20, dtype=np.float32).reshape(5, 4)
    pad = np.array([[False, True, False], [False, False, True]])
    result = session.run(model, {"ids": ids, "table": table, "pad": pad})
    assert result.outputs["keep"].dtype == np.bool_ and np.array_equal(result.outputs["keep"], ~pad)
    assert result.outputs["keep_i"].dtype == np.int32 and np.array_equal(result.outputs["keep_i"], (~pad).astype(np.int32))
    expected = np.where(pad[:, :, None], -1.0, table[ids])
    assert np.array_equal(result.outputs["masked"], expected.astype(np.float32))
    with pytest.raises(ldmsim.ConfigError, match="input 'ids': f16 values given"):
        session.run(model, {"ids": ids.astype(np.float32)})
    with pytest.raises(ValueError, match="does not fit in int32"):
        session.run(model, {"ids": np.full((2, 3), 2**40, dtype=np.int64)})
    with pytest.raises(ldmsim.Fault) as trapped:
        session.run(model, {"ids": np.full((2, 3), 5, dtype=np.int64)})
    assert trapped.value.kind == "index-out-of-range"


def test_split_takes_auto_on_off_and_booleans(root):
    """split="auto" records each op's placement and estimate; True and "on" are the rule, whose plan is priced too
    (no runner-up); False and "off" no split; the outputs agree (no split of this block sums partials)."""
    model_file = root / "examples" / "conv_block.json"
    outputs, stats = {}, {}
    for split in ("auto", "on", True, "off", False):
        session = ldmsim.Session(arch="sw26010", split=split)
        result = session.run(session.load(model_file))
        outputs[split], stats[split] = result.outputs, result.stats
    assert all(op["placement"]["estimated_cycles"] >= 0 for op in stats["auto"]["ops"])
    assert all(op["placement"]["estimated_cycles"] >= 0 and "runner_up" not in op["placement"]
               for op in stats["on"]["ops"])
    assert stats["on"]["split"]["estimated_cycles"] > 0
    assert stats["on"]["split"]["mode"] == "on" and stats[True]["cycles"] == stats["on"]["cycles"]
    assert "split" not in stats["off"] and stats[False]["cycles"] == stats["off"]["cycles"]
    for split in ("auto", "on"):
        for name, values in outputs["off"].items():
            assert np.array_equal(outputs[split][name], values)
    with pytest.raises(ldmsim.ConfigError,
                       match="split must be 'auto', 'on', 'off', True, False or None, not 'sideways'"):
        ldmsim.Session(split="sideways")
    with pytest.raises(TypeError, match="split must be"):
        ldmsim.Session(split=3)


def test_placements_pin_ops_in_the_cost_aware_choice(root):
    """placements={op: placement} pins those ops as --place does: the stats mark them, outputs stay the same, and an
    op the model lacks is refused by name when the model runs."""
    model_file = root / "examples" / "conv_block.json"
    free = ldmsim.Session(arch="sw26010", split="auto")
    result = free.run(free.load(model_file))
    op = result.stats["ops"][0]
    other = op["placement"]["runner_up"]
    assert other and other != op["placement"]["placement"]
    session = ldmsim.Session(arch="sw26010", split="auto", placements={op["name"]: other})
    pinned = session.run(session.load(model_file))
    assert pinned.stats["ops"][0]["placement"]["placement"] == other
    assert pinned.stats["ops"][0]["placement"]["pinned"] is True
    assert "pinned" not in result.stats["ops"][0]["placement"]
    for name, values in result.outputs.items():
        assert np.array_equal(pinned.outputs[name], values)
    wrong = ldmsim.Session(arch="sw26010", split="auto", placements={"conv9": "whole"})
    with pytest.raises(ldmsim.ConfigError, match="the model has no op 'conv9'"):
        wrong.run(wrong.load(model_file))
    for split in ("on", "off", True, False):
        with pytest.raises(ldmsim.ConfigError, match="placements pin the cost-aware choice"):
            ldmsim.Session(split=split, placements={op["name"]: other})


def test_warm_runs_match_a_fresh_sessions_and_threads_each_get_a_machine(root, tmp_path):
    """A session reuses its machine, reset, for the next run: outputs, stats and files equal a fresh session's run,
    run after run; runs from two Python threads at once each get a machine of their own."""
    workload = root / "examples" / "conv_block.json"
    cold = ldmsim.Session(arch="sw26010pro").run(ldmsim.Session(arch="sw26010pro").load(workload))
    session = ldmsim.Session(arch="sw26010pro")
    model = session.load(workload)
    for k in range(3):
        warm = session.run(model, out=tmp_path / f"run{k}")
        assert warm.stats == cold.stats
        for name, value in cold.outputs.items():
            assert np.array_equal(warm.outputs[name], value)
    assert (tmp_path / "run0" / "stats.json").read_bytes() == (tmp_path / "run2" / "stats.json").read_bytes()
    results = [None, None]

    def run(i):
        results[i] = session.run(model)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None and r.stats == cold.stats for r in results)


def test_split_defaults_to_auto_for_an_onnx_model_and_off_for_a_workload(root, onnx_models):
    """split=None (the default): the cost-aware choice for an ONNX model, no split for a workload JSON."""
    session = ldmsim.Session(arch="sw26010")
    onnx = session.run(session.load(onnx_models / "cnn.onnx", input_files={"x": onnx_models / "cnn_x.npy"}))
    assert all("placement" in op for op in onnx.stats["ops"])  # chosen by cost, also when nothing is split
    workload = session.run(session.load(root / "examples" / "conv_block.json")).stats
    assert "split" not in workload and not any("placement" in op for op in workload["ops"])
    off = ldmsim.Session(arch="sw26010", split="off")
    stats = off.run(off.load(onnx_models / "cnn.onnx", input_files={"x": onnx_models / "cnn_x.npy"})).stats
    assert "split" not in stats and not any("placement" in op for op in stats["ops"])
