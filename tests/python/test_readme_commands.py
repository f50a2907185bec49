"""Every `ldmsim` command the README shows runs as shown: each line of its shell blocks that calls
./build/tools/ldmsim runs through bash (globs expand) in a scratch directory that sees the repository's examples,
with the files the README leaves to the reader (model.onnx, x.npy, lstm.onnx, a.ldmtrace, b.ldmtrace) made first.
A command exits 0 unless its comment says "(exit N ...)"."""
import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import ROOT, cli_path


def readme_commands():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [line.strip() for block in blocks for line in block.splitlines()
            if line.strip().startswith("./build/tools/ldmsim")]


def expected_status(command):
    status = re.search(r"#.*\(exit (\d+)", command)
    return int(status.group(1)) if status else 0


def make_reader_files(directory, cli):
    """The files the README's commands name without making them: a small ONNX CNN with input 'input' and its
    x.npy, an LSTM model with input 'x' (x.npy fits both), and two traces to diff."""
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(rng.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32), "w")
    cnn = helper.make_graph(
        [helper.make_node("Conv", ["input", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        "readme_cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], [w])
    onnx.save(helper.make_model(cnn, opset_imports=[helper.make_opsetid("", 13)]), str(directory / "model.onnx"))
    hidden, seq, batch, size = 8, 3, 1, 8
    lstm_w = [numpy_helper.from_array(rng.uniform(-0.3, 0.3, shape).astype(np.float32), name)
              for name, shape in (("W", (1, 4 * hidden, size)), ("R", (1, 4 * hidden, hidden)))]
    lstm = helper.make_graph(
        [helper.make_node("LSTM", ["x", "W", "R"], ["y"], name="lstm", hidden_size=hidden)],
        "readme_lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [seq, 1, batch, hidden])], lstm_w)
    onnx.save(helper.make_model(lstm, opset_imports=[helper.make_opsetid("", 13)]), str(directory / "lstm.onnx"))
    # One x.npy serves both: the CNN's input is [1, 3, 8, 8]; the LSTM reads its own shape from the same name.
    np.save(directory / "x.npy", rng.normal(size=(1, 3, 8, 8)).astype(np.float32))
    np.save(directory / "x_lstm.npy", rng.normal(size=(seq, batch, size)).astype(np.float32))
    for name, workload in (("a", "examples/cnn_block.json"), ("b", "examples/conv_block.json")):
        subprocess.run([cli, "run", workload, "--out", f"run_{name}", "--trace", f"{name}.ldmtrace"], cwd=directory,
                       check=True, capture_output=True)


def cli():
    return str(Path(cli_path()).resolve())  # the commands run in another directory


def test_the_readme_shows_commands():
    assert len(readme_commands()) >= 15


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    directory = tmp_path_factory.mktemp("readme")
    (directory / "examples").symlink_to(ROOT / "examples")
    make_reader_files(directory, cli())
    # The README's default run comes first: later commands read its ldmsim-out.
    subprocess.run([cli(), "run"], cwd=directory, check=True, capture_output=True)
    return directory


@pytest.mark.parametrize("command", readme_commands())
def test_readme_command(scratch, command):
    line = command.replace("./build/tools/ldmsim", cli(), 1)
    if "lstm.onnx" in line:  # the LSTM's own input file, under the README's name
        line = line.replace("x=x.npy", "x=x_lstm.npy")
    done = subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True, text=True, timeout=240)
    assert done.returncode == expected_status(command), f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
