#!/usr/bin/env python3
"""The compiler's layers include only downwards (compiler/meson.build):

  support, tables  <  frontend  <  middle  <  backend  <  import  <  driver

and the AST and the IR stay backend-neutral: frontend/ and middle/ name no
plan type (the backend maps their enums to the plan's); the frontend may take
the plan format's limits (plan/format.h), as the tables take its
architecture constants, and the vocabulary tables the launcher shares
(plan/controls.def for the domains, plan/namespaces.h for the namespaces,
which the middle reads too where the view implies namespaces; and
plan/host_pattern.h, the one definition of a host pattern, which the
frontend checks, the middle meets and the launcher's broker matches), which
hold names, not plan types. Fails naming each include that breaks a rule.

usage: check_layers.py [SOURCE_ROOT]   (default: AASM_SOURCE_ROOT or the checkout)
"""
import os
import re
import sys

# Per layer: the include roots (or exact headers) it may use.
ALLOWED = {
    "support": {"support"},
    "tables": {"tables", "plan/format.h"},
    "frontend": {"frontend", "support", "tables", "crypto", "kernel", "plan/format.h", "plan/controls.def",
                 "plan/namespaces.h", "plan/host_pattern.h"},
    "middle": {"middle", "frontend", "support", "tables", "crypto", "plan/namespaces.h", "plan/host_pattern.h"},
    # aasm_version.h: meson's project version, configured (runtime/base/version.h.in), for compiler.version;
    # base/path_tree.h: when a path lies in a tree, decided once for the view's lowering and the launcher.
    "backend": {"backend", "middle", "frontend", "support", "tables", "crypto", "kernel", "plan", "aasm_version.h",
                "base/path_tree.h"},
    # import/: other sandboxes' policies (srt settings, OCI/moby profiles) read into the AST; it checks
    # its output with the middle's and backend's arithmetic (an exported call's regions), so it sits
    # above them, below the driver.
    "import": {"import", "backend", "middle", "frontend", "support", "tables", "crypto", "kernel", "plan",
               "base/canonical_json.h", "base/path_tree.h"},
    "driver": None,  # the top: anything
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def allowed(layer, header):
    rules = ALLOWED[layer]
    return rules is None or header in rules or header.split("/", 1)[0] in rules


def main():
    root = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("AASM_SOURCE_ROOT")
            or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    compiler = os.path.join(root, "compiler")
    faults, checked = [], 0
    for layer in sorted(os.listdir(compiler)):
        directory = os.path.join(compiler, layer)
        if not os.path.isdir(directory):
            continue
        if layer not in ALLOWED:
            faults.append(f"compiler/{layer}/: a directory this check does not know; give it a place in ALLOWED")
            continue
        for name in sorted(os.listdir(directory)):
            if not name.endswith((".h", ".cpp")):
                continue
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                for header in INCLUDE.findall(f.read()):
                    checked += 1
                    if not allowed(layer, header):
                        faults.append(f"compiler/{layer}/{name} includes \"{header}\", which {layer}/ may not use")
    for fault in faults:
        print(fault)
    if checked == 0:
        print("no include found under", compiler)
        return 1
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
