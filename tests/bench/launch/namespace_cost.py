#!/usr/bin/env python3
"""The cost of isolation.namespaces at launch (docs/benchmarks.md).

Compiles one plan per namespace set (the same two Landlock rules each),
then launches `aasm-launch PLAN -- /bin/true` for every plan once per round,
in a shuffled order (fixed seed), and prints medians, p95 and the cost of
each set over the plan without namespaces.

    namespace_cost.py AASMC AASM_LAUNCH [ROUNDS]
"""
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

SETS = [
    ("no namespaces", []),
    ("pid", ["pid"]),
    ("user", ["user"]),
    ("pid, ipc, uts, mount", ["pid", "ipc", "uts", "mount"]),
    ("user, pid, ipc, uts, mount", ["user", "pid", "ipc", "uts", "mount"]),
    ("pid, ipc, uts, mount, net", ["pid", "ipc", "uts", "mount", "net"]),
]

POLICY = """apiVersion: aasm.dev/v1
kind: Policy
metadata: {{name: ns-cost, tier: agent}}
spec:
  filesystem:
    read: {{allow: ["/usr", "/etc"]}}
    execute: {{allow: ["/usr"]}}
{isolation}"""


def main():
    aasmc, launcher = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 220
    warmup = 20
    with tempfile.TemporaryDirectory() as scratch:
        plans = []
        for label, names in SETS:
            isolation = f"  isolation:\n    namespaces: [{', '.join(names)}]\n" if names else ""
            source = os.path.join(scratch, f"{len(plans)}.yaml")
            plan = os.path.join(scratch, f"{len(plans)}.bin")
            with open(source, "w") as f:
                f.write(POLICY.format(isolation=isolation))
            subprocess.run([aasmc, "compile", source, "-o", plan], check=True)
            plans.append((label, plan))
        times = {label: [] for label, _ in plans}
        order = list(plans)
        shuffle = random.Random(7)
        for round_number in range(rounds + warmup):
            shuffle.shuffle(order)
            for label, plan in order:
                start = time.perf_counter()
                done = subprocess.run([launcher, plan, "--", "/bin/true"], stdout=subprocess.DEVNULL)
                elapsed = time.perf_counter() - start
                if done.returncode != 0:
                    sys.exit(f"{label}: aasm-launch exited {done.returncode}")
                if round_number >= warmup:
                    times[label].append(elapsed * 1000)
    base = statistics.median(times[SETS[0][0]])
    print(f"{rounds} rounds, {warmup} warm-up rounds dropped; ms, wall time of subprocess.run")
    print("| namespaces | median ms | p95 ms | cost over none |")
    print("|---|---:|---:|---:|")
    for label, _ in SETS:
        values = sorted(times[label])
        median = statistics.median(values)
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        cost = "-" if label == SETS[0][0] else f"+{median - base:.3f} ms"
        print(f"| {label} | {median:.3f} | {p95:.3f} | {cost} |")


if __name__ == "__main__":
    main()
