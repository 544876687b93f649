#!/usr/bin/env python3
"""schemas/policy.schema.json against aasmc.

Checks, in order:
  1. the schema is a valid draft-07 schema;
  2. its closed lists agree with the compiler: the @groups (`aasmc groups`),
     the errno names of errno:ENAME actions, the Linux capabilities;
  3. every document of every testdata/policies/*.yaml and of every shipped
     profile (profiles/*.yaml) is valid against it, and every
     `yaml-language-server: $schema=` modeline in testdata/ and profiles/
     points at it;
  4. the corpora, each file's verdicts written in the file itself:

       testdata/broken/         policies aasmc rejects. Their `# EXPECT:`
                                lines (aasmc's diagnostics, exactly) are
                                checked by tests/compiler/golden_test.cpp;
                                here, their one `# EXPECT-SCHEMA:` line
       testdata/schema/valid/   policies both accept
       testdata/schema/schema-only/
                                policies aasmc accepts (`aasmc explain FILE`
                                exits 0) and the schema rejects, as their
                                `# EXPECT-SCHEMA:` line says

     An `# EXPECT-SCHEMA:` line is one of
       rejects at spec.network.outbound   the schema rejects the file at (or
                                          under) this place ((root): at the
                                          document itself); several such
                                          lines: at each place
       accepts                            the schema cannot see what is wrong
       unreadable                         not YAML a loader can turn into
                                          JSON values (bad encoding, syntax)
     and a `# WHY:` line must say why schema and compiler cannot agree
     wherever they do not (`accepts` in broken/, every file of schema-only/).
     In valid/ and schema-only/, a `# COMPILER-BUG: ...` line says that the
     compiler is known to disagree with the contract there: reported, not
     failed, until it is fixed.

YAML is turned into JSON values the way yaml-language-server does by default
(YAML 1.2 core schema), not PyYAML's YAML 1.1 resolution: `yes`, `on`, `1_000`,
`1:30` and `2024-01-01` stay strings, `0777` is decimal 777, `0o17` octal,
`0x1F` hex. Mapping keys keep their source text, which is what the compiler
sees, and `<<` is a plain key (YAML 1.2 has no merge keys). The loader notes
what JSON cannot carry (anchors, aliases, tags, duplicate keys); the schema
cannot judge such a document, so it must expect `accepts`.

Environment: AASMC (the compiler), AASM_SOURCE_ROOT (the repository).
"""
import json
import os
import re
import subprocess
import sys

import jsonschema
import yaml

ROOT = os.environ.get("AASM_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AASMC = os.environ.get("AASMC") or os.path.join(ROOT, "build-schema", "compiler", "aasmc")
SCHEMA_PATH = os.path.join(ROOT, "schemas", "policy.schema.json")
TESTDATA = os.path.join(ROOT, "testdata")
PROFILES = os.path.join(ROOT, "profiles")
REJECTED = os.path.join(TESTDATA, "broken")
ACCEPTED = os.path.join(TESTDATA, "schema")  # valid/, schema-only/


# --- YAML 1.2 core schema -------------------------------------------------

class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema's implicit types."""

    yaml_implicit_resolvers = {}

    def __init__(self, stream):
        super().__init__(stream)
        self.unseen = []  # what JSON cannot carry, as "line:col: what"

    def note(self, node, what):
        self.unseen.append(f"{node.start_mark.line + 1}:{node.start_mark.column + 1}: {what}")

    def construct_mapping(self, node, deep=False):
        if not isinstance(node, yaml.MappingNode):
            return super().construct_mapping(node, deep)
        result, seen = {}, set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                # JSON has no such key; the compiler refuses it too. Keep a
                # key no schema property matches, so the schema refuses it.
                key = f"<{key_node.id} key at line {key_node.start_mark.line + 1}>"
            else:
                # The source text, as the compiler sees it. `<<` stays a plain
                # key: YAML 1.2 has no merge keys.
                key = key_node.value
                if key in seen:
                    self.note(key_node, f"duplicate key '{key}'")
            seen.add(key)
            result[key] = self.construct_object(value_node, deep=deep)
        return result

    def construct_yaml_int12(self, node):
        text = self.construct_scalar(node)
        sign = -1 if text.startswith("-") else 1
        digits = text.lstrip("+-")
        if digits.startswith("0o"):
            return int(digits[2:], 8)
        if digits.startswith("0x"):
            return int(digits[2:], 16)
        return sign * int(digits, 10)

    def construct_yaml_float12(self, node):
        text = self.construct_scalar(node)
        lowered = text.lower()
        if lowered in (".inf", "+.inf"):
            return float("inf")
        if lowered == "-.inf":
            return float("-inf")
        if lowered == ".nan":
            return float("nan")
        return float(text)


Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"),
                                   ["~", "n", "N", ""])
Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                   list("tTfF"))
Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
                                   list("-+0123456789"))
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+.0123456789"))
Yaml12Loader.add_constructor("tag:yaml.org,2002:int", Yaml12Loader.construct_yaml_int12)
Yaml12Loader.add_constructor("tag:yaml.org,2002:float", Yaml12Loader.construct_yaml_float12)


def yaml_features(text):
    """Anchors, aliases and tags, which the constructed values do not show."""
    found = []
    for event in yaml.parse(text, Loader=Yaml12Loader):
        where = f"{event.start_mark.line + 1}:{event.start_mark.column + 1}"
        if isinstance(event, yaml.AliasEvent):
            found.append(f"{where}: alias (*{event.anchor})")
        elif isinstance(event, yaml.NodeEvent):
            if event.anchor is not None:
                found.append(f"{where}: anchor (&{event.anchor})")
            if getattr(event, "tag", None) is not None:
                found.append(f"{where}: tag ({event.tag})")
    return found


def load_documents(path):
    """(documents as JSON values, [what JSON cannot carry])."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    unseen = yaml_features(text)
    loader = Yaml12Loader(text)
    documents = []
    try:
        while loader.check_data():
            documents.append(loader.get_data())
    finally:
        loader.dispose()
    return documents, unseen + loader.unseen


# --- verdicts ---------------------------------------------------------------

def all_errors(errors):
    """Every error, with the alternatives of anyOf/oneOf flattened in."""
    for error in errors:
        yield error
        yield from all_errors(error.context or [])


def dotted(error):
    return ".".join(str(part) for part in error.absolute_path)


def schema_verdict(validator, documents):
    """(accepts, [(document index, dotted path, message)])."""
    problems = []
    for index, document in enumerate(documents):
        for error in all_errors(validator.iter_errors(document)):
            problems.append((index, dotted(error), error.message))
    return not problems, problems


def compiler_verdict(path):
    """(exit status, diagnostics)."""
    run = subprocess.run([AASMC, "explain", path], capture_output=True, text=True, timeout=60)
    return run.returncode, run.stderr


def header(path):
    """The `# KEY: value` lines of the file (`# EXPECT-SCHEMA: ...`, `# WHY: ...`)."""
    fields = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if m := re.match(r"^#\s*([A-Z][A-Z-]*):\s*(.*?)\s*$", line):
                fields.setdefault(m.group(1), []).append(m.group(2))
    return fields


# --- the checks ---------------------------------------------------------------

class Report:
    def __init__(self):
        self.failures, self.notes = [], []

    def fail(self, message):
        self.failures.append(message)

    def note(self, message):
        self.notes.append(message)


def check_closed_lists(schema, report):
    defs = schema["definitions"]
    # @groups, as `aasmc groups` prints them.
    out = subprocess.run([AASMC, "groups"], check=True, capture_output=True, text=True).stdout
    compiler_groups = {f"@{m}" for m in re.findall(r"^@([a-z0-9-]+):", out, re.M)}
    schema_groups = set(defs["syscallOrGroup"]["anyOf"][1]["enum"])
    if compiler_groups != schema_groups:
        report.fail(f"schema @groups differ from `aasmc groups`: only in the schema {sorted(schema_groups - compiler_groups)}, "
                    f"only in aasmc {sorted(compiler_groups - schema_groups)}")
    # errno names: the compiler's table is compiler/tables/errno_names.cpp.
    with open(os.path.join(ROOT, "compiler", "tables", "errno_names.cpp"), encoding="utf-8") as f:
        compiler_errnos = set(re.findall(r'\{"(E[A-Z0-9]+)",', f.read()))
    if not compiler_errnos:
        report.fail("found no errno name in compiler/tables/errno_names.cpp (did its table change shape?)")
    for name in ("defaultAction", "ruleAction"):
        schema_errnos = {a[len("errno:"):] for a in defs[name]["anyOf"][0]["enum"] if a.startswith("errno:")}
        if schema_errnos != compiler_errnos:
            report.fail(f"schema {name} errno names differ from errno_names.cpp: only in the schema "
                        f"{sorted(schema_errnos - compiler_errnos)}, only in the compiler {sorted(compiler_errnos - schema_errnos)}")
    # Linux capabilities: the compiler's and launcher's list is in runtime/kernel/capabilities.cpp.
    with open(os.path.join(ROOT, "runtime", "kernel", "capabilities.cpp"), encoding="utf-8") as f:
        compiler_caps = set(re.findall(r'"(CAP_[A-Z_]+)"', f.read()))
    iso = schema["properties"]["spec"]["properties"]["isolation"]["properties"]
    schema_caps = set(iso["linux_capabilities"]["items"]["enum"])
    if compiler_caps != schema_caps:
        report.fail(f"schema linux_capabilities differ from capabilities.cpp: only in the schema "
                    f"{sorted(schema_caps - compiler_caps)}, only in the compiler {sorted(compiler_caps - schema_caps)}")
    # Namespaces and domains: their one tables, X-macro files the compiler and the launcher include; the
    # schema lists them in the tables' order.
    for what, table, pattern, schema_names in (
            ("namespaces", "runtime/plan/namespaces.def", r'^AASM_NAMESPACE\(\w+, "([a-z]+)"',
             iso["namespaces"]["items"]["enum"]),
            ("domains", "runtime/plan/controls.def", r'^AASM_DOMAIN(?:_AND_CONTROL)?\(\w+, "([a-z_]+)"\)',
             defs["domain"]["enum"])):
        with open(os.path.join(ROOT, table), encoding="utf-8") as f:
            table_names = re.findall(pattern, f.read(), re.M)
        if not table_names:
            report.fail(f"found no name in {table} (did its table change shape?)")
        elif table_names != schema_names:
            report.fail(f"schema {what} {schema_names} differ from {table}'s {table_names}")


def check_policies(validator, report):
    count = 0
    for directory in (os.path.join(TESTDATA, "policies"), PROFILES):
        shown = os.path.relpath(directory, ROOT)
        names = sorted(n for n in os.listdir(directory) if n.endswith(".yaml"))
        if not names:
            report.fail(f"{shown}/ has no policy")
        for name in names:
            path = os.path.join(directory, name)
            documents, unseen = load_documents(path)
            ok, problems = schema_verdict(validator, documents)
            for index, where, message in problems:
                report.fail(f"{shown}/{name}: document {index + 1}: {where or '(root)'}: {message}")
            for what in unseen:
                report.fail(f"{shown}/{name}:{what}: the schema cannot see this")
        count += len(names)
    return count


def check_modelines(report):
    count = 0
    for directory, _, files in (entry for tree in (TESTDATA, PROFILES) for entry in os.walk(tree)):
        for name in files:
            if not name.endswith(".yaml"):
                continue
            path = os.path.join(directory, name)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except UnicodeDecodeError:
                continue  # testdata/broken/non-utf8.yaml
            for m in re.finditer(r"yaml-language-server:\s*\$schema=(\S+)", text):
                count += 1
                target = os.path.normpath(os.path.join(directory, m.group(1)))
                if target != os.path.normpath(SCHEMA_PATH):
                    report.fail(f"{os.path.relpath(path, ROOT)}: the modeline points at {m.group(1)}, "
                                f"not at schemas/policy.schema.json")
    return count


def schema_expectation(label, fields, report):
    """The file's `# EXPECT-SCHEMA:` lines as ("accepts" | "unreadable" | "rejects", [places]), or (None, [])."""
    lines = fields.get("EXPECT-SCHEMA", [])
    places = [line[len("rejects at "):] for line in lines if line.startswith("rejects at ")]
    if lines and len(places) == len(lines):
        return "rejects", ["" if place == "(root)" else place for place in places]
    if lines in (["accepts"], ["unreadable"]):
        return lines[0], []
    report.fail(f"{label}: wants one `# EXPECT-SCHEMA: accepts` or `unreadable` line, or `rejects at PLACE` lines "
                f"(has {lines})")
    return None, []


def check_schema_verdict(validator, path, label, want, places, report):
    """The schema's verdict on the file against `want` (and, for "rejects", the places)."""
    try:
        documents, unseen = load_documents(path)
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        if want != "unreadable":
            report.fail(f"{label}: the loader cannot read it ({str(error).splitlines()[0]}): expect `unreadable`")
        return
    if want == "unreadable":
        report.fail(f"{label}: the loader reads it: it is not `unreadable`")
        return
    if unseen and want != "accepts":
        report.fail(f"{label}: uses what JSON cannot carry ({'; '.join(unseen)}): "
                    "the schema cannot judge it, so it must expect `accepts`")
    schema_ok, problems = schema_verdict(validator, documents)
    if want == "accepts" and not schema_ok:
        detail = "; ".join(f"{where or '(root)'}: {message}" for _, where, message in problems[:3])
        report.fail(f"{label}: the schema rejects it ({detail})")
    elif want == "rejects" and schema_ok:
        report.fail(f"{label}: the schema accepts it")
    elif want == "rejects":
        for expected in places:
            if not any(where == expected or where.startswith(expected + ".") for _, where, _ in problems):
                seen = sorted({where or "(root)" for _, where, _ in problems})
                report.fail(f"{label}: the schema rejects it, but not at {expected or '(root)'} (at {seen})")


def yaml_files(directory):
    return sorted(n for n in os.listdir(directory) if n.endswith(".yaml")) if os.path.isdir(directory) else []


def check_rejected(validator, report):
    """testdata/broken/: the schema's half of each file's expectations."""
    counts = {"accepts": 0, "rejects": 0, "unreadable": 0}
    for name in yaml_files(REJECTED):
        path, label = os.path.join(REJECTED, name), f"testdata/broken/{name}"
        fields = header(path)
        want, places = schema_expectation(label, fields, report)
        if want is None:
            continue
        counts[want] += 1
        if want == "accepts" and not fields.get("WHY"):
            report.fail(f"{label}: the schema accepts it: a `# WHY:` line must say why it cannot refuse it")
        check_schema_verdict(validator, path, label, want, places, report)
    return counts


def check_compiler_accepts(path, label, fields, report):
    status, diagnostics = compiler_verdict(path)
    bug = fields.get("COMPILER-BUG")
    if status != 0:
        what = "crashes (exit %d)" % status if status != 1 else "rejects it: " + first_error(diagnostics)
        if bug:
            report.note(f"{label}: known compiler bug: aasmc {what} ({bug[0]})")
        else:
            report.fail(f"{label}: aasmc {what}")
    elif bug:
        report.note(f"{label}: the compiler bug noted here ({bug[0]}) looks fixed: remove the COMPILER-BUG line")


def check_accepted(validator, report):
    """testdata/schema/: what aasmc accepts; valid/ the schema too, schema-only/ as each file says."""
    counts = {}
    for directory in ("valid", "schema-only"):
        names = yaml_files(os.path.join(ACCEPTED, directory))
        counts[directory] = len(names)
        for name in names:
            path, label = os.path.join(ACCEPTED, directory, name), f"testdata/schema/{directory}/{name}"
            fields = header(path)
            if directory == "valid":
                check_schema_verdict(validator, path, label, "accepts", [], report)
            else:
                want, places = schema_expectation(label, fields, report)
                if want not in ("rejects", None):
                    report.fail(f"{label}: schema-only/ holds what the schema rejects: expect `rejects at PLACE`")
                if not fields.get("WHY"):
                    report.fail(f"{label}: a `# WHY:` line must say why schema and compiler cannot agree")
                if want == "rejects":
                    check_schema_verdict(validator, path, label, want, places, report)
            check_compiler_accepts(path, label, fields, report)
    return counts


def first_error(diagnostics):
    for line in diagnostics.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return diagnostics.strip().splitlines()[0] if diagnostics.strip() else "(no diagnostics)"


def main():
    report = Report()
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        jsonschema.Draft7Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as error:
        print(f"schemas/policy.schema.json is not a valid draft-07 schema: {error.message}", file=sys.stderr)
        return 1
    validator = jsonschema.Draft7Validator(schema)
    check_closed_lists(schema, report)
    policies = check_policies(validator, report)
    modelines = check_modelines(report)
    rejected = check_rejected(validator, report)
    accepted = check_accepted(validator, report)
    for message in report.notes:
        print(f"note: {message}")
    for message in report.failures:
        print(f"FAIL: {message}", file=sys.stderr)
    print(f"schema: draft-07 ok; {policies} testdata policies and profiles; {modelines} modelines; "
          f"broken/: the schema {rejected['rejects']} rejects, {rejected['accepts']} accepts, "
          f"{rejected['unreadable']} unreadable; schema/: {accepted['valid']} valid, {accepted['schema-only']} schema-only; "
          f"{len(report.failures)} failures, {len(report.notes)} notes")
    if accepted["valid"] == 0 or rejected["rejects"] == 0:
        print("FAIL: the agreement corpus is empty", file=sys.stderr)
        return 1
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
