"""Summary of ``track_search_trial.py`` rows: mean SHD without and with, per family.

Usage::

    python track_search_summary.py ROWS.jsonl [...]
"""
import json, sys
import numpy as np
from collections import defaultdict
for path in sys.argv[1:]:
    rows = [json.loads(l) for l in open(path)]
    g = defaultdict(list)
    for r in rows: g[r['family']].append(r)
    print(path)
    for fam, rs in g.items():
        b = np.array([r['base']['shd'] for r in rs]); t = np.array([r['track']['shd'] for r in rs])
        ob = np.mean([r['base']['order'] for r in rs]); ot = np.mean([r['track']['order'] for r in rs])
        cb = sum(r['base']['cpu'] for r in rs); ct = sum(r['track']['cpu'] for r in rs)
        ch = [(r['seed'], r['base']['shd'], r['track']['shd']) for r in rs if r['base']['shd'] != r['track']['shd']]
        print(f"  {fam:15s} n={len(rs)} shd {b.mean():.3f} -> {t.mean():.3f} better/worse {(t<b).sum()}/{(t>b).sum()} order {ob:.2f}->{ot:.2f} cpu x{ct/cb:.2f} changed {ch[:12]}")
