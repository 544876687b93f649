#!/usr/bin/env python3
"""One table per vocabulary (docs/architecture.md, "Where each vocabulary lives").

A vocabulary is a closed set of names more than one layer must agree on: the
namespaces, the Landlock rights and the ABIs that brought them, the policy's
domains and the controls a launch reports, the degrade wording, the outcome
levels and their bases, the diagnostic ids. Each is written once, in an
X-macro table that the compiler and the launcher both include; this check
reads the names from those tables and fails on any of them written as a
string literal anywhere else in compiler/, runtime/ or launcher/, naming
file:line. It also checks that docs/plan-format.md's table of Landlock rights
is the one of runtime/kernel/landlock_rights.def.

A literal counts as a name when, trimmed of spaces and punctuation at its
ends, it is the name (`", required"` is `required`); a name that cannot be an
English word by accident (one with `_` or a space, a diagnostic id) counts
anywhere inside a literal too. Words that several vocabularies share with
others (`mount` is a syscall, `pid` an argument name, `ipc` a policy key) are
allowed where ALLOWED says why.

usage: check_vocabularies.py [SOURCE_ROOT]   (default: AASM_SOURCE_ROOT or the checkout)
"""
import fnmatch
import json
import os
import re
import sys

# name, its table (relative to the root), the X-macro lines that hold its names,
# whether a distinctive name counts inside a longer literal too.
VOCABULARIES = [
    ("namespaces", "runtime/plan/namespaces.def", r'AASM_NAMESPACE\(\w+,\s*"([^"]+)"', True),
    ("domains and controls", "runtime/plan/controls.def",
     r'AASM_(?:DOMAIN|CONTROL|DOMAIN_AND_CONTROL)\(\w+,\s*"([^"]+)"', True),
    ("degrade wording", "runtime/plan/controls.def", r'AASM_PLANNED\(\w+,\s*"([^"]+)"', True),
    # "not enforced" is English too: only a literal that is the level counts.
    ("outcome levels and bases", "runtime/plan/controls.def", r'AASM_(?:LEVEL|BASIS)\(\w+,\s*"([^"]+)"', False),
    ("Landlock rights", "runtime/kernel/landlock_rights.def",
     r'AASM_LANDLOCK_(?:FS|NET|SCOPE)\(\w+,\s*"([^"]+)"', True),
    ("Landlock ABIs' kernel releases", "runtime/kernel/landlock_rights.def", r'AASM_LANDLOCK_ABI\(\d+,\s*"([^"]+)"',
     False),
    ("diagnostic ids", "compiler/support/diagnostics.def", r'AASM_DIAGNOSTIC\(\w+,\s*"(AASM\d{4})"', True),
]

SOURCE_DIRS = ("compiler", "runtime", "launcher")
SOURCE_SUFFIXES = (".cpp", ".h", ".def")

# (file, name): why that file's literals naming it do not restate a table.
# Each is a word another vocabulary owns by coincidence. A file may be a
# glob, for files that are being split.
ALLOWED = {
    # The policy language's keys, which the schema and the parser own:
    # spec.capabilities, spec.ipc, filesystem.execute, a rule's syscall,
    # isolation.namespaces.
    ("compiler/frontend/parse_policy.cpp", "capabilities"): "the key spec.capabilities",
    ("compiler/frontend/parse_policy.cpp", "ipc"): "the key spec.ipc",
    ("compiler/frontend/parse_policy.cpp", "execute"): "the key spec.filesystem.execute",
    ("compiler/frontend/parse_policy.cpp", "syscall"): "the key syscall: of a syscall rule",
    ("compiler/frontend/parse_policy.cpp", "namespaces"): "the key spec.isolation.namespaces",
    # aasmc import writes a policy document: its keys.
    ("compiler/import/import_srt.cpp", "ipc"): "the key spec.ipc, in the document the import writes",
    ("compiler/middle/build_ir.cpp", "execute"): "the filesystem verb execute, a policy key",
    ("compiler/frontend/parse_policy.cpp", "filesystem_view"): "the key spec.isolation.filesystem_view",
    ("compiler/backend/view_lowering.cpp", "mount"): "the @mount group the view needs refused",
    ("compiler/backend/backends.cpp", "partial"): "a backend's support (full, partial, none: support_name), not an outcome level",
    ("compiler/backend/oci_export.cpp", "capabilities"): "the key capabilities of a Kubernetes securityContext",
    # Syscalls, syscall groups and syscall arguments: the kernel's names.
    ("compiler/tables/syscall_groups.cpp", "mount"): "the mount(2) syscall, and the @mount group",
    ("compiler/tables/syscall_groups.cpp", "truncate"): "the truncate(2) syscall",
    ("compiler/tables/syscall_groups.cpp", "signal"): "the @signal group",
    ("compiler/tables/syscall_groups.cpp", "ipc"): "the @ipc group",
    ("compiler/tables/syscall_groups.cpp", "namespaces"): "the @namespaces group",
    ("compiler/middle/resolve_syscalls.cpp", "namespaces"): "the @namespaces group, a safe default",
    ("compiler/tables/syscall_signatures.cpp", "mount"): "the mount(2) syscall",
    ("compiler/tables/syscall_signatures.cpp", "pid"): "the pid argument of kill(2), pidfd_open(2), ptrace(2), ...",
    ("compiler/tables/syscall_signatures.cpp", "resource"): "the resource argument of prlimit64(2)",
    ("runtime/kernel/raw_syscall.h", "syscall"): "the x86-64 syscall instruction",
    ("runtime/kernel/mount_view*.cpp", "mount"): "the mount(2) step of the filesystem view, in its messages",
    # The fields of the kernel's audit record of a seccomp kill (type=1326).
    ("runtime/kernel/kernel_log.cpp", "pid"): "the pid= field of an audit record",
    ("runtime/kernel/kernel_log.cpp", "syscall"): "the syscall= field of an audit record",
    # The receipt's outcome of a command a signal killed, and its command.signal member.
    ("runtime/supervisor/receipt.h", "signal"): "the receipt's outcome `signal` (docs/receipts.md#outcomes)",
    ("runtime/supervisor/receipt.cpp", "signal"): "the receipt's command.signal member",
    # Prose that says what a number is.
    ("runtime/supervisor/cgroup*.cpp", "pid"): "a process id in a cgroup's leftover list",
    ("runtime/supervisor/explain_tracer.cpp", "truncate"): "the truncate(2) syscall, a row of the --explain tracer's table",
    ("runtime/supervisor/explain_tracer.cpp", "pid"): "the process id a refused signal was sent to",
    ("runtime/supervisor/landlock_audit.cpp", "pid"): "the pid= field of Landlock's audit records (the kernel's)",
    ("runtime/supervisor/landlock_audit.cpp", "net"): "the net. prefix of an audit record's blockers (the kernel's)",
    # aasmc show's label of the plan's namespaces field, followed by their names.
    ("compiler/driver/show.cpp", "namespaces"): "a label of the plan's field, not the report's control",
    # The two tables that share the word ipc: a namespace and a domain.
    ("runtime/plan/controls.def", "ipc"): "the ipc domain, in its own table",
    ("runtime/plan/namespaces.def", "ipc"): "the ipc namespace, in its own table",
    # The denial report (issue 14): policy keys and syscall-group names it
    # writes into the plan's provenance and the receipt.
    ("compiler/backend/provenance.cpp", "mount"): "the syscall group @mount, a sensitive deny set",
    ("compiler/backend/provenance.cpp", "execute"): "the key spec.filesystem.execute",
    ("runtime/supervisor/denial_report.cpp", "ipc"): "the key spec.ipc",
    ("runtime/supervisor/receipt.cpp", "syscall"): "the receipt key syscall of a denial (docs/receipts.md)",
    # Landlock's own kinds of rights: LANDLOCK_ACCESS_FS_*, LANDLOCK_ACCESS_NET_*, LANDLOCK_SCOPE_*.
    ("runtime/kernel/landlock_rights_text.cpp", "net"): "the label of Landlock's network rights (fs ...; net ...)",
    ("compiler/driver/show.cpp", "net"): "the key of Landlock's network rights in show --json",
    ("launcher/doctor.cpp", "net"): "the key of Landlock's network rights in doctor --json",
    ("compiler/driver/inspect.cpp", "syscall"): "the key syscall of a group's member (schemas/groups.schema.json)",
    ("compiler/driver/suggest.cpp", "syscall"): "the receipt key syscall of a denial, read back (docs/receipts.md)",
    ("compiler/frontend/yaml_edit.cpp", "syscall"): "the key syscall: of a syscall rule, matched in the text",
}


def allowed(relative, name):
    return next((key for key in ALLOWED if fnmatch.fnmatch(relative, key[0]) and key[1] == name), None)


def literals(text):
    """(line, value) of every string literal of C++ source, comments and
    #include lines left out; raw strings read as written, escapes decoded."""
    out, i, line, n = [], 0, 1, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if at_line_start and c == "#":
            end = text.find("\n", i)
            directive = text[i:end if end >= 0 else n]
            if re.match(r"#\s*include\b", directive):
                i = end if end >= 0 else n
                continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^(\s]*)\(', text[i:i + 24])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            start = i + raw.end()
            end = text.find(")" + raw.group(1) + '"', start)
            end = n if end < 0 else end
            out.append((line, text[start:end]))
            line += text.count("\n", i, end)
            i = end + len(raw.group(1)) + 2
            continue
        if c == "'" and re.search(r"(?<![\w.])\d[\w.']*$", text[max(0, i - 32):i]):
            i += 1  # a digit separator: 1'000
            continue
        if c == "'":
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == '"':
            j, value = i + 1, []
            while j < n and text[j] != '"' and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n:
                    value.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}.get(text[j + 1], ""))
                    j += 2
                else:
                    value.append(text[j])
                    j += 1
            out.append((line, "".join(value)))
            i = j + 1
            continue
        i += 1
    return out


def distinctive(name):
    return "_" in name or " " in name or re.fullmatch(r"AASM\d{4}", name) is not None


def names_in(literal, names, inside):
    trimmed = literal.strip(" \t\n,.;:()")
    found = {trimmed} & names
    if inside:
        for name in names:
            if distinctive(name) and re.search(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", literal):
                found.add(name)
    return found


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check_plan_format_rights(root, rights_def, faults):
    """docs/plan-format.md's table of rights (bit, name, ABI) is the .def's."""
    table = {}
    for kind, name, bit, abi in re.findall(r'AASM_LANDLOCK_(FS|NET|SCOPE)\(\w+,\s*"([^"]+)",\s*(\d+),\s*(\d+)\)',
                                           rights_def):
        table.setdefault(kind, []).append((int(bit), name, int(abi)))
    doc = read(os.path.join(root, "docs", "plan-format.md"))
    documented = {"FS": [], "NET": [], "SCOPE": []}
    right_side = "NET"
    for row in re.findall(r"^\|[^\n]*\|$", doc, re.M):
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) != 7 or not cells[0].isdigit() and cells[0] != "":
            continue
        if cells[0].isdigit() and cells[2].isdigit():
            documented["FS"].append((int(cells[0]), cells[1], int(cells[2])))
        if cells[5] == "**`scoped`**":
            right_side = "SCOPE"
        elif cells[4].isdigit() and cells[6].isdigit():
            documented[right_side].append((int(cells[4]), cells[5], int(cells[6])))
    for kind, rows in sorted(table.items()):
        if documented[kind] != rows:
            faults.append(f"docs/plan-format.md: the {kind.lower()} rights' table {documented[kind]} is not "
                          f"runtime/kernel/landlock_rights.def's {rows}")


def main():
    root = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("AASM_SOURCE_ROOT")
            or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    faults, vocabularies = [], []
    for title, table, pattern, inside in VOCABULARIES:
        path = os.path.join(root, table)
        if not os.path.exists(path):
            faults.append(f"{table}: missing, the table of the {title}")
            continue
        names = set(re.findall(pattern, read(path)))
        if not names:
            faults.append(f"{table}: no name of the {title} found (did the table change shape?)")
        vocabularies.append((title, table, names, inside))
    used = set()
    for top in SOURCE_DIRS:
        for directory, _, files in sorted(os.walk(os.path.join(root, top))):
            for file in sorted(files):
                if not file.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(directory, file)
                relative = os.path.relpath(path, root)
                for line, literal in literals(read(path)):
                    for title, table, names, inside in vocabularies:
                        if relative == table:
                            continue
                        for name in sorted(names_in(literal, names, inside)):
                            if key := allowed(relative, name):
                                used.add(key)
                                continue
                            faults.append(f"{relative}:{line}: {json.dumps(literal)} writes the {title}' name "
                                          f"'{name}', which belongs in {table} only")
    for stale in sorted(set(ALLOWED) - used):
        faults.append(f"ALLOWED lists {stale}, which no longer occurs: remove it")
    rights = os.path.join(root, "runtime", "kernel", "landlock_rights.def")
    if os.path.exists(rights):
        check_plan_format_rights(root, read(rights), faults)
    for fault in faults:
        print(fault)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
