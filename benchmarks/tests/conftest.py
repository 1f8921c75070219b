"""The study files are scripts in ``benchmarks/``: their tests import them from that folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
