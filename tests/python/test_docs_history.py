"""The user docs describe what is, not how it came to be: no issue numbers and no session history in README.md and
docs/*.md. docs/benchmarks.md is the exception: a log of measurements, each tied to the commit it was taken at."""
import re

import pytest

from conftest import ROOT

HISTORY = re.compile(r"\bissues? ?#?\d+|\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
                     r"twelfth|\d+(st|nd|rd|th)|earlier|previous|last|this) (session|round)\b|\bsession \d+\b",
                     re.IGNORECASE)


def user_docs():
    return [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "benchmarks.md")


def test_the_pattern_finds_history():
    for text in ("as issue 46 asked", "fixed in the twelfth session", "see issue #12", "since session 3"):
        assert HISTORY.search(text), text
    assert not HISTORY.search("a Session's runs reuse its machine; the issue queue of a core")


@pytest.mark.parametrize("doc", user_docs(), ids=lambda p: p.name)
def test_no_development_history(doc):
    hits = [f"{doc.name}:{n}: {line.strip()}" for n, line in enumerate(doc.read_text().splitlines(), 1)
            if HISTORY.search(line)]
    assert not hits, "\n".join(hits)
