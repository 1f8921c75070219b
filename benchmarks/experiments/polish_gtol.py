"""The polish's gradient tolerance: tuning sweep and fresh-seed evaluation.

The ordering step's final polish (:func:`creator_plugin.ordering.polish_directions`)
stops its BFGS ascent once the largest gradient entry of its contrast (scaled
to 1 at the start) is below ``ordering.POLISH_GTOL``. This script fits the same
data under several tolerances (set on that module constant, which the polish
reads at call time) and writes one JSON line per fit: SHD, correct order,
LocR² (after :func:`creator_plugin.metrics.evaluate`'s matching), CPU seconds
and whether the verdict raised an issue.

Workloads: ``zoo:SIMULATOR:FAMILY`` (d = 5, K = 5, n = 1000, a zoo family from
``benchmarks/zoo.py``'s simulators), ``d10`` (``simulate(10, 10, 2000)``),
``d20`` (``simulate(20, 20, 5000, edge_prob=0.2)``), ``d30``
(``simulate(30, 30, 5000, edge_prob=0.1)``).

``tune`` reads only tuning seeds (0-99) and refuses others; ``evaluate``
reads only seeds from 10000 on. The rule frozen from the tuning rows and the
evaluation seeds are recorded in ``benchmarks/LOG.md`` ("The polish's
gradient tolerance").

Usage::

    python benchmarks/experiments/polish_gtol.py tune --workloads d10 --seeds 0-19 \\
        --variants '[1e-6, 3e-6, 1e-5]' --out benchmarks/results/polish_gtol/tuning_d10.jsonl
    python benchmarks/experiments/polish_gtol.py summary \\
        benchmarks/results/polish_gtol/tuning_d10.jsonl
"""

from __future__ import annotations

import sys
from pathlib import Path

import creator_plugin.ordering as ordering

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the same workloads, seed ranges, fit loop and summary as the descent's study
from descent_stop import sweep, sweep_cli, sweep_summary  # noqa: E402

#: The tolerance before.
OLD = 1e-6
FIELDS = ("gtol",)


def _apply(variant: tuple) -> None:
    (ordering.POLISH_GTOL,) = variant


def run(workloads: list[str], seeds: list[int], variants: list[float], out: Path) -> None:
    sweep(workloads, seeds, [(float(v),) for v in variants], out, fields=FIELDS, apply=_apply)


def summary(path: Path) -> str:
    """Per workload group and variant: mean SHD, correct order, changed fits, CPU ratio."""
    return sweep_summary(path, fields=FIELDS, old=(OLD,), order=lambda v: v,
                         label="old tolerance")


def main(argv: list[str] | None = None) -> None:
    sweep_cli(argv, description=__doc__.splitlines()[0], default_variants=[OLD],
              variants_help="JSON list of tolerances", parse=float, run=run, summary=summary)


if __name__ == "__main__":
    main()
