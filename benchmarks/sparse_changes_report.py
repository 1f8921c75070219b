"""Tables of the sparse-changes page from the rows of ``benchmarks/peers_field.py``.

Per generator: CREATOR's mean SHD / MCC, the best peer (the lowest mean SHD
among the other methods and variants, a failed fit scored as the empty graph
with MCC 0) with its MCC, and whether CREATOR meets the target (mean SHD at most
the best peer's + 0.5, MCC at least the best peer's - 0.02); how many of
CREATOR's fits took the route and how many were refused; and
``changed_mechanisms_`` against the generators' targets after the latents'
matching (cells right among the non-reference cells, targets found).

Usage::

    python benchmarks/sparse_changes_report.py benchmarks/results/sparse_changes/peers_300000.csv
"""

from __future__ import annotations

import json
import sys

import pandas as pd


def _info(text) -> dict:
    return json.loads(text) if isinstance(text, str) and text else {}


def bar_table(df: pd.DataFrame) -> str:
    lines = ["| generator | seeds | CREATOR SHD / MCC | best peer | its SHD / MCC | "
             "SHD target | MCC target | route taken | refused |", "|---" * 9 + "|"]
    for gen in dict.fromkeys(df.generator):
        sub = df[df.generator == gen]
        means = sub.groupby("method")[["shd", "mcc"]].mean()
        peers = means.drop(index="CREATOR")
        best = peers.shd.idxmin()
        cr = sub[sub.method == "CREATOR"]
        ours = means.loc["CREATOR"]
        taken = sum(_info(i).get("route") == "sparse" for i in cr["info"])
        shd_ok = ours.shd <= peers.shd[best] + 0.5
        mcc_ok = ours.mcc >= peers.mcc[best] - 0.02
        lines.append(
            f"| `{gen}` | {len(cr)} | {ours.shd:.2f} / {ours.mcc:.3f} | {best} | "
            f"{peers.shd[best]:.2f} / {peers.mcc[best]:.3f} | {'met' if shd_ok else 'not met'}"
            f" | {'met' if mcc_ok else 'not met'} | {taken} | {int((cr.status != 'ok').sum())} |")
    return "\n".join(lines)


def change_table(df: pd.DataFrame) -> str:
    lines = ["| generator | fits | cells right | targets found |", "|---|---|---|---|"]
    cr = df[(df.method == "CREATOR") & (df.status == "ok")]
    for gen in dict.fromkeys(cr.generator):
        acc = [_info(i).get("change_accuracy") for i in cr[cr.generator == gen]["info"]]
        acc = [a for a in acc if a]
        if not acc:
            continue
        right, cells = sum(a["cells_right"] for a in acc), sum(a["cells"] for a in acc)
        found, targets = sum(a["targets_found"] for a in acc), sum(a["targets"] for a in acc)
        lines.append(f"| `{gen}` | {len(acc)} | {right}/{cells} ({right / cells:.1%}) | "
                     f"{found}/{targets} ({found / max(targets, 1):.1%}) |")
    return "\n".join(lines)


def main(argv=None) -> None:
    path = (argv or sys.argv[1:])[0]
    df = pd.read_csv(path)
    print(bar_table(df), "", change_table(df), sep="\n")


if __name__ == "__main__":
    main()
