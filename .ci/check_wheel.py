"""Check that a built wheel holds every module of the source tree.

Usage: ``python .ci/check_wheel.py dist/creator_plugin-*.whl``. The source
tree is ``creator_plugin/`` plus ``adapters/``, which installs as
``creator_plugin/adapters/`` (see setup.py). Exits 1 listing what is missing.
"""

import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = {"creator_plugin": "creator_plugin", "adapters": "creator_plugin/adapters"}


def expected() -> set[str]:
    out = set()
    for src, dest in TREES.items():
        for path in (ROOT / src).rglob("*.py"):
            if "__pycache__" not in path.parts:
                out.add(f"{dest}/{path.relative_to(ROOT / src).as_posix()}")
    return out


def main(wheel: str) -> int:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(expected() - names)
    if missing:
        print(f"{wheel} lacks {len(missing)} source modules:", *missing, sep="\n  ")
        return 1
    print(f"{wheel}: all {len(expected())} source modules present")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
