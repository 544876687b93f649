#!/usr/bin/env python3
"""docs/threat-model.md against the test suites.

Every row of the threat model's tables must name, in its last column, at
least one test that attacks the claim, and every name given in backquotes
there must be a TEST_CASE of tests/ (a name ending in `…` is a prefix), or a
fuzzer of tests/fuzz. A renamed or deleted test makes this fail, so the
document cannot keep claiming an attack nobody runs.
"""
import glob
import os
import re
import sys

ROOT = os.environ.get("AASM_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "threat-model.md")


def test_names():
    names = set()
    for path in glob.glob(os.path.join(ROOT, "tests", "**", "*.cpp"), recursive=True):
        with open(path, encoding="utf-8") as f:
            names.update(re.findall(r'TEST_CASE\("((?:[^"\\]|\\.)*)"', f.read()))
    fuzzers = {os.path.basename(p)[:-len("_fuzz.cpp")].replace("_", "-")
               for p in glob.glob(os.path.join(ROOT, "tests", "fuzz", "*_fuzz.cpp"))}
    return {n.replace('\\"', '"') for n in names}, fuzzers


def cells(line):
    # Split a markdown table row on | outside backquotes; \| is a literal bar.
    out, cell, quoted, i = [], "", False, 0
    body = line.strip()[1:-1]
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cell += "|"
            i += 2
            continue
        if c == "`":
            quoted = not quoted
        if c == "|" and not quoted:
            out.append(cell.strip())
            cell = ""
        else:
            cell += c
        i += 1
    out.append(cell.strip())
    return out


def main():
    names, fuzzers = test_names()
    errors, rows = [], 0
    with open(DOC, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        if not line.startswith("|") or line.startswith("|---") or line.startswith("| threat |"):
            continue
        rows += 1
        attacked_by = cells(line)[-1]
        quoted = re.findall(r"`([^`]+)`", attacked_by)
        if not quoted:
            errors.append(f"{DOC}:{number}: the row names no test that attacks it")
        for name in quoted:
            if name in names:
                continue
            if name.endswith("…") and any(n.startswith(name[:-1].rstrip()) for n in names):
                continue
            if name in fuzzers:
                continue
            errors.append(f"{DOC}:{number}: no test is named `{name}`")
    if rows == 0:
        errors.append(f"{DOC}: no table rows found")
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
