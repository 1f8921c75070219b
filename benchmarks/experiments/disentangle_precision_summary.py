"""Summary of disentangle_precision.py rows.

Per variant: mean SHD, LocR^2, seeds better and worse than the default.
"""
import json
import sys
from collections import defaultdict

rows = [json.loads(line) for f in sys.argv[1:] for line in open(f)]
by = defaultdict(dict)
for r in rows:
    by[r["variant"]][r["seed"]] = r
base = by["default"]
print(f"{'variant':22s} {'n':>3s} {'SHD':>6s} {'LocR2':>7s} {'def SHD':>7s} "
      f"{'better':>6s} {'worse':>5s}  changed seeds")
for v, recs in by.items():
    seeds = sorted(recs)
    shd = sum(recs[s]["shd"] for s in seeds) / len(seeds)
    loc = sum(recs[s]["locr2"] for s in seeds) / len(seeds)
    dshd = sum(base[s]["shd"] for s in seeds if s in base) / len(seeds)
    better = [s for s in seeds if s in base and recs[s]["shd"] < base[s]["shd"]]
    worse = [s for s in seeds if s in base and recs[s]["shd"] > base[s]["shd"]]
    ch = " ".join(f"{s}:{base[s]['shd']}->{recs[s]['shd']}" for s in seeds
                  if s in base and recs[s]["shd"] != base[s]["shd"])
    print(f"{v:22s} {len(seeds):3d} {shd:6.2f} {loc:7.4f} {dshd:7.2f} "
          f"{len(better):6d} {len(worse):5d}  {ch}")
