"""Every command's --help ends with an example, and every example runs as shown: each `ldmsim ...` line of a
help page's footer (text after two spaces is its description) runs through bash in a scratch directory that sees
the repository's examples and the tiny models of scripts/make_tiny_models.py, after the runs the examples read
(ldmsim-out, run-a, run-b, out-fused, out-unfused) were made."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, cli_path

COMMANDS = ["", "arch", "arch list", "arch show", "run", "bench", "bench stream", "pad", "trace", "trace summary",
            "trace export", "trace filter", "trace diff", "report", "import", "plan", "compare"]


def cli():
    return str(Path(cli_path()).resolve())  # the examples run in another directory


def help_of(command):
    done = subprocess.run([cli(), *command.split(), "--help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def examples_of(command):
    """The example commands of a help page: after "Example:" or "Examples:", the `ldmsim ...` lines."""
    text = help_of(command)
    at = text.find("Example")
    if at < 0:
        return []
    found = []
    for line in text[at:].splitlines():
        line = re.sub(r"^Examples?:", "", line).strip()
        if line.startswith("ldmsim "):
            found.append(re.split(r"\s{2,}| \(", line)[0])
    return found


@pytest.mark.parametrize("command", [c for c in COMMANDS if c], ids=[c for c in COMMANDS if c])
def test_help_has_an_example(command):
    assert examples_of(command), f"ldmsim {command} --help shows no example"


def all_examples():
    return sorted({e for c in COMMANDS if c for e in examples_of(c)})


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    directory = tmp_path_factory.mktemp("help")
    (directory / "examples").symlink_to(ROOT / "examples")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_tiny_models.py"), "models"], cwd=directory,
                   check=True, capture_output=True)
    for args in (["run"], ["run", "--out", "run-a"], ["run", "--out", "run-b"],
                 ["run", "examples/cnn_block.json", "--out", "out-fused"],
                 ["run", "examples/cnn_block.json", "--fusion", "off", "--out", "out-unfused"]):
        subprocess.run([cli(), *args], cwd=directory, check=True, capture_output=True)
    return directory


@pytest.mark.parametrize("example", all_examples())
def test_help_example_runs(scratch, example):
    line = example.replace("ldmsim", cli(), 1)
    done = subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{example}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
