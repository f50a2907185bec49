"""Arch presets as dicts: every preset, the same tree whether asked by name or listed, a changed dict checked and
completed, and bad values refused naming the JSON path."""
import copy
import json

import pytest

import ldmsim
from conftest import run_cli


def test_presets_are_the_cli_trees():
    presets = ldmsim.arch_presets()
    assert {"sw26010", "sw26010pro"} <= set(presets)
    for name, tree in presets.items():
        assert tree["name"] == name
        assert ldmsim.arch(name) == tree
    # The same resolved tree as `ldmsim arch show --json` prints.
    shown = json.loads(run_cli("arch", "show", "sw26010pro").stdout)
    assert shown == presets["sw26010pro"]


def test_a_changed_dict_is_checked_and_completed(tmp_path):
    tree = ldmsim.arch("sw26010")
    tree["clock_hz"] = 2.0e9
    del tree["core_groups"]["cores"]["node_barrier_cycles"]
    tree["core_groups"]["cores"]["barrier_cycles"] = 77
    resolved = ldmsim.arch(tree)
    assert resolved["clock_hz"] == 2.0e9
    assert resolved["core_groups"]["cores"]["node_barrier_cycles"] == 77  # filled in: barrier_cycles by default
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(tree))
    assert ldmsim.arch(path) == resolved


def test_bad_values_name_the_json_path():
    tree = copy.deepcopy(ldmsim.arch("sw26010"))
    tree["core_groups"]["cores"]["rows"] = 0
    with pytest.raises(ldmsim.ConfigError, match="core_groups.cores.rows") as error:
        ldmsim.arch(tree)
    assert isinstance(error.value, ValueError)
    timing = copy.deepcopy(ldmsim.arch("sw26010"))
    timing["dma"]["timing"]["bytes_per_cycle"] = -1  # checked by the timing model, as for a preset or a file
    with pytest.raises(ldmsim.ConfigError, match="bytes_per_cycle"):
        ldmsim.arch(timing)
    with pytest.raises(ldmsim.ConfigError, match="no-such-arch"):
        ldmsim.arch("no-such-arch")
    with pytest.raises(TypeError, match=r"arch\[\"name\"\]"):
        ldmsim.arch({"name": object()})
    with pytest.raises(ValueError, match="nested"):
        deep = []
        for _ in range(300):
            deep = [deep]
        ldmsim.arch({"name": deep})
