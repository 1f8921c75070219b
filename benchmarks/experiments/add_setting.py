"""Record a new estimator parameter, at its default, in committed rows' settings.

Rows of the zoo (and of studies built on it) store the resolved settings of
``CREATOR(d, **params)`` as a JSON string, and are read only when that string
equals the current one. A new parameter whose default leaves every fit
unchanged (its code path is skipped) makes every such row look stale; this
adds ``NAME: VALUE`` to the stored settings of rows that lack it, so the rows
are read again without refitting. Use only for a parameter whose default is
the code path those rows ran. Usage::

    python add_setting.py NAME JSON_VALUE FILE.jsonl [FILE.jsonl ...]
"""
import json
import sys


def main() -> None:
    name, value, paths = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
    for path in paths:
        lines = open(path).read().splitlines()
        out, changed = [], 0
        for line in lines:
            row = json.loads(line) if line.strip() else None
            if isinstance(row, dict) and isinstance(row.get("settings"), str):
                settings = json.loads(row["settings"])
                if name not in settings:
                    settings[name] = value
                    row["settings"] = json.dumps(settings, sort_keys=True)
                    line = json.dumps(row)
                    changed += 1
            out.append(line)
        with open(path, "w") as fh:
            fh.write("\n".join(out) + "\n")
        print(f"{path}: {changed} of {len(lines)} rows")


if __name__ == "__main__":
    main()
