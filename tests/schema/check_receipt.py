#!/usr/bin/env python3
"""Validates receipts against schemas/receipt.schema.json (draft-07), and
re-derives each one's seal independently of the launcher's writer: the
body's canonical text (docs/receipts.md#the-seal) is what Python's json
module writes with sorted keys, no whitespace and no ASCII escaping, and
the file is that of the whole receipt and a newline.

usage: check_receipt.py RECEIPT...   exit 0 when every one is valid; each
error is printed as FILE: PLACE: MESSAGE. The kernel tests run it on the
receipts of real launches (tests/kernel/receipt_test.cpp).

Environment: AASM_SOURCE_ROOT (the repository; default: this checkout).
"""
import hashlib
import json
import os
import sys

import jsonschema

ROOT = os.environ.get("AASM_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def main(paths):
    with open(os.path.join(ROOT, "schemas", "receipt.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft7Validator(schema)
    failed = False
    for path in paths:
        with open(path, "rb") as f:
            raw = f.read()
        receipt = json.loads(raw)
        if canonical(receipt) + b"\n" != raw:
            print(f"{path}: (root): the file is not the receipt's canonical text")
            failed = True
        body = {name: value for name, value in receipt.items() if name != "seal"}
        if hashlib.sha256(canonical(body)).hexdigest() != receipt.get("seal", {}).get("sha256"):
            print(f"{path}: seal: not the SHA-256 of the body's canonical text")
            failed = True
        for error in sorted(validator.iter_errors(receipt), key=lambda e: list(e.absolute_path)):
            place = "/".join(str(p) for p in error.absolute_path) or "(root)"
            print(f"{path}: {place}: {error.message}")
            failed = True
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
