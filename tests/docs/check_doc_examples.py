#!/usr/bin/env python3
"""Run the examples of a documentation page against the built aasmc and aasm-launch.

    check_doc_examples.py PAGE.md [--every-id docs/diagnostics.md]

The page's fenced blocks, in order:

- ```yaml (no file name): a policy example. It is written to policy.yaml in a
  directory of its own and compiled (`aasmc compile policy.yaml -o plan.bin`).
  A fragment without `apiVersion` is completed by appending a header (at the
  end, so the shown line numbers stay true). When the next block is a
  ```text block holding a diagnostic (`[AASMxxxx]`), the compile must print
  those lines and exit 1 if one of them is an error (0 if only warnings);
  otherwise it must succeed without any diagnostic.
- ```yaml file=NAME: a file of the page's walk-through, written to NAME in the
  directory the page's commands are in at that point.
- ```sh: commands, run with bash -e -o pipefail in the working directory; the
  working directory and exported variables carry over to the next block. A
  ```text block right after it shows (part of) the output: its lines must
  appear in stdout+stderr, in order and one after the other (from any line on),
  except that a line `…` stands for any number of lines and `…` inside a line
  for any text.

With --every-id, each diagnostic id of that page's table must be shown by a
checked example of PAGE, unless PAGE's own table row for it says the id is
"reserved" or "internal" (nothing a policy can cause).

The commands find `aasmc` and `aasm-launch` on PATH (the build's, first), and
AASM_PROFILES names the folder of the shipped profiles (profiles/ of the
source tree). SHELL is /bin/bash where the caller has none (as in a terminal).
The commands run in a new directory under AASM_DOC_WORK (the working directory
if unset), outside /tmp. DOC_EXAMPLES_VERBOSE=1 prints what every block printed.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.environ.get("AASM_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
def tool(variable, name):
    path = os.environ.get(variable, name)
    return os.path.abspath(path) if os.sep in path else path


AASMC = tool("AASMC", "aasmc")
AASM_LAUNCH = tool("AASM_LAUNCH", "aasm-launch")
HEADER = "\napiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: example, tier: agent}\n"
FENCE = re.compile(r"^```(\S*)(.*)$")


def blocks(path):
    """(line, language, attributes, text) of every fenced block."""
    out, lines = [], open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        attrs = dict(a.split("=", 1) for a in m.group(2).split() if "=" in a)
        out.append((start, m.group(1), attrs, "\n".join(body) + "\n"))
        i += 1
    return out


def line_matches(expected, actual):
    pattern = ".*".join(re.escape(part) for part in expected.split("…"))
    return re.fullmatch(pattern, actual.rstrip()) is not None


def shows(expected_text, actual_text):
    """Whether the expected lines appear in the actual ones (see the module doc)."""
    expected = [l.rstrip() for l in expected_text.rstrip("\n").split("\n")]
    actual = actual_text.rstrip("\n").split("\n")

    def match(e, a, skipping):
        if e == len(expected):
            return True
        if expected[e] == "…":
            return match(e + 1, a, True)
        for k in range(a, len(actual)):
            if line_matches(expected[e], actual[k]) and match(e + 1, k + 1, False):
                return True
            if not skipping:
                return False
        return False

    # The shown lines may begin anywhere in the output and end before it does.
    return match(0, 0, True)


def is_diagnostic(text):
    return re.search(r"\[AASM\d{4}\]", text) is not None


def check_policy(where, yaml_text, expected, env):
    with tempfile.TemporaryDirectory() as d:
        source = yaml_text if "apiVersion:" in yaml_text else yaml_text + HEADER
        with open(os.path.join(d, "policy.yaml"), "w", encoding="utf-8") as f:
            f.write(source)
        r = subprocess.run([AASMC, "compile", "policy.yaml", "-o", "plan.bin"], cwd=d, env=env,
                           capture_output=True, text=True)
        if expected is None:
            if r.returncode != 0 or r.stderr:
                return [f"{where}: the example does not compile cleanly (exit {r.returncode}):\n{r.stderr}"]
            return []
        errors = []
        want = 1 if re.search(r"^\S+: error: ", expected, re.M) else 0
        if r.returncode != want:
            errors.append(f"{where}: exit {r.returncode}, the shown diagnostics mean {want}")
        if not shows(expected, r.stderr):
            errors.append(f"{where}: the shown diagnostics are not what aasmc prints:\n--- shown\n{expected}--- printed\n{r.stderr}")
        return errors


def run_commands(where, script, expected, work, state, env):
    wrapped = (f'[ -f "{state}" ] && . "{state}"\n' + script +
               f'\n{{ export -p; printf "cd %q\\n" "$PWD"; }} > "{state}"\npwd > "{state}.cwd"\n')
    first = not os.path.exists(state)
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", wrapped], cwd=work if first else None, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    if os.environ.get("DOC_EXAMPLES_VERBOSE"):
        print(f"==== {where}\n{script}---- exit {r.returncode}\n{r.stdout}")
    if r.returncode != 0:
        return [f"{where}: the commands failed (exit {r.returncode}):\n{script}--- output\n{r.stdout}"]
    if expected is not None and not shows(expected, r.stdout):
        return [f"{where}: the shown output is not what the commands print:\n--- shown\n{expected}--- printed\n{r.stdout}"]
    return []


def profiles_dir():
    return os.path.join(ROOT, "profiles")


def work_base():
    """A directory for the walk-through outside every tree a profile grants:
    not /tmp (the profiles read and write it), even when the checkout or the
    build directory lies under /tmp."""
    base = os.path.realpath(os.environ.get("AASM_DOC_WORK") or os.getcwd())
    return "/var/tmp" if base == "/tmp" or base.startswith("/tmp/") else base


def missing_ids(page, page_blocks, ids_page):
    """Ids of ids_page that no checked example of the page shows."""
    ids = set(re.findall(r"^\| (AASM\d{4}) \|", open(ids_page, encoding="utf-8").read(), re.M))
    shown = set()
    for n, (_, lang, _, text) in enumerate(page_blocks):
        following = page_blocks[n + 1] if n + 1 < len(page_blocks) else None
        if lang in ("yaml", "sh") and following and following[1] == "text":
            shown.update(re.findall(r"\[(AASM\d{4})\]", following[3]))
    exempt = set(re.findall(r"^\| (AASM\d{4}) \|[^\n]*\b(?:reserved|internal)\b", open(page, encoding="utf-8").read(), re.M))
    return [f"{os.path.relpath(page, ROOT)}: no example shows {i} (from {os.path.relpath(ids_page, ROOT)})"
            for i in sorted(ids - shown - exempt)]


def main(page, ids_page=None):
    page_blocks = blocks(page)
    name = os.path.relpath(page, ROOT)
    env = dict(os.environ)
    bindirs = [os.path.dirname(p) for p in (AASMC, AASM_LAUNCH) if os.sep in p]
    env["PATH"] = os.pathsep.join(bindirs + [env.get("PATH", "/usr/bin:/bin")])
    env["AASM_PROFILES"] = profiles_dir()
    # A terminal's environment, which the pages assume: without SHELL, bash
    # looks its user up at start, and glibc's first try is the nscd socket,
    # which the profiles' unix-socket rule refuses and the report shows.
    env.setdefault("SHELL", "/bin/bash")
    # The walk-through's denials are about trees the policy does not grant.
    work = tempfile.mkdtemp(prefix="doc-examples-", dir=work_base())
    state = os.path.join(work, ".state.sh")
    errors, checked = [], 0
    try:
        for n, (line, lang, attrs, text) in enumerate(page_blocks):
            following = page_blocks[n + 1] if n + 1 < len(page_blocks) else None
            shown = following[3] if following and following[1] == "text" else None
            where = f"{name}:{line}"
            if lang == "yaml" and "file" in attrs:
                here = open(state + ".cwd").read().strip() if os.path.exists(state + ".cwd") else work
                with open(os.path.join(here, attrs["file"]), "w", encoding="utf-8") as f:
                    f.write(text)
            elif lang == "yaml":
                errors += check_policy(where, text, shown if shown and is_diagnostic(shown) else None, env)
                checked += 1
            elif lang == "sh":
                errors += run_commands(where, text, shown, work, state, env)
                checked += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if checked == 0:
        errors.append(f"{name}: no example found")
    if ids_page:
        errors += missing_ids(page, page_blocks, ids_page)
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{name}: {checked} examples, {len(errors)} failing")
    return 1 if errors else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--every-id"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(os.path.abspath(args[0]), os.path.abspath(args[2]) if len(args) == 3 else None))
