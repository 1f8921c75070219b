"""The README's code snippets run.

The ```python blocks under each tested heading of ``README.md`` are executed
in order in one namespace (they build on each other).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECTION = "Using CREATOR with causal-learn, DoWhy, networkx and pgmpy"
SECTIONS = [
    "Quick start", "Naming the latents", SECTION, "Before you trust a result",
    "How sure is the graph? Bootstrap",
]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _section(text: str, heading: str) -> str | None:
    """Text under the markdown heading ``heading`` up to the next heading of its level."""
    m = re.search(rf"^(#+)\s+{re.escape(heading)}\s*$", text, re.M)
    if m is None:
        return None
    level = len(m.group(1))
    rest = text[m.end():]
    nxt = re.search(rf"^#{{1,{level}}}\s", rest, re.M)
    return rest if nxt is None else rest[: nxt.start()]


def _sources() -> list[tuple[str, list[str]]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out = []
    for heading in SECTIONS:
        section = _section(text, heading)
        out.append((heading, FENCE.findall(section) if section is not None else []))
    return out


def test_adapter_section_is_documented():
    sources = dict(_sources())
    assert len(sources[SECTION]) >= 3
    assert len(sources["Quick start"]) >= 1


@pytest.mark.parametrize("name,blocks", _sources(), ids=[n for n, _ in _sources()])
def test_snippets_run(name, blocks, capsys):
    namespace: dict = {"__name__": "__readme__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # identifiability notices of small fits
        for i, code in enumerate(blocks):
            try:
                exec(compile(code, f"{name}[python block {i}]", "exec"), namespace)
            except Exception as exc:  # pragma: no cover - the message is the point
                pytest.fail(f"{name}, python block {i} raised {exc!r}:\n{code}")
    assert capsys.readouterr().out.strip()
