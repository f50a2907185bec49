"""The console sessions of docs/user-guide.md run as shown: each fenced block that starts with `$ ldmsim ...`
runs its command (the built CLI, in a scratch directory) and must print every output line the guide shows, in
order, and exit with the status its `$ echo $?` line shows (0 when it shows none). The guide wraps long lines, so
output is compared word by word; a `...` line stands for any output. The one file a session leaves to the reader
(my-arch.json, an arch with a bad DMA timing parameter) is made first."""
import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, cli_path


def sessions():
    """(command, shown output lines, shown exit status) per `$ ldmsim` block of the guide."""
    text = (ROOT / "docs" / "user-guide.md").read_text()
    found = []
    for block in re.findall(r"```\n(\$ ldmsim .*?)```", text, re.S):
        lines = block.splitlines()
        command, shown, status = lines[0][2:], [], 0
        for i, line in enumerate(lines[1:], 1):
            if line == "$ echo $?":
                status = int(lines[i + 1])
                break
            shown.append(line)
        found.append((command, shown, status))
    return found


def words_in_order(shown, printed):
    """Whether the shown lines' words appear in the printed output in order, each run between `...` lines as
    consecutive words."""
    words = printed.split()
    at = 0
    runs, run = [], []
    for line in shown:
        if line.strip() == "...":
            runs.append(run)
            run = []
        else:
            run.extend(line.split())
    runs.append(run)
    for run in runs:
        if not run:
            continue
        found = next((i for i in range(at, len(words) - len(run) + 1) if words[i:i + len(run)] == run), None)
        if found is None:
            return False
        at = found + len(run)
    return True


def test_the_guide_shows_sessions():
    assert len(sessions()) >= 3


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    directory = tmp_path_factory.mktemp("guide")
    arch = json.loads(subprocess.run([cli(), "arch", "show", "sw26010"], check=True, capture_output=True,
                                     text=True).stdout)
    arch["dma"]["timing"]["bytes_per_cycle"] = 0
    (directory / "my-arch.json").write_text(json.dumps(arch))
    return directory


def cli():
    return str(Path(cli_path()).resolve())


@pytest.mark.parametrize("command,shown,status", sessions(), ids=[s[0] for s in sessions()])
def test_guide_session(scratch, command, shown, status):
    args = command.split()
    done = subprocess.run([cli()] + args[1:], cwd=scratch, capture_output=True, text=True, timeout=240)
    printed = done.stdout + done.stderr
    assert done.returncode == status, printed[-3000:]
    assert words_in_order(shown, printed), f"{command}: shown\n" + "\n".join(shown) + "\n\nprinted\n" + printed
