#!/usr/bin/env python3
"""The launch's system-call budget (issue 26): a regression guard that a
noisy machine cannot flake.

Counts, with `strace -f -c`, the system calls of one launch of the minimal
plan (tests/bench/launch/minimal.yaml: Landlock and the default allowlist)
running /bin/true, less those of bare /bin/true (so the command's own libc
start-up does not count), and fails when that count passes the budget
recorded in tests/budget/launch-syscalls.txt plus its headroom. A wall-time
threshold would flake on a busy host; a count does not, but a few calls
depend on which of two processes gets somewhere first (the futex hand-over
of the seccomp listener, the supervision loop's polls, the audit socket's
reads). So the child's seccomp() calls, its last steps before the hand-over,
are held DELAY_US each (strace's --inject delay_exit): the supervisor is
then always the one that waits there, and a wait that polls on a timer
instead of sleeping until woken (the 1 ms futex timeouts issue 26 found)
shows as several calls more in every run. Each side is counted RUNS times
and the smallest total kept: a real addition shows in every run.

  launch_syscalls.py AASMC AASM_LAUNCH            check against the budget
  launch_syscalls.py --record AASMC AASM_LAUNCH   write the budget anew
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUDGET = os.path.join(HERE, "launch-syscalls.txt")
POLICY = os.path.join(HERE, "..", "bench", "launch", "minimal.yaml")
RUNS = 5
DELAY_US = 5000
# Calls that still vary between runs (the supervision loop sees the
# listener's end and the command's exit in one poll or two) or between hosts
# of a kind (glibc's start-up of the static launcher).
DEFAULT_HEADROOM = 4
RECORD_COMMAND = "python3 tests/budget/launch_syscalls.py --record build/compiler/aasmc build/launcher/aasm-launch"


def fail(message):
    print("launch-syscalls: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def strace_counts(argv, cwd, env):
    """{syscall: calls} of one run of argv under strace -f -c, seccomp() held."""
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as out:
        done = subprocess.run(["strace", "-f", "-c", "-o", out.name, f"--inject=seccomp:delay_exit={DELAY_US}"] + argv, cwd=cwd, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            fail(f"{' '.join(argv)} exited {done.returncode} under strace:\n{done.stderr}")
        counts = {}
        for line in out.read().splitlines():
            fields = line.split()
            # "% time seconds usecs/call calls [errors] syscall"
            if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
                counts[fields[-1]] = counts.get(fields[-1], 0) + int(fields[3])
        if not counts:
            fail(f"strace printed no counts for {' '.join(argv)}")
        return counts


def fewest(argv, cwd, env):
    return min((strace_counts(argv, cwd, env) for _ in range(RUNS)), key=lambda c: sum(c.values()))


def read_budget():
    budget, headroom, by_call = None, DEFAULT_HEADROOM, {}
    with open(BUDGET) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) != 2:
                continue
            if line[0] == "total":
                budget = int(line[1])
            elif line[0] == "headroom":
                headroom = int(line[1])
            else:
                by_call[line[0]] = int(line[1])
    if budget is None:
        fail(f"{BUDGET} has no 'total N' line; record one: {RECORD_COMMAND}")
    return budget, headroom, by_call


def write_budget(own, headroom):
    with open(BUDGET, "w") as f:
        f.write("# Written by tests/budget/launch_syscalls.py --record: the system calls of one launch of\n"
                "# tests/bench/launch/minimal.yaml's plan running /bin/true (strace -f -c: launcher, child\n"
                "# and janitor; the child's seccomp() held %d us each), less bare /bin/true's, the smallest\n"
                "# of %d runs. The test fails when a launch makes more than total + headroom. Record anew\n"
                "# only for calls the launch needs, and say why in the commit.\n" % (DELAY_US, RUNS))
        f.write(f"total {sum(own.values())}\nheadroom {headroom}\n# by call\n")
        for name, n in sorted(own.items(), key=lambda kv: (-kv[1], kv[0])):
            if n:
                f.write(f"{name} {n}\n")


def main():
    args = sys.argv[1:]
    record = "--record" in args
    args = [a for a in args if a != "--record"]
    if len(args) != 2:
        fail("usage: launch_syscalls.py [--record] AASMC AASM_LAUNCH")
    aasmc, launcher = (os.path.abspath(a) for a in args)
    if not shutil.which("strace"):
        fail("strace is not installed (./run deps installs it); the budget cannot be checked")
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    with tempfile.TemporaryDirectory(prefix="aasm-budget-") as work:
        plan = os.path.join(work, "minimal.bin")
        compiled = subprocess.run([aasmc, "compile", POLICY, "-o", plan], cwd=work, capture_output=True, text=True)
        if compiled.returncode != 0:
            fail(f"aasmc compile {POLICY} failed:\n{compiled.stderr}")
        bare = fewest(["/bin/true"], work, env)
        launch = fewest([launcher, plan, "--", "/bin/true"], work, env)
    own = {name: launch.get(name, 0) - bare.get(name, 0) for name in set(launch) | set(bare)}
    total = sum(own.values())
    if record:
        headroom = read_budget()[1] if os.path.exists(BUDGET) else DEFAULT_HEADROOM
        write_budget(own, headroom)
        print(f"launch-syscalls: recorded {total} own system calls per launch in {BUDGET}")
        return
    budget, headroom, by_call = read_budget()
    changed = [(name, by_call.get(name, 0), own.get(name, 0)) for name in sorted(set(by_call) | set(own))
               if by_call.get(name, 0) != own.get(name, 0)]
    print(f"launch-syscalls: {total} own system calls per launch of the minimal plan "
          f"(launcher {sum(launch.values())}, bare /bin/true {sum(bare.values())}; smallest of {RUNS} runs); "
          f"budget {budget} + headroom {headroom}")
    for name, was, now in changed:
        print(f"  {name:24s} recorded {was:4d}  now {now:4d}  ({now - was:+d})")
    if total > budget + headroom:
        fail(f"one launch makes {total} own system calls, more than the budget of {budget} + {headroom} headroom "
             f"recorded in {os.path.relpath(BUDGET)} (the calls that grew are listed above). Every call before the "
             f"command's exec is launch latency: remove the new calls, or, if the launch needs them, record the "
             f"budget anew and say why in the commit: {RECORD_COMMAND}")
    if total < budget - headroom:
        print(f"launch-syscalls: note: {budget - total} calls under the budget; record it anew to keep the guard "
              f"tight: {RECORD_COMMAND}")


if __name__ == "__main__":
    main()
