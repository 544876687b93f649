#!/usr/bin/env python3
"""Real work under each filesystem confinement (docs/benchmarks.md, "Real work").

Four workloads, each run to completion as one process tree and timed from
before the start to after the wait (time.perf_counter, launch included):

  find        /usr/bin/find /usr -name '*.h'
  git status  /usr/bin/git status --porcelain in a generated git repository
              of 15,000 committed files (150 directories of 100)
  make -j2    /usr/bin/make -s -B -j2 of a generated C project (24 files)
  npm ci      /usr/bin/npm ci --offline of a generated project whose one
              dependency is a local tarball (no registry is asked)

under five variants:

  bare        the command itself
  landlock    aasm-launch with a coding agent's plan without the view:
              Landlock (read /usr, /etc, /tmp, /dev/null, the workspace;
              write the workspace, /tmp, /dev/null; execute /usr) and the
              seccomp filter every plan carries (deny @mount + safe defaults)
  view only   bench-view-cost --launch DIR -- CMD: the same view as `both`,
              built by runtime/kernel/mount_view, no Landlock, no seccomp
              (a plan with the view always carries Landlock too)
  both        aasm-launch with the same plan plus isolation.filesystem_view
              (the view, Landlock on top, the same filter)
  bwrap       bwrap --unshare-user --unshare-pid with the view's binds
              (bench-view-cost --bwrap-argv DIR, its own bwrap variant)

and, asked for with --variants, `explain`: the landlock variant under
aasm-launch --explain (the tracer of the failing calls, docs/cli.md).

Each round runs every (workload, variant) once in a shuffled order (fixed
seed), after one warm-up round; then the median per pair and its ratio to
bare. The generated trees live in WORKDIR (default /var/tmp/aasm-real-work,
outside /tmp so that the private /tmp of the view does not hide them) and
are made once, then reused.

    real_work.py AASMC AASM_LAUNCH BENCH_VIEW_COST [--rounds N] [--workdir DIR] [--markdown]

--markdown: only the tables on stdout (for `./run bench`), progress on stderr.
"""
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

POLICY = """apiVersion: aasm.dev/v1
kind: Policy
metadata: {{name: real-work, tier: agent}}
spec:
  filesystem:
    read: {{allow: ["/usr", "/etc", "/tmp", "/dev/null", "${{CWD}}"]}}
    write: {{allow: ["${{CWD}}", "/tmp", "/dev/null"]}}
    execute: {{allow: ["/usr"]}}
  syscalls:
    deny: ["@mount"]
{view}"""
VIEW = """  resources: {tmp_size: 64Mi}
  isolation: {filesystem_view: true}
"""
TREE_DIRS, TREE_FILES = 150, 100
C_FILES = 24
VARIANTS = ["bare", "landlock", "view only", "both", "bwrap"]
OPTIONAL_VARIANTS = ["explain"]


def make_tree(path):
    """A git repository of TREE_DIRS x TREE_FILES committed files, once."""
    if os.path.exists(os.path.join(path, ".done")):
        return
    shutil.rmtree(path, ignore_errors=True)
    for d in range(TREE_DIRS):
        os.makedirs(os.path.join(path, f"d{d:03}"))
        for f in range(TREE_FILES):
            with open(os.path.join(path, f"d{d:03}", f"f{f:03}.txt"), "w") as out:
                out.write(f"file {d} {f}\n")
    git = ["git", "-C", path, "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "tree"], check=True)
    open(os.path.join(path, ".git", "info", "exclude"), "a").write(".done\n")
    open(os.path.join(path, ".done"), "w").close()


def make_project(path):
    """A C project of C_FILES translation units and a Makefile, once."""
    if os.path.exists(os.path.join(path, "Makefile")):
        return
    os.makedirs(path, exist_ok=True)
    for i in range(C_FILES):
        with open(os.path.join(path, f"u{i:02}.c"), "w") as out:
            out.write("#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n")
            for k in range(20):
                out.write(f"int u{i}_{k}(const char* s) {{ int h = {k}; for (size_t j = 0; j < strlen(s); ++j) "
                          f"h = h * 31 + s[j]; return h ^ {i}; }}\n")
            if i == 0:
                out.write("int main(void) { printf(\"%d\\n\", u0_0(\"x\")); return 0; }\n")
    objs = " ".join(f"u{i:02}.o" for i in range(C_FILES))
    with open(os.path.join(path, "Makefile"), "w") as out:
        out.write(f"CFLAGS = -O2 -Wall\nOBJS = {objs}\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n"
                  "%.o: %.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n")


def make_npm_project(path):
    """A node project depending on one local tarball, its lock file made once
    (npm install --offline: a file: dependency needs no registry)."""
    if os.path.exists(os.path.join(path, "package-lock.json")):
        return
    dep = os.path.join(path, "dep")
    os.makedirs(dep, exist_ok=True)
    with open(os.path.join(dep, "package.json"), "w") as out:
        out.write('{"name": "aasm-bench-dep", "version": "1.0.0", "main": "index.js"}\n')
    with open(os.path.join(dep, "index.js"), "w") as out:
        out.write("module.exports = (s) => s.length;\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": path, "LC_ALL": "C"}
    subprocess.run(["npm", "pack", "--silent", "--pack-destination", path], cwd=dep, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(path, "package.json"), "w") as out:
        out.write('{"name": "aasm-bench", "version": "1.0.0", "private": true,\n'
                  ' "dependencies": {"aasm-bench-dep": "file:aasm-bench-dep-1.0.0.tgz"}}\n')
    subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--loglevel=error"], cwd=path, env=env,
                   check=True, stdout=subprocess.DEVNULL)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("aasmc")
    parser.add_argument("aasm_launch")
    parser.add_argument("view_cost")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--workdir", default="/var/tmp/aasm-real-work")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated, bare first: " + ", ".join(VARIANTS + OPTIONAL_VARIANTS))
    args = parser.parse_args()
    # The commands run in the workloads' directories: absolute paths.
    args.aasmc, args.aasm_launch, args.view_cost = map(os.path.abspath, (args.aasmc, args.aasm_launch, args.view_cost))
    work = os.path.abspath(args.workdir)
    tree, project = os.path.join(work, "tree"), os.path.join(work, "project")
    make_tree(tree)
    make_project(project)
    npm = os.path.join(work, "npm")
    if shutil.which("npm"):
        make_npm_project(npm)
    workloads = {
        "find": (work, ["/usr/bin/find", "/usr", "-name", "*.h"]),
        "git status": (tree, ["/usr/bin/git", "status", "--porcelain"]),
        "make -j2": (project, ["/usr/bin/make", "-s", "-B", "-j2"]),
        "npm ci": (npm, ["/usr/bin/npm", "ci", "--offline", "--no-audit", "--no-fund", "--loglevel=error"]),
    }
    if not shutil.which("npm"):
        del workloads["npm ci"]
        print("npm: not found along $PATH, its workload skipped (apt-get install npm)")
    variants = [v for v in args.variants.split(",") if v != "bwrap" or shutil.which("bwrap")]
    if variants[0] != "bare" or any(v not in VARIANTS + OPTIONAL_VARIANTS for v in variants):
        sys.exit(f"real_work: --variants {args.variants}: bare first, then of " + ", ".join(VARIANTS[1:] + OPTIONAL_VARIANTS))
    if "bwrap" not in variants:
        print("bwrap: not found along $PATH, its variant skipped")
    # bwrap's binds are bench-view-cost's, for each workload's directory.
    bwrap = {name: subprocess.run([args.view_cost, "--bwrap-argv", cwd], check=True, capture_output=True,
                                  text=True).stdout.splitlines() for name, (cwd, _) in workloads.items()
             if "bwrap" in variants}
    # One plan per workload and kind: ${CWD} is each workload's directory.
    plans = {}
    for name, (cwd, _) in workloads.items():
        for kind, view in [("landlock", ""), ("both", VIEW)]:
            path = os.path.join(work, f"{name.split()[0]}-{kind}")
            with open(path + ".yaml", "w") as f:
                f.write(POLICY.format(view=view))
            subprocess.run([args.aasmc, "compile", path + ".yaml", "-o", path + ".bin"], cwd=cwd, check=True)
            plans[name, kind] = path + ".bin"

    def argv(name, variant):
        cwd, cmd = workloads[name]
        if variant == "bare":
            return cmd
        if variant in ("landlock", "both"):
            return [args.aasm_launch, plans[name, variant], "--"] + cmd
        if variant == "explain":
            return [args.aasm_launch, "--explain", plans[name, "landlock"], "--"] + cmd
        if variant == "view only":
            return [args.view_cost, "--launch", cwd, "--"] + cmd
        return bwrap[name] + ["--chdir", cwd] + cmd

    def run(name, variant):
        # The same small environment everywhere; HOME in the workspace, since
        # git reads $HOME/.gitconfig and fails where it exists but is denied.
        cwd = workloads[name][0]
        env = {"PATH": "/usr/bin:/bin", "HOME": cwd, "LC_ALL": "C"}
        start = time.perf_counter()
        done = subprocess.run(argv(name, variant), cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
        # Root without its capabilities (every variant but bare) cannot enter
        # a directory such as /usr/share/polkit-1/rules.d (mode 700, another
        # owner): find reports it and exits 1, which is no failure here;
        # under --explain the launcher lists the refusals it traced, and says
        # it cannot show them otherwise (its denials line).
        denied_only = done.returncode == 1 and name == "find" and all(
            line.endswith("Permission denied") or line.startswith(("aasm-launch: note: ", "aasm-launch: denials: "))
            for line in done.stderr.splitlines())
        if done.returncode != 0 and not denied_only:
            sys.exit(f"real_work: {name} under {variant} exited {done.returncode}: {done.stderr.strip()}")
        return elapsed * 1e3

    pairs = [(n, v) for n in workloads for v in variants]
    samples = {p: [] for p in pairs}
    rng = random.Random(13)
    for r in range(args.rounds + 1):  # round 0 warms the caches and git's index
        rng.shuffle(pairs)
        for pair in pairs:
            ms = run(*pair)
            if r:
                samples[pair].append(ms)
        print(f"real_work: round {r}/{args.rounds} done" + (" (warm-up)" if r == 0 else ""), file=sys.stderr, flush=True)
    medians = {p: statistics.median(s) for p, s in samples.items()}
    print(f"{args.rounds} rounds after 1 warm-up, shuffled (seed 13); wall ms, median; ratio to bare\n")
    print("| workload | " + " | ".join(variants) + " |")
    print("|---|" + "---:|" * len(variants))
    for name in workloads:
        bare = medians[name, "bare"]
        cells = [f"{medians[name, v]:.1f}" + ("" if v == "bare" else f" ({medians[name, v] / bare:.3f})")
                 for v in variants]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.markdown:
        return
    print("\nratio to bare (each # is 1 %, | marks bare, 2 % goal on find: view only)")
    for name in workloads:
        for v in variants[1:]:
            over = (medians[name, v] / medians[name, "bare"] - 1) * 100
            bar = "#" * max(0, round(over)) if over >= 0 else "-" * round(-over)
            print(f"{name:>10} {v:>9} |{bar} {over:+.1f} %")
    if "view only" in variants:
        find_over = medians["find", "view only"] / medians["find", "bare"] - 1
        print(f"\ngoal: the view alone within 2 % of bare on find: {find_over * 100:+.2f} %, "
              + ("met" if find_over <= 0.02 else "NOT met"))


if __name__ == "__main__":
    main()
