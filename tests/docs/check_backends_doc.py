#!/usr/bin/env python3
"""docs/backends.md's capability table says what `aasmc backends --json` says.

The table is prose over the one table (compiler/backend/backends.def): each
cell must begin with the row's `how` ("prevents", "observes", "cannot
express") and, where it prevents or observes, its support ("full",
"partial"); every control and every built backend has its row and column.
"""
import json
import os
import subprocess
import sys

root = os.environ["AASM_SOURCE_ROOT"]
report = json.loads(subprocess.run([os.environ["AASMC"], "backends", "--json"], check=True,
                                   capture_output=True, text=True).stdout)
built = [b for b in report["backends"] if b["built"]]
doc = open(os.path.join(root, "docs", "backends.md"), encoding="utf-8").read().splitlines()

header = next((i for i, line in enumerate(doc) if line.startswith("| control |")), None)
if header is None:
    sys.exit("docs/backends.md: no capability table (a line starting '| control |')")
columns = [c.strip() for c in doc[header].strip("|").split("|")][1:]
failures = []
if columns != [b["name"] for b in built]:
    failures.append(f"columns {columns} are not the built backends {[b['name'] for b in built]}")
rows = {}
for line in doc[header + 2:]:
    if not line.startswith("|"):
        break
    cells = [c.strip() for c in line.strip("|").split("|")]
    rows[cells[0].strip("`")] = cells[1:]
for backend_index, backend in enumerate(built):
    for entry in backend["controls"]:
        control = entry["control"]
        if control not in rows:
            failures.append(f"no row for {control}")
            continue
        cell = rows[control][backend_index] if backend_index < len(rows[control]) else ""
        expected = entry["how"] if entry["how"] == "cannot express" else f"{entry['how']}, {entry['support']}"
        if not cell.startswith(expected):
            failures.append(f"{control} / {backend['name']}: the doc says '{cell}', the table '{expected}'")
extra = set(rows) - {e["control"] for e in built[0]["controls"]}
failures += [f"a row for {name}, which is no control" for name in sorted(extra)]
for failure in failures:
    print("FAIL: docs/backends.md:", failure)
print(f"{len(built)} backends x {len(rows)} controls checked, {len(failures)} failures")
sys.exit(1 if failures else 0)
