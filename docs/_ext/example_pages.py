"""Bring the example pages up to date with the scripts: ``python docs/_ext/example_pages.py``.

Each ``docs/examples/<name>.md`` shows ``examples/<name>.py`` whole, so the code
reads the same on the site and on GitHub (tests/test_docs_site.py checks they
are equal). This rewrites the python block of every page from its script and
writes a page, listed in the examples index, for a script that has none (its
docstring's first line is the description; edit it as needed).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "examples"
BLOCK = re.compile(r"^```python\n.*?^```$", re.S | re.M)


def new_page(script: Path) -> str:
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or script.stem
    return (f"# {script.stem}\n\n{doc.splitlines()[0].strip()}\n\n"
            f"Run it from a checkout with `python examples/{script.name}`; the code below is "
            "the\nscript itself.\n\n"
            f"<!-- not-run: the script examples/{script.name}, which tests/test_examples.py "
            "runs -->\n```python\n```\n")


def main() -> int:
    index = PAGES / "index.md"
    listed = index.read_text(encoding="utf-8")
    for script in sorted((ROOT / "examples").glob("*.py")):
        page = PAGES / f"{script.stem}.md"
        text = page.read_text(encoding="utf-8") if page.exists() else new_page(script)
        if len(BLOCK.findall(text)) != 1:
            print(f"{page}: expected one python block", file=sys.stderr)
            return 1
        block = f"```python\n{script.read_text(encoding='utf-8')}```"
        updated = BLOCK.sub(lambda _, block=block: block, text)
        if updated != text or not page.exists():
            page.write_text(updated, encoding="utf-8")
            print(f"wrote {page.relative_to(ROOT)}")
        if not re.search(rf"^{re.escape(script.stem)}$", listed, re.M):
            listed = re.sub(r"\n```\s*$", f"\n{script.stem}\n```\n", listed, count=1)
            index.write_text(listed, encoding="utf-8")
            print(f"listed {script.stem} in {index.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
