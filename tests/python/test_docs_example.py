"""The complete example of docs/python.md runs as printed: it tabulates the layers and writes a PNG roofline."""
import os
import subprocess
import sys
from pathlib import Path

import ldmsim


def doc_example(root):
    text = (root / "docs" / "python.md").read_text()
    section = text.index("## A complete example")
    begin = text.index("```python\n", section) + len("```python\n")
    return text[begin:text.index("```", begin)]


def test_the_complete_example_runs(root, tmp_path):
    (tmp_path / "examples").symlink_to(root / "examples")  # the example runs from the repository root
    package_root = str(Path(ldmsim.__file__).resolve().parents[1])  # the module this test imported, from anywhere
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", doc_example(root)], cwd=tmp_path, capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "cycles" in done.stdout and "conv" in done.stdout
    png = (tmp_path / "roofline.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10000
