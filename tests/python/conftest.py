"""Fixtures of the Python binding tests: the repository, the built CLI, small ONNX models and traces of real runs.

Run from ctest (tests/CMakeLists.txt sets PYTHONPATH to the build tree's module and LDMSIM_CLI), or by hand:
PYTHONPATH=build/python LDMSIM_CLI=build/tools/ldmsim /usr/bin/python3 -m pytest tests/python
"""
import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli_path():
    cli = os.environ.get("LDMSIM_CLI", str(ROOT / "build" / "tools" / "ldmsim"))
    assert Path(cli).is_file(), f"the ldmsim CLI is not built at {cli} (set LDMSIM_CLI)"
    return cli


def run_cli(*args, check=True):
    """Runs the CLI; returns the CompletedProcess (stdout and stderr as text)."""
    done = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"ldmsim {' '.join(map(str, args))} exited {done.returncode}:\n{done.stderr}")
    return done


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def onnx_models(tmp_path_factory):
    """The CNN model of tests/onnx/make_models.py (cnn.onnx, its input cnn_x.npy and reference cnn_probs.npy)."""
    spec = importlib.util.spec_from_file_location("make_models", ROOT / "tests" / "onnx" / "make_models.py")
    make_models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_models)
    directory = tmp_path_factory.mktemp("onnx")
    make_models.cnn(directory)
    return directory


@pytest.fixture(scope="session")
def conv_run(tmp_path_factory):
    """`ldmsim run examples/conv_block.json` with its trace: the run directory."""
    out = tmp_path_factory.mktemp("conv_run")
    run_cli("run", ROOT / "examples" / "conv_block.json", "--out", out)
    assert (out / "trace.ldmtrace").is_file()
    return out


def long_chain_workload(ops=1000, shape=(64, 2048)):
    """A chain of element-wise ops, long enough that a run with fusion off takes a second or more."""
    tensors = {"t0": {"shape": list(shape), "init": {"normal": [0, 1], "seed": 1}}}
    chain = [{"type": "relu" if i % 2 else "neg", "inputs": [f"t{i}"], "outputs": [f"t{i + 1}"]} for i in range(ops)]
    return {"name": "long_chain", "arch": "sw26010", "tensors": tensors, "ops": chain, "outputs": [f"t{ops}"]}
