#!/usr/bin/env python3
"""Every JSON report against its schema in schemas/, from the real programs.

  aasmc show --json          schemas/show.schema.json      (each policy of testdata/policies/
                                                            and profiles/, compiled)
  aasmc explain --json       schemas/explain.schema.json   (the same, and testdata/explain/)
  aasmc groups --json        schemas/groups.schema.json
  aasmc backends --json      schemas/backends.schema.json
  aasmc export --json        schemas/export.schema.json    (oci and systemd, each policy of
                                                            testdata/policies/, profiles/ and
                                                            testdata/export/ it exports)
  aasmc import --json        schemas/import.schema.json    (moby's default.json, the srt
                                                            settings of testdata/import/srt/,
                                                            and the OCI exports above)
  aasmc --diagnostics-format=json
                             schemas/diagnostics.schema.json (every testdata/broken/*.yaml
                                                            and testdata/warnings/*.yaml)
  aasm-launch --dry-run --json
                             schemas/dry-run.schema.json   (each compiled plan, and a file
                                                            that is no plan)
  aasm-launch doctor --json  schemas/doctor.schema.json

and `--version` of both programs, doctor's version and every plan's
compiler.version against meson.build's project version.

Each report is also produced twice and must be the same bytes (deterministic),
and no report writes Landlock rights as a mask: rights are names.

Environment: AASMC, AASM_LAUNCH (the built programs), AASM_SOURCE_ROOT.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import jsonschema

ROOT = os.environ.get("AASM_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
AASMC = os.environ["AASMC"]
LAUNCH = os.environ["AASM_LAUNCH"]
failures = []
checked = {}
compiled_versions = set()


def schema(name):
    with open(os.path.join(ROOT, "schemas", name + ".schema.json")) as f:
        document = json.load(f)
    jsonschema.Draft7Validator.check_schema(document)
    return jsonschema.Draft7Validator(document)


VALIDATORS = {name: schema(name) for name in ("show", "explain", "groups", "diagnostics", "dry-run", "doctor",
                                              "backends", "export", "import")}
MASK = re.compile(r"\b(fs|net|scopes) 0x[0-9a-f]+")


def run(argv, codes, stream="stdout"):
    r = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if r.returncode not in codes:
        failures.append(f"{' '.join(argv)}: exit {r.returncode}, expected {codes}: {r.stderr.strip()[:400]}")
        return None
    return r.stdout if stream == "stdout" else r.stderr


def check(kind, argv, codes=(0,), stream="stdout", deterministic=True):
    text = run(argv, codes, stream)
    if text is None:
        return None
    if deterministic and run(argv, codes, stream) != text:
        failures.append(f"{' '.join(argv)}: two runs printed different bytes")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        failures.append(f"{' '.join(argv)}: not one JSON document: {e}")
        return None
    for error in VALIDATORS[kind].iter_errors(document):
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        failures.append(f"{' '.join(argv)}: {kind} schema at {where}: {error.message[:300]}")
    if MASK.search(text):
        failures.append(f"{' '.join(argv)}: Landlock rights as a mask: {MASK.search(text).group(0)}")
    checked[kind] = checked.get(kind, 0) + 1
    return document


def main():
    policies = sorted(glob.glob(os.path.join(ROOT, "testdata", "policies", "*.yaml")) +
                      glob.glob(os.path.join(ROOT, "profiles", "*.yaml")))
    with tempfile.TemporaryDirectory() as work:
        for policy in policies:
            plan = os.path.join(work, os.path.basename(policy) + ".bin")
            if run([AASMC, "compile", policy, "-o", plan], (0,)) is None:
                continue
            shown = check("show", [AASMC, "show", plan, "--json"])
            check("explain", [AASMC, "explain", policy, "--json"])
            # A plan a launch refuses here is still a report: 125 with the verdict.
            dry = check("dry-run", [LAUNCH, "--dry-run", "--json", plan], codes=(0, 125), deterministic=False)
            if shown:
                compiled_versions.update(m["value"] for m in shown["meta"] if m["key"] == "compiler.version")
            if shown and dry and dry["plan_sha256"] != shown["sha256"]:
                failures.append(f"{policy}: --dry-run's plan_sha256 is not show's sha256")
            # The same policy with every launched backend's lowering (--backend auto).
            several = plan + ".auto"
            if run([AASMC, "compile", policy, "-o", several, "--backend", "auto"], (0,)) is not None:
                check("show", [AASMC, "show", several, "--json"])
                check("dry-run", [LAUNCH, "--dry-run", "--json", several], codes=(0, 125), deterministic=False)
                check("doctor", [LAUNCH, "doctor", "--json", "--plan", several], codes=(0, 1), deterministic=False)
        not_a_plan = os.path.join(work, "not-a-plan")
        with open(not_a_plan, "w") as f:
            f.write("not a plan\n")
        refused = check("dry-run", [LAUNCH, "--dry-run", "--json", not_a_plan], codes=(125,))
        if refused and (refused["verdict"]["proceed"] or not refused["verdict"]["refusal"]):
            failures.append("--dry-run --json of a file that is no plan: the verdict does not refuse")
    check("explain", [AASMC, "explain", os.path.join(ROOT, "testdata", "explain", "cascade.yaml"), "--json"])
    check("groups", [AASMC, "groups", "--json"])
    check("backends", [AASMC, "backends", "--json"])
    # A policy an export refuses (AASM0145: rules it cannot hold) prints no report.
    for policy in policies + sorted(glob.glob(os.path.join(ROOT, "testdata", "export", "*.yaml"))):
        for form in ("oci", "systemd"):
            argv = [AASMC, "export", "--format", form, "--json", policy]
            if subprocess.run(argv, capture_output=True).returncode == 0:
                check("export", argv)
    imports = [("oci", os.path.join(ROOT, "testdata", "import", "moby", "default.json"))]
    imports += [("srt", path) for path in sorted(glob.glob(os.path.join(ROOT, "testdata", "import", "srt", "*.json")))]
    with tempfile.TemporaryDirectory() as work:
        for policy in policies:
            profile = os.path.join(work, os.path.basename(policy) + ".json")
            if subprocess.run([AASMC, "export", "--format", "oci", policy, "-o", profile], capture_output=True).returncode == 0:
                imports.append(("oci", profile))
        # An import the compiler would refuse (docs/import.md#round-trip) prints no report.
        for form, path in imports:
            argv = [AASMC, "import", "--from", form, path, "--json"]
            if subprocess.run(argv, capture_output=True).returncode == 0:
                check("import", argv)
    for policy in sorted(glob.glob(os.path.join(ROOT, "testdata", "broken", "*.yaml")) +
                         glob.glob(os.path.join(ROOT, "testdata", "warnings", "*.yaml"))):
        check("diagnostics", [AASMC, "explain", policy, "--diagnostics-format=json"], codes=(0, 1), stream="stderr")
    doctor = check("doctor", [LAUNCH, "doctor", "--json"], codes=(0, 1), deterministic=False)
    if doctor is not None:
        code = subprocess.run([LAUNCH, "doctor", "--json"], capture_output=True).returncode
        if code != (0 if doctor["complete"] else 1):
            failures.append(f"doctor exits {code} with complete={doctor['complete']}")
    # --version: both programs print meson.build's project version, which
    # doctor reports and every plan records as compiler.version.
    with open(os.path.join(ROOT, "meson.build")) as f:
        version = re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)
    for program, name in ((AASMC, "aasmc"), (LAUNCH, "aasm-launch")):
        printed = run([program, "--version"], (0,))
        if printed != f"{name} {version}\n":
            failures.append(f"{name} --version printed {printed!r}, not {name} {version}")
    if doctor is not None and doctor["version"] != version:
        failures.append(f"doctor's version {doctor['version']} is not meson.build's {version}")
    if compiled_versions != {version}:
        failures.append(f"plans record compiler.version {compiled_versions}, not meson.build's {version}")
    for kind in VALIDATORS:
        if not checked.get(kind):
            failures.append(f"no {kind} report was checked")
    for failure in failures:
        print("FAIL:", failure)
    print("checked:", ", ".join(f"{checked.get(k, 0)} {k}" for k in VALIDATORS))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
