#!/usr/bin/env python3
"""Print per-column statistics of a CSV file as JSON."""
import csv
import json
import sys


def main(argv):
    if len(argv) != 2:
        print("usage: stats.py FILE.csv", file=sys.stderr)
        return 2
    with open(argv[1], newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        columns = {name: [] for name in reader.fieldnames or []}
        rows = 0
        for row in reader:
            rows += 1
            for name in columns:
                columns[name].append(row.get(name, ""))
    out = {"rows": rows, "columns": {}}
    for name, values in columns.items():
        try:
            nums = [float(v) for v in values]
        except ValueError:
            out["columns"][name] = {"numeric": False, "distinct": len(set(values))}
            continue
        out["columns"][name] = {
            "numeric": True,
            "min": min(nums) if nums else None,
            "max": max(nums) if nums else None,
            "mean": sum(nums) / len(nums) if nums else None,
        }
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
