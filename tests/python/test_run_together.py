"""Session.run_together: several models on one machine from Python, with the same simulated results and files as
`ldmsim run A B C [--concurrent]`; a model that traps keeps its fault and the others finish; models loaded for too
small a share of the local store are refused before anything runs."""
import json

import numpy as np
import pytest

import ldmsim
from conftest import run_cli

PIPELINE = ["lstm_a", "lstm_b", "lstm_c"]


@pytest.mark.parametrize("schedule", ["sequential", "pipelined"])
def test_run_together_matches_the_cli(root, tmp_path, schedule):
    files = [root / "examples" / "pipeline" / f"{name}.json" for name in PIPELINE]
    session = ldmsim.Session()
    models = [session.load(f, contexts=len(files)) for f in files]
    together = session.run_together(models, schedule=schedule, out=tmp_path / "py")
    assert together.ok and together.errors == [None, None, None]
    assert together.names == PIPELINE
    concurrent = ["--concurrent"] if schedule == "pipelined" else []
    run_cli("run", *files, *concurrent, "--out", tmp_path / "cli")
    cli = json.loads((tmp_path / "cli" / "stats.json").read_text())
    assert together.makespan == cli["machine"]["makespan_cycles"] > 0
    assert together.stats["models"] == cli["models"]
    assert together.stats["machine"] == cli["machine"]
    for name, result in zip(PIPELINE, together.results):
        assert result.cycles > 0
        for output, values in result.outputs.items():
            written = np.load(tmp_path / "cli" / name / f"{output}.npy")
            assert np.array_equal(values, written.astype(np.float32)), (name, output)
            assert np.array_equal(np.load(tmp_path / "py" / name / f"{output}.npy"), written)


def test_pipelined_outputs_equal_sequential_and_take_less_time(root):
    files = [root / "examples" / "pipeline" / f"{name}.json" for name in PIPELINE]
    session = ldmsim.Session()
    models = [session.load(f, contexts=3) for f in files]
    sequential = session.run_together(models)
    pipelined = session.run_together(models, schedule="pipelined", dtype="float16")
    assert pipelined.makespan < sequential.makespan
    for a, b in zip(sequential.results, pipelined.results):
        for name, values in a.outputs.items():
            assert b.outputs[name].dtype == np.float16
            assert np.array_equal(values, b.outputs[name].astype(np.float32))


def even_relu_workload():
    tensor = {"shape": [4, 8, 8], "init": {"value": 1}, "constant": False}
    return {"name": "even_relu", "arch": "tiny", "tensors": {"x": tensor},
            "ops": [{"type": "relu", "inputs": ["x"], "outputs": ["r"]}], "outputs": ["r"]}


def test_a_model_that_traps_keeps_its_fault_and_the_others_finish(root, tmp_path):
    session = ldmsim.Session(staging="none")  # cnn_block's odd shapes unpadded break the 4-byte rule
    trapping = session.load(root / "examples" / "cnn_block.json", contexts=2)
    fine = session.load(even_relu_workload(), contexts=2)
    together = session.run_together([fine, trapping], out=tmp_path / "run")
    assert not together.ok
    assert together.errors[0] is None and together.results[0].outputs["r"].shape == (4, 8, 8)
    assert together.results[1] is None
    fault = together.errors[1]
    assert isinstance(fault, ldmsim.Fault) and fault.kind == "dma-misaligned"
    assert [m["status"] for m in together.stats["models"]] == ["ok", "fault"]
    with pytest.raises(ldmsim.Fault) as raised:
        together.raise_first()
    assert raised.value is fault
    written = json.loads((tmp_path / "run" / "stats.json").read_text())
    assert written["models"][1]["fault"]["kind"] == "dma-misaligned"


def test_models_that_cannot_run_together_are_refused(root):
    files = [root / "examples" / "pipeline" / f"{name}.json" for name in PIPELINE]
    session = ldmsim.Session()
    whole = session.load(files[0])  # fused for the whole local store
    shared = [session.load(f, contexts=3) for f in files[1:]]
    with pytest.raises(ldmsim.ConfigError, match="contexts=3"):
        session.run_together([whole, *shared])
    with pytest.raises(ldmsim.ConfigError, match="contexts must be at least 1"):
        session.load(files[0], contexts=0)
    with pytest.raises(ldmsim.ConfigError, match="at most"):
        session.load(files[0], contexts=1 << 20)
    with pytest.raises(ldmsim.ConfigError, match="no models"):
        session.run_together([])
    with pytest.raises(TypeError, match="ldmsim.Model"):
        session.run_together(["lstm_a.json"])
    with pytest.raises(ldmsim.ConfigError, match="schedule"):
        session.run_together(shared, schedule="parallel")
    # Loaded for more contexts than run: a smaller share fits.
    assert session.run_together(shared).ok
