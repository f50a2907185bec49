"""Every `ldmsim` command the README shows runs as shown: each line of its shell blocks that calls
./build/tools/ldmsim runs through bash (globs expand) in a scratch directory that sees the repository's examples,
after the README's own `python3 scripts/make_tiny_models.py models` line made the ONNX models it runs, and with
the two traces it leaves to the reader (a.ldmtrace, b.ldmtrace) made first. A command exits 0 unless its comment
says "(exit N ...)"."""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, cli_path


def readme_lines(prefix):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip().startswith(prefix)]


def readme_commands():
    return readme_lines("./build/tools/ldmsim")


def expected_status(command):
    status = re.search(r"#.*\(exit (\d+)", command)
    return int(status.group(1)) if status else 0


def make_reader_files(directory, cli):
    """The models, by the README's own line (the script from the repository, this Python), and the two traces
    the README diffs without making them."""
    (make,) = readme_lines("python3 scripts/make_tiny_models.py")
    words = shlex.split(make.split("#")[0])
    subprocess.run([sys.executable, str(ROOT / words[1])] + words[2:], cwd=directory, check=True, capture_output=True)
    for name, workload in (("a", "examples/cnn_block.json"), ("b", "examples/conv_block.json")):
        subprocess.run([cli, "run", workload, "--out", f"run_{name}", "--trace", f"{name}.ldmtrace"], cwd=directory,
                       check=True, capture_output=True)


def test_the_readme_runs_the_generated_models():
    """The ONNX commands use the models the repository's script makes (a CNN, a transformer, an LSTM), not files
    the reader would have to find."""
    commands = " ".join(readme_commands())
    for model in ("models/tiny_cnn.onnx", "models/tiny_transformer.onnx", "models/tiny_lstm.onnx"):
        assert model in commands
    assert not re.search(r"(^| )(model|lstm)\.onnx", commands)


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
    done = subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True, text=True, timeout=240)
    assert done.returncode == expected_status(command), f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
