"""The Python and CLI paths give byte-identical outputs (.npy), stats.json and traces for the same model: workload
JSONs of examples/ and an ONNX model with its input."""
import json

import numpy as np
import pytest

import ldmsim
from conftest import run_cli


def same_run_files(cli_dir, python_dir):
    """Every file but host_times.json (host seconds differ run to run) byte for byte."""
    names = sorted(p.name for p in cli_dir.iterdir() if p.name != "host_times.json")
    assert names == sorted(p.name for p in python_dir.iterdir() if p.name != "host_times.json")
    assert "stats.json" in names and any(n.endswith(".npy") for n in names)
    for name in names:
        assert (cli_dir / name).read_bytes() == (python_dir / name).read_bytes(), name
    return names


@pytest.mark.parametrize("workload", ["cnn_block.json", "conv_block.json", "relu6_block.json"])
def test_a_workload_runs_byte_identically(root, tmp_path, workload):
    path = root / "examples" / workload
    run_cli("run", path, "--out", tmp_path / "cli")
    session = ldmsim.Session(trace=True)
    result = session.run(session.load(path), out=tmp_path / "python")
    names = same_run_files(tmp_path / "cli", tmp_path / "python")
    assert "trace.ldmtrace" in names
    assert result.stats == json.loads((tmp_path / "cli" / "stats.json").read_text())
    for name, value in result.outputs.items():
        assert np.array_equal(value, np.load(tmp_path / "cli" / f"{name}.npy").astype(np.float32))


def test_an_onnx_model_runs_byte_identically(onnx_models, tmp_path):
    model_file = onnx_models / "cnn.onnx"
    x_file = onnx_models / "cnn_x.npy"
    run_cli("run", model_file, "--input", f"x={x_file}", "--no-trace", "--out", tmp_path / "cli")
    session = ldmsim.Session()
    model = session.load(model_file, input_files={"x": x_file})  # as --input reads it: with the model
    assert model.format == "onnx"
    result = session.run(model, out=tmp_path / "python")
    same_run_files(tmp_path / "cli", tmp_path / "python")
    reference = np.load(onnx_models / "cnn_probs.npy")
    assert np.abs(result.outputs["probs"] - reference).max() < 2e-3

    # The values given when the model runs instead: the same outputs and stats, notes included. The model's notes
    # describe the load (the input was not given then); the run's say what the run did with the values it was given.
    loaded = session.load(model_file)
    assert any("input 'x' [1,3,9,9] was not given" in note for note in loaded.notes)
    late = session.run(loaded, {"x": np.load(x_file)}, out=tmp_path / "late")
    assert (tmp_path / "late" / "probs.npy").read_bytes() == (tmp_path / "cli" / "probs.npy").read_bytes()
    cli_stats = json.loads((tmp_path / "cli" / "stats.json").read_text())
    assert "input 'x': f32 values rounded to fp16" in cli_stats["import_notes"]
    assert late.notes == cli_stats["import_notes"]
    assert late.stats == cli_stats
    as_fp16 = session.run(loaded, {"x": np.load(x_file).astype(np.float16)})  # no rounding: no note on x
    assert not any("'x'" in note for note in as_fp16.notes)
    assert as_fp16.notes == [note for note in cli_stats["import_notes"] if "'x'" not in note]
    assert session.run(loaded).notes == loaded.notes  # nothing given: the load's notes hold
