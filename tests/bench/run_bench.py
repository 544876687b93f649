#!/usr/bin/env python3
"""`./run bench` (issue 26): the launch, real-work and compile benchmarks in
one run, printed as tables and written, with an SVG plot, to docs/bench/.

  run_bench.py --build BUILD_DIR [--rounds N] [--real-rounds N] [--out DIR]
               [--skip-real-work] [--workdir DIR] [--compare LABEL=AASM_LAUNCH]...

Launch: /bin/true bare, under a static launcher that only spawns it (the
floor of any separate launcher process), under the benchmark's reference
launcher (fork, Landlock, the minimal plan's filters, exec), under
aasm-launch with the minimal plan (tests/bench/launch/minimal.yaml), the
same with a cgroup, each shipped profile (and ci-build without its cgroup),
and under the peers: bwrap, firejail, runc. Every round runs every variant
once in a shuffled order (fixed seed), after 10 warm-up rounds, from a git
workspace; wall time from before posix_spawn to after wait4, and the CPU
time wait4 reports for the tree; medians and p95 (nearest rank). A peer not
installed, or a variant whose trial launch fails, is reported skipped, by
name and why; nothing is left out silently. Then, once per variant, peak
RSS (GNU time's %M: the largest of the tree's processes) and the system
calls of one launch (strace -f -c).

Real work: tests/bench/launch/real_work.py (find, git status over 15,000
files, make -j2, npm ci; bare, Landlock, the view, both, bwrap).

Compile: aasmc compile of each shipped profile, interleaved rounds, median.
"""
import argparse
import http.server
import datetime
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROFILES = ["ci-build", "coding-agent", "coding-agent-web", "replay"]
MINIMAL = os.path.join(ROOT, "tests/bench/launch/minimal.yaml")
LIMITS = os.path.join(ROOT, "tests/bench/launch/coding-agent-cgroup.yaml")
EGRESS_MIB = 100
WARMUP = 10
SEED = 26


def say(text):
    print(text, file=sys.stderr, flush=True)


def run_quiet(argv, cwd=None, env=None):
    return subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def p95(values):
    s = sorted(values)
    return s[max(0, -(-95 * len(s) // 100) - 1)]


class Variant:
    def __init__(self, name, argv, what, cwd=None):
        self.name, self.argv, self.what, self.cwd = name, argv, what, cwd
        self.wall, self.cpu, self.faults = [], [], []
        self.skipped = None
        self.rss_kib = None
        self.syscalls = None


def spawn_timed(v, devnull, env):
    start = time.perf_counter_ns()
    pid = os.posix_spawn(v.argv[0], v.argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                                              (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter_ns() - start) / 1e6
    return status, wall, (usage.ru_utime + usage.ru_stime) * 1e3, usage.ru_minflt


def make_workspace(path):
    """A git workspace with one commit: the profiles protect its .git."""
    if os.path.isdir(os.path.join(path, ".git")):
        return
    os.makedirs(os.path.join(path, "out"), exist_ok=True)
    with open(os.path.join(path, "README"), "w") as f:
        f.write("aasm launch benchmark workspace\n")
    git = ["git", "-C", path, "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    for args in (["init", "-q"], ["add", "README"], ["commit", "-q", "-m", "workspace"]):
        subprocess.run(git + args, check=True)


def runc_bundle(path):
    """A bundle running /usr/bin/true: a read-only root holding /usr bound, no
    cgroup mount, cgroupsPath relative (beneath runc's own cgroup)."""
    rootfs = os.path.join(path, "rootfs")
    for d in ("usr", "proc", "dev", "tmp"):
        os.makedirs(os.path.join(rootfs, d), exist_ok=True)
    for link in ("bin", "lib", "lib64", "sbin"):
        if not os.path.lexists(os.path.join(rootfs, link)):
            os.symlink("usr/" + link, os.path.join(rootfs, link))
    config = os.path.join(path, "config.json")
    if os.path.exists(config):
        os.remove(config)
    subprocess.run(["runc", "spec"], cwd=path, check=True)
    with open(config) as f:
        c = json.load(f)
    c["root"] = {"path": "rootfs", "readonly": True}
    c["process"]["terminal"] = False
    c["process"]["args"] = ["/usr/bin/true"]
    c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/sys/fs/cgroup"]
    c["mounts"].append({"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro", "nosuid", "nodev"]})
    c["linux"]["cgroupsPath"] = "aasm-bench-runc"
    with open(config, "w") as f:
        json.dump(c, f, indent=1)


def without_resources(policy, out):
    """The policy with spec.resources left out: the same plan without a cgroup."""
    import yaml  # python3-yaml, a ./run deps package
    with open(policy) as f:
        doc = yaml.safe_load(f)
    doc["spec"].pop("resources", None)
    with open(out, "w") as f:
        yaml.safe_dump(doc, f)


def launch_variants(build, work, scratch, compare):
    aasmc = os.path.join(build, "compiler/aasmc")
    launcher = os.path.join(build, "launcher/aasm-launch")
    bench = os.path.join(build, "tests/bench/launch")
    plans = {}

    def compile_plan(name, *policies):
        out = os.path.join(scratch, name + ".bin")
        done = subprocess.run([aasmc, "compile", *policies, "-o", out], cwd=work, capture_output=True, text=True)
        plans[name] = out if done.returncode == 0 else None
        if done.returncode:
            say(f"bench: aasmc compile {' '.join(policies)} failed: {done.stderr.strip()}")
        return plans[name]

    compile_plan("minimal", MINIMAL)
    compile_plan("minimal+cgroup", MINIMAL, LIMITS)
    # The broker's launch cost (issue 27): the same plan with a bare network
    # namespace, and with network.outbound.hosts (that namespace and the broker).
    for name, spec in (("minimal+net", "  isolation:\n    namespaces: [net]\n"),
                       ("minimal+hosts", "  network:\n    outbound:\n      hosts: [\"registry.npmjs.org\"]\n")):
        tier = os.path.join(scratch, name + ".yaml")
        with open(tier, "w") as f:
            f.write(f"apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {{name: {name.replace('+', '-')}, tier: run}}\n"
                    f"spec:\n{spec}")
        compile_plan(name, MINIMAL, tier)
    without_resources(os.path.join(ROOT, "profiles/ci-build.yaml"), os.path.join(scratch, "ci-build-nocgroup.yaml"))
    compile_plan("ci-build, no cgroup", os.path.join(scratch, "ci-build-nocgroup.yaml"))
    for p in PROFILES:
        compile_plan(p, os.path.join(ROOT, "profiles", p + ".yaml"))
    filters = []
    if plans["minimal"]:
        prefix = os.path.join(scratch, "minimal-filter")
        subprocess.run([os.path.join(bench, "bench-export-filter"), plans["minimal"], prefix], check=True,
                       stdout=subprocess.DEVNULL)
        filters = sorted(os.path.join(scratch, f) for f in os.listdir(scratch) if f.startswith("minimal-filter."))

    vs = [Variant("bare", ["/bin/true"], "`/bin/true`"),
          Variant("floor: spawn only", [os.path.join(bench, "bench-spawn-floor"), "/bin/true"],
                  "`bench-spawn-floor /bin/true`: a static PIE that only vforks, execs the command and waits"),
          Variant("host: an empty program", [os.path.join(bench, "bench-empty-program-0")],
                  "`bench-empty-program-0`: no libc, nothing but `_start` and `exit_group` (the exec's own price)"),
          Variant("host: the same, 100 fresh pages", [os.path.join(bench, "bench-empty-program-100")],
                  "`bench-empty-program-100`: the same, writing one byte to each of 100 pages of its bss first"),
          Variant("reference launcher", [os.path.join(bench, "bench-reference-launcher"), *filters, "--", "/bin/true"],
                  "`bench-reference-launcher FILTERS -- /bin/true`: fork, 3 Landlock rules, the minimal plan's filters, exec")]

    def aasm(name, plan_key, what):
        v = Variant(name, [launcher, plans[plan_key] or "", "--", "/bin/true"], what)
        if not plans[plan_key]:
            v.skipped = "its plan did not compile"
        vs.append(v)

    aasm("aasm minimal", "minimal", "tests/bench/launch/minimal.yaml: Landlock + the default allowlist, no cgroup")
    # Another aasm-launch binary (a build before a change) in the same rounds.
    for label, path in compare:
        for key, what in (("minimal", "the minimal plan"), ("ci-build", "profiles/ci-build.yaml")):
            v = Variant(f"{label}: aasm {key}", [os.path.abspath(path), plans[key] or "", "--", "/bin/true"],
                        f"`{path}` (--compare {label}=...) with {what}")
            if not plans[key]:
                v.skipped = "its plan did not compile"
            vs.append(v)
    aasm("aasm minimal + cgroup", "minimal+cgroup", "the same + coding-agent-cgroup.yaml (memory, pids, cpu)")
    aasm("aasm minimal + net namespace", "minimal+net", "the same + isolation.namespaces: [net]")
    aasm("aasm minimal + hosts", "minimal+hosts",
         "the same + network.outbound.hosts: its network namespace and the egress broker (docs/egress.md)")
    aasm("aasm ci-build, no cgroup", "ci-build, no cgroup", "profiles/ci-build.yaml without its resources")
    for p in PROFILES:
        aasm("aasm " + p, p, f"profiles/{p}.yaml")
    peers = [("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "/bin/true"], "bubblewrap"),
             ("firejail", ["--quiet", "--noprofile", "/bin/true"], "firejail")]
    for name, args, package in peers:
        path = shutil.which(name)
        v = Variant(name, [path or name, *args], f"`{name} {' '.join(args)}`")
        if not path:
            v.skipped = f"not installed (apt-get install {package})"
        vs.append(v)
    runc = shutil.which("runc")
    v = Variant("runc", [runc or "runc", "--root", os.path.join(scratch, "runc-state"), "--systemd-cgroup=false", "run",
                         "--bundle", os.path.join(scratch, "runc"), "aasm-bench"],
                "`runc run` of a bundle running /usr/bin/true (read-only root, /usr bound, default namespaces)")
    if runc:
        runc_bundle(os.path.join(scratch, "runc"))
    else:
        v.skipped = "not installed (apt-get install runc)"
    vs.append(v)
    return vs


def bench_launch(vs, rounds, work, env):
    devnull = os.open(os.devnull, os.O_RDWR)
    os.chdir(work)
    for v in vs:
        if v.skipped:
            continue
        done = subprocess.run(v.argv, cwd=work, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            # Its error line, not the notes before it.
            lines = [l for l in done.stderr.splitlines() if "error:" in l] or done.stderr.splitlines() or [""]
            v.skipped = f"its trial launch exited {done.returncode}: " + lines[-1].strip()[:240]
    live = [v for v in vs if not v.skipped]
    for v in vs:
        if v.skipped:
            say(f"bench: {v.name}: skipped: {v.skipped}")
    rng = random.Random(SEED)
    failed = 0
    started = time.monotonic()
    for r in range(WARMUP + rounds):
        order = list(live)
        rng.shuffle(order)
        for v in order:
            status, wall, cpu, faults = spawn_timed(v, devnull, env)
            if status != 0:
                failed += 1
                continue
            if r >= WARMUP:
                v.wall.append(wall)
                v.cpu.append(cpu)
                v.faults.append(faults)
        if (r + 1) % 20 == 0 or r + 1 == WARMUP + rounds:
            say(f"bench: launch round {r + 1}/{WARMUP + rounds} ({time.monotonic() - started:.0f} s)")
    for v in live:
        rss = []
        for _ in range(5):
            done = subprocess.run(["/usr/bin/time", "-f", "%M"] + v.argv, cwd=work, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            lines = done.stderr.strip().splitlines()
            if lines and lines[-1].isdigit():
                rss.append(int(lines[-1]))
        v.rss_kib = statistics.median(rss) if rss else None
        if shutil.which("strace"):
            with tempfile.NamedTemporaryFile("r") as out:
                if run_quiet(["strace", "-f", "-c", "-o", out.name] + v.argv, cwd=work, env=env).returncode == 0:
                    for line in out.read().splitlines():
                        f = line.split()
                        if len(f) >= 4 and f[-1] == "total":
                            v.syscalls = int(f[3])
    return failed


def bench_compile(build, rounds, work):
    aasmc = os.path.join(build, "compiler/aasmc")
    policies = {"minimal": MINIMAL, **{p: os.path.join(ROOT, "profiles", p + ".yaml") for p in PROFILES}}
    times = {k: [] for k in policies}
    rng = random.Random(SEED)
    out = os.path.join(work, "compiled.bin")
    for r in range(1 + rounds):
        order = list(policies)
        rng.shuffle(order)
        for k in order:
            start = time.perf_counter()
            done = run_quiet([aasmc, "compile", policies[k], "-o", out], cwd=work)
            ms = (time.perf_counter() - start) * 1e3
            if done.returncode:
                sys.exit(f"bench: aasmc compile {policies[k]} failed: {done.stderr}")
            if r:
                times[k].append(ms)
    rss = {}
    for k, path in policies.items():
        done = subprocess.run(["/usr/bin/time", "-f", "%M", aasmc, "compile", path, "-o", out], cwd=work,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        rss[k] = int(done.stderr.strip().splitlines()[-1])
    return {k: (statistics.median(t), p95(t), rss[k]) for k, t in times.items()}


class _Blob(http.server.BaseHTTPRequestHandler):
    """The blob file for every GET, by sendfile(2): the server takes next to
    no CPU, so that on a 2-CPU host the comparison is the relay's cost, not
    three busy processes sharing two CPUs."""
    path_of_blob = ""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(EGRESS_MIB << 20))
        self.end_headers()
        self.wfile.flush()
        with open(self.path_of_blob, "rb") as f:
            self.connection.sendfile(f)

    def log_message(self, *args):
        pass


def bench_egress(build, workdir, rounds):
    """A download over loopback under aasm-launch, through the broker
    (network.outbound.hosts) and direct (the same plan without it), in
    interleaved rounds: what the broker's relay costs."""
    aasmc, launcher = os.path.join(build, "compiler/aasmc"), os.path.join(build, "launcher/aasm-launch")
    curl = shutil.which("curl")
    if not curl:
        return ["## Egress: a download through the broker", "", "Skipped: curl is not installed (apt-get install curl)."]
    work = os.path.join(workdir, "egress")
    os.makedirs(work, exist_ok=True)
    _Blob.path_of_blob = os.path.join(work, "blob")
    size = os.path.getsize(_Blob.path_of_blob) if os.path.exists(_Blob.path_of_blob) else -1
    if size != EGRESS_MIB << 20:
        with open(_Blob.path_of_blob, "wb") as f:
            f.write(bytes(EGRESS_MIB << 20))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Blob)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    plans = {}
    for name, network in (("direct", ""), ("broker", f"  network:\n    outbound:\n      hosts: [\"localhost:{port}\"]\n")):
        source = os.path.join(work, name + ".yaml")
        with open(source, "w") as f:
            f.write("apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: egress-bench, tier: agent}\nspec:\n"
                    "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"/dev\"]}\n"
                    "    write: {allow: [\"/dev/null\"]}\n    execute: {allow: [\"/usr\"]}\n" + network)
        plans[name] = os.path.join(work, name + ".bin")
        subprocess.run([aasmc, "compile", source, "-o", plans[name]], check=True, capture_output=True)
    url = f"http://localhost:{port}/blob"
    floor = subprocess.Popen([os.path.join(build, "tests/bench/launch/bench-relay-floor"), str(port)],
                             stdout=subprocess.PIPE, text=True)
    floor_url = f"http://localhost:{floor.stdout.readline().strip()}/blob"
    argv = {"direct": [launcher, plans["direct"], "--", curl, "-sf", "--noproxy", "*", "-o", "/dev/null", url],
            "relay floor": [launcher, plans["direct"], "--", curl, "-sf", "--noproxy", "*", "-o", "/dev/null", floor_url],
            "broker": [launcher, plans["broker"], "--", "/usr/bin/env", "-u", "no_proxy", "-u", "NO_PROXY", curl, "-sf",
                       "-o", "/dev/null", url]}
    times = {k: [] for k in argv}
    rng = random.Random(SEED)
    for r in range(1 + rounds):
        order = list(argv)
        rng.shuffle(order)
        for k in order:
            start = time.perf_counter()
            done = subprocess.run(argv[k], capture_output=True, text=True)
            seconds = time.perf_counter() - start
            if done.returncode:
                server.shutdown()
                floor.kill()
                return ["## Egress: a download through the broker", "",
                        f"Failed: the {k} download exited {done.returncode}: {done.stderr.strip()[-300:]}"]
            if r:
                times[k].append(seconds)
    server.shutdown()
    floor.kill()
    floor.wait()
    med = {k: statistics.median(v) for k, v in times.items()}
    over = {k: 100 * (med[k] / med["direct"] - 1) for k in med}
    return ["## Egress: a download through the broker", "",
            f"`curl` of {EGRESS_MIB} MiB from an HTTP server on the host's loopback, under `aasm-launch`: direct (a plan "
            f"without `network.outbound.hosts`), through `bench-relay-floor` (the same plan; a bare splice relay on the "
            f"host's loopback that checks nothing: the price of a second loopback hop) and through the broker (the "
            f"same plan listing `localhost:{port}`), {rounds} interleaved rounds after 1 warm-up; wall seconds, launch "
            f"included.", "",
            "| path | median s | MiB/s | over direct |", "|---|---:|---:|---:|"] + [
            f"| {k} | {med[k]:.3f} | {EGRESS_MIB / med[k]:.0f} | {over[k]:+.1f}% |" for k in argv] + [
            "",
            f"Issue 27's goal, the broker <= 10% over a direct connect: {over['broker']:+.1f}% "
            f"({'met' if over['broker'] <= 10 else '**not met**'}). The relay floor alone costs {over['relay floor']:+.1f}%; "
            f"the broker's own part, over the floor: {100 * (med['broker'] / med['relay floor'] - 1):+.1f}%."]


def svg_plot(vs, bare):
    """Horizontal bars: overhead over bare at the median, p95 as a whisker."""
    live = [v for v in vs if not v.skipped and v is not bare]
    width, left, row = 760, 230, 22
    top = 30
    height = top + row * len(live) + 40
    scale_max = max(p95(v.wall) - statistics.median(bare.wall) for v in live)
    scale = (width - left - 80) / max(scale_max, 0.001)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<text x="{left}" y="18">launch overhead over bare /bin/true, ms (bar: median, line: p95)</text>']
    b = statistics.median(bare.wall)
    for i, v in enumerate(live):
        y = top + i * row
        med, tail = statistics.median(v.wall) - b, p95(v.wall) - b
        colour = "#3b7dd8" if "aasm" in v.name else "#999999"
        out.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end">{v.name}</text>')
        out.append(f'<rect x="{left}" y="{y + 3}" width="{max(0.5, med * scale):.1f}" height="14" fill="{colour}"/>')
        out.append(f'<line x1="{left + max(0, med) * scale:.1f}" y1="{y + 10}" x2="{left + max(0, tail) * scale:.1f}" '
                   f'y2="{y + 10}" stroke="#333"/>')
        out.append(f'<text x="{left + max(med, tail, 0) * scale + 4:.1f}" y="{y + 14}">+{med:.2f}</text>')
    axis_y = top + row * len(live) + 8
    out.append(f'<line x1="{left}" y1="{axis_y}" x2="{width - 60}" y2="{axis_y}" stroke="#333"/>')
    step = 1 if scale_max < 12 else 5 if scale_max < 60 else 20
    t = 0
    while t <= scale_max:
        x = left + t * scale
        out.append(f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{axis_y + 4}" stroke="#333"/>')
        out.append(f'<text x="{x:.1f}" y="{axis_y + 17}" text-anchor="middle">{t}</text>')
        t += step
    out.append("</svg>")
    return "\n".join(out) + "\n"


def host_costs(vs, over):
    """What the host charges beneath every launch, from the empty programs'
    rows: an exec, and a page first touched; and what the faults of each
    launcher cost at that price."""
    by = {v.name: v for v in vs if not v.skipped}
    empty, paged = by.get("host: an empty program"), by.get("host: the same, 100 fresh pages")
    if not (empty and paged):
        return []
    page_us = (statistics.median(paged.wall) - statistics.median(empty.wall)) * 10
    faults = statistics.median(paged.faults) - statistics.median(empty.faults)
    lines = ["", f"The host's own prices, from the two empty programs in the same rounds: an exec and exit of a program "
                 f"with no start-up code, **{over['host: an empty program']:+.3f} ms** against bare `/bin/true` (which "
                 f"pays its dynamic loader's start-up on top); a page first touched, **{page_us:.1f} µs** "
                 f"({faults:.0f} more faults for 100 pages)."]
    if "floor: spawn only" in by and "aasm minimal" in by:
        extra = statistics.median(by["aasm minimal"].faults) - statistics.median(by["floor: spawn only"].faults)
        lines[-1] += (f" aasm minimal takes {extra:.0f} page faults more than the floor: at that price about "
                      f"{extra * page_us / 1000:.2f} ms of its +{over['aasm minimal'] - over['floor: spawn only']:.3f} ms "
                      f"over the floor.")
    return lines


def host_line():
    lines = open("/proc/cpuinfo").read().splitlines()
    model = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("model name")), "?")
    cpus = os.cpu_count()
    try:
        distro = next(l.split("=", 1)[1].strip().strip('"') for l in open("/etc/os-release") if l.startswith("PRETTY_NAME="))
    except (OSError, StopIteration):
        distro = "?"
    load = open("/proc/loadavg").read().split()[:3]
    return f"{distro}, Linux {platform.release()}, {cpus} CPUs ({model}), load average {' '.join(load)} at the start"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--real-rounds", type=int, default=7)
    ap.add_argument("--compile-rounds", type=int, default=21)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs/bench"))
    ap.add_argument("--workdir", default="/var/tmp/aasm-bench")
    ap.add_argument("--skip-real-work", action="store_true")
    ap.add_argument("--compare", action="append", default=[], metavar="LABEL=AASM_LAUNCH",
                    help="also time another aasm-launch (a build before a change) in the same rounds")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    if args.rounds < 200:
        say(f"bench: note: {args.rounds} launch rounds (issue 26 asks for at least 200 for the record)")
    work = os.path.join(args.workdir, "ws")
    make_workspace(work)
    commit = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %s"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    host = host_line()
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "LC_ALL": "C", "TERM": "dumb"}
    report = [f"<!-- Written by `./run bench` (tests/bench/run_bench.py); do not edit: run it again. -->",
              "# Benchmark results (`./run bench`)", "",
              f"Run {started} at commit `{commit}`{' (with uncommitted changes)' if dirty else ''}, as "
              f"{'root' if os.geteuid() == 0 else 'uid ' + str(os.geteuid())}, build `{build}`; host: {host}.", "",
              "```sh", ("./run bench" if args.rounds == 200 else f"AASM_BENCH_ROUNDS={args.rounds} ./run bench"),
              "# which runs: python3 tests/bench/run_bench.py " + " ".join(sys.argv[1:]), "```", ""]

    with tempfile.TemporaryDirectory(prefix="aasm-bench-") as scratch:
        say("bench: launch: compiling the plans")
        vs = launch_variants(build, work, scratch, [c.split("=", 1) for c in args.compare])
        failed = bench_launch(vs, args.rounds, work, env)
    bare = vs[0]
    b = statistics.median(bare.wall)
    bare_cpu = statistics.median(bare.cpu)
    over = {v.name: statistics.median(v.wall) - b for v in vs if not v.skipped}
    table = ["## Launch: `/bin/true` under each launcher", "",
             f"{args.rounds} interleaved rounds after {WARMUP} warm-up rounds (every variant once per round, shuffled, "
             f"seed {SEED}), from a git workspace; wall ms from before `posix_spawn` to after `wait4`; CPU ms as "
             f"`wait4` reports it (the launcher and the processes it waited for); peak RSS: GNU time's `%M` (the "
             f"largest process of the tree), median of 5; page faults: `wait4`'s minor faults (the launcher and the "
             f"processes it waited for), median; system calls: `strace -f -c`, one launch. {failed} failed launches.",
             "", "| variant | median ms | p95 ms | overhead, median | overhead, p95 | CPU ms | peak RSS KiB | page faults "
             "| system calls |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for v in vs:
        if v.skipped:
            table.append(f"| {v.name} | skipped: {v.skipped} | | | | | | | |")
            continue
        med, tail = statistics.median(v.wall), p95(v.wall)
        ov = "" if v is bare else f"{med - b:+.3f}"
        ovp = "" if v is bare else f"{tail - p95(bare.wall):+.3f}"
        table.append(f"| {v.name} | {med:.3f} | {tail:.3f} | {ov} | {ovp} | {statistics.median(v.cpu):.3f} | "
                     f"{v.rss_kib if v.rss_kib is not None else '-'} | {statistics.median(v.faults):.0f} | "
                     f"{v.syscalls if v.syscalls is not None else '-'} |")
    table += ["", "What each variant runs:", ""] + [f"- **{v.name}**: {v.what}" for v in vs] + [""]

    def ratio(a, b_):
        return over[a] / over[b_] if a in over and b_ in over and over[b_] > 0 else None

    goals = ["### Issue 26's goals, on this run's medians", "", "| goal | measured | |", "|---|---|---|"]

    def goal(text, value, ok, unit=""):
        if value is None:
            goals.append(f"| {text} | not measured (a variant was skipped) | |")
        else:
            goals.append(f"| {text} | {value:{'.3f' if unit else '.2f'}}{unit} | {'met' if ok(value) else '**not met**'} |")

    goal("aasm minimal <= +1.0 ms over bare", over.get("aasm minimal"), lambda x: x <= 1.0, " ms")
    goal("bwrap's overhead / aasm minimal's >= 5", ratio("bwrap", "aasm minimal"), lambda x: x >= 5)
    goal("bwrap's overhead / aasm coding-agent's (filesystem view) >= 3", ratio("bwrap", "aasm coding-agent"), lambda x: x >= 3)
    cg = over.get("aasm minimal + cgroup"), over.get("aasm minimal")
    goal("cgroup: aasm minimal + cgroup - aasm minimal <= +0.5 ms",
         cg[0] - cg[1] if None not in cg else None, lambda x: x <= 0.5, " ms")
    hosts = over.get("aasm minimal + hosts"), over.get("aasm minimal + net namespace")
    goal("issue 27: the broker, aasm minimal + hosts - the same with a bare net namespace <= +1.0 ms",
         hosts[0] - hosts[1] if None not in hosts else None, lambda x: x <= 1.0, " ms")
    ci = over.get("aasm ci-build"), over.get("aasm ci-build, no cgroup")
    goal("cgroup: aasm ci-build - the same without its cgroup <= +0.5 ms",
         ci[0] - ci[1] if None not in ci else None, lambda x: x <= 0.5, " ms")
    floor = over.get("floor: spawn only")
    if floor is not None:
        goals += ["", f"The floor of any separate launcher process on this host (its exec, start-up, exit and one more "
                      f"process start, nothing confined): **+{floor:.3f} ms** over bare. The best ratio to bwrap any "
                      f"launcher could reach here: "
                      + (f"{over['bwrap'] / floor:.1f}x" if "bwrap" in over and floor > 0 else "-")
                      + "; aasm minimal over that floor: "
                      + (f"+{over['aasm minimal'] - floor:.3f} ms" if "aasm minimal" in over else "-") + "."]
    goals += host_costs(vs, over)
    # The kernel's own price of the run's v1 groups, without aasm around it
    # (tests/bench/launch/cgroup_floor.cpp): the floor beside the cgroup goals.
    cg_floor = subprocess.run(["nice", "-n", "-20", os.path.join(build, "tests/bench/launch/bench-cgroup-floor"),
                               "--rounds", "300"], capture_output=True, text=True)
    if cg_floor.returncode == 0:
        goals += ["", "The kernel's floor of the run's cgroup on this host (`nice -n -20 bench-cgroup-floor --rounds "
                      "300`: the coding agent's three v1 groups made, limited, entered and removed, and the host "
                      "discovery, with nothing of aasm's around them):", "", "```", cg_floor.stdout.strip(), "```"]
    else:
        goals += ["", "bench-cgroup-floor failed: " + (cg_floor.stderr.strip().splitlines() or ["?"])[-1]]
    say("\n".join(table + goals))

    svg = svg_plot(vs, bare)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "launch.svg"), "w") as f:
        f.write(svg)
    report += table + goals + ["", "![launch overhead](launch.svg)", ""]

    if args.skip_real_work:
        report += ["## Real work", "", "Skipped (`--skip-real-work`).", ""]
    else:
        say("bench: real work (tests/bench/launch/real_work.py)")
        real = subprocess.run([sys.executable, os.path.join(ROOT, "tests/bench/launch/real_work.py"),
                               os.path.join(build, "compiler/aasmc"), os.path.join(build, "launcher/aasm-launch"),
                               os.path.join(build, "tests/bench/launch/bench-view-cost"), "--rounds",
                               str(args.real_rounds), "--workdir", os.path.join(args.workdir, "real-work"),
                               "--markdown"], stdout=subprocess.PIPE, text=True)
        if real.returncode:
            sys.exit("bench: the real-work benchmark failed (its message is above)")
        say(real.stdout)
        report += ["## Real work", "", f"`tests/bench/launch/real_work.py ... --rounds {args.real_rounds}` "
                   "(docs/benchmarks.md, \"Real work under the filesystem view\", says what each variant runs):", "",
                   real.stdout.strip(), ""]

    say(f"bench: egress ({EGRESS_MIB} MiB over loopback, direct and through the broker)")
    report += bench_egress(build, args.workdir, args.real_rounds) + [""]

    say("bench: compile (aasmc compile of each shipped profile)")
    with tempfile.TemporaryDirectory(prefix="aasm-bench-compile-") as cwork:
        compiled = bench_compile(build, args.compile_rounds, cwork)
    ctable = ["## Compile: `aasmc compile POLICY -o PLAN`", "",
              f"{args.compile_rounds} interleaved rounds after 1 warm-up; wall ms; peak RSS: GNU time's `%M`.", "",
              "| policy | median ms | p95 ms | peak RSS KiB |", "|---|---:|---:|---:|"]
    for k, (med, tail, rss) in compiled.items():
        ctable.append(f"| {k} | {med:.1f} | {tail:.1f} | {rss} |")
    say("\n".join(ctable))
    report += ctable + [""]
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write("\n".join(report))
    say(f"bench: written {os.path.relpath(os.path.join(args.out, 'results.md'), ROOT)} and launch.svg")


if __name__ == "__main__":
    main()
