"""The console sessions of the docs run as shown: each fenced block of README.md or docs/*.md that starts with
`$ ldmsim ...` runs its commands in order (the built CLI, in a scratch directory that sees the repository's
examples) and each must print every output line the block shows after it, in order, and exit with the status its
`$ echo $?` line shows (0 when it shows none). The docs wrap long lines, so output is compared word by word (with
stdout before stderr or after it: a terminal interleaves them, a pipe gives stdout at exit); a
`...` line stands for any output, and a progress line's host seconds (`[1/4 0.0s]`) for any. A path under /tmp/ is
taken under the scratch directory. The one file a session leaves to the reader (my-arch.json, an arch with a bad
DMA timing parameter) is made first."""
import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, cli_path

DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
HOST_SECONDS = re.compile(r"^\d+\.\ds\]$")


def sessions():
    """(doc name, steps) per console block of the docs; a step is [command, shown output lines, shown status]."""
    found = []
    for doc in DOCS:
        for block in re.findall(r"```\n(\$ ldmsim .*?)```", doc.read_text(), re.S):
            steps = []
            lines = block.splitlines()
            i = 0
            while i < len(lines):
                if lines[i] == "$ echo $?":
                    steps[-1][2] = int(lines[i + 1])
                    i += 2
                    continue
                if lines[i].startswith("$ "):
                    steps.append([lines[i][2:], [], 0])
                else:
                    steps[-1][1].append(lines[i])
                i += 1
            found.append((doc.name, steps))
    return found


def same_word(shown, printed):
    return shown == printed or (HOST_SECONDS.match(shown) is not None and HOST_SECONDS.match(printed) is not None)


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
        found = next((i for i in range(at, len(words) - len(run) + 1)
                      if all(same_word(s, p) for s, p in zip(run, words[i:i + len(run)]))), None)
        if found is None:
            return False
        at = found + len(run)
    return True


def test_the_docs_show_sessions():
    names = [name for name, _ in sessions()]
    assert names.count("user-guide.md") >= 3
    assert {"workload-format.md", "trace-tools.md", "timing-model.md"} <= set(names)


def test_the_comparison_accepts_only_host_seconds_as_different():
    assert words_in_order(["[1/4 0.0s] relu#0"], "[1/4 0.3s] relu#0")
    assert not words_in_order(["[1/4 0.0s] relu#0"], "[2/4 0.0s] relu#0")
    assert not words_in_order(["984 cycles"], "985 cycles")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    directory = tmp_path_factory.mktemp("docs")
    (directory / "examples").symlink_to(ROOT / "examples")
    (directory / "tmp").mkdir()
    arch = json.loads(subprocess.run([cli(), "arch", "show", "sw26010"], check=True, capture_output=True,
                                     text=True).stdout)
    arch["dma"]["timing"]["bytes_per_cycle"] = 0
    (directory / "my-arch.json").write_text(json.dumps(arch))
    return directory


def cli():
    return str(Path(cli_path()).resolve())


@pytest.mark.parametrize("doc,steps", sessions(), ids=[f"{d}: {s[0][0]}" for d, s in sessions()])
def test_doc_session(scratch, doc, steps):
    for command, shown, status in steps:
        local = [line.replace(" /tmp/", f" {scratch}/tmp/") for line in [command] + shown]
        args = local[0].split()
        done = subprocess.run([cli()] + args[1:], cwd=scratch, capture_output=True, text=True, timeout=240)
        printed = done.stdout + done.stderr
        assert done.returncode == status, f"{doc}: {command}\n{printed[-3000:]}"
        # A terminal interleaves the two streams; piped, stdout comes at exit. The block shows one of the orders.
        assert words_in_order(local[1:], printed) or words_in_order(local[1:], done.stderr + done.stdout), (
            f"{doc}: {command}: shown\n" + "\n".join(local[1:]) + "\n\nprinted\n" + printed)
