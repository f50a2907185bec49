"""ldmsim.stream and ldmsim.stream_sweep: the STREAM-over-DMA runs of `ldmsim bench stream`, from Python, with the
same simulated cycles and bandwidths as the CLI, and bad configurations named."""
import csv
import io
import re

import pytest

import ldmsim
from conftest import run_cli


@pytest.mark.parametrize("kernel,mode", [("copy", "pe"), ("triad", "pe"), ("add", "bcast")])
def test_one_run_matches_the_cli(kernel, mode):
    result = ldmsim.stream("sw26010", kernel=kernel, mode=mode, block_bytes=512, rounds=8, verify=True)
    cli = run_cli("bench", "stream", "--arch", "sw26010", "--kernel", kernel, "--mode", mode, "--block-bytes", 512,
                  "--rounds", 8).stdout
    cycles = int(re.search(r"simulated: (\d+) cycles", cli).group(1))
    assert result["cycles"] == cycles > 0
    assert result["rounds"] == 8 and result["cores"] == 64 and result["request_bytes"] == 512
    assert f"{kernel}: {result['MBps']:.1f} MB/s" in cli
    assert result["dma_bytes"] > 0 and result["seconds"] > 0


def test_the_sweep_matches_the_cli_and_takes_an_arch_dict():
    rows = ldmsim.stream_sweep(ldmsim.arch("sw26010"))
    cli = list(csv.DictReader(io.StringIO(run_cli("bench", "stream", "--sweep", "--format", "csv").stdout)))
    assert [r["block_bytes"] for r in rows] == [int(r["block_bytes"]) for r in cli]
    for row, line in zip(rows, cli):
        assert f"{row['MBps']:.1f}" == line["simulated_MBps"]
        assert f"{row['measured_MBps']:.1f}" == line["measured_MBps"]
        assert row["relative_error"] == pytest.approx(row["MBps"] / row["measured_MBps"] - 1)
    # A slower DMA engine in the dict gives a slower sweep.
    slow = ldmsim.arch("sw26010")
    slow["dma"]["timing"]["bytes_per_cycle"] /= 2
    assert ldmsim.stream_sweep(slow)[-1]["MBps"] < rows[-1]["MBps"]


def test_bad_configurations_are_named(tmp_path):
    with pytest.raises(ldmsim.ConfigError, match="kernel must be"):
        ldmsim.stream(kernel="swap")
    with pytest.raises(ldmsim.ConfigError, match="mode must be"):
        ldmsim.stream(mode="column")
    with pytest.raises(ldmsim.ConfigError, match="cores"):
        ldmsim.stream(cores=-1)
    with pytest.raises(ldmsim.ConfigError):
        ldmsim.stream(block_bytes=6)  # not a multiple of 8
    with pytest.raises(TypeError, match="arch"):
        ldmsim.stream(42)
    bad = tmp_path / "bad.csv"
    bad.write_text("block_bytes,copy_MBps\n64,fast\n")
    with pytest.raises(ldmsim.ConfigError, match="bad.csv"):
        ldmsim.stream_sweep(data=bad)
