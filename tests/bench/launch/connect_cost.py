#!/usr/bin/env python3
"""The cost of the supervisor's connect() answers (docs/benchmarks.md).

Where the Landlock ruleset handles TCP connect, every connect() of the
command makes a round trip to the supervisor (supervisor/connect_answers.h).
This runs one python3 process per plan and round, each timing COUNT
connect() calls to a loopback port nothing listens on (so no listener's
accept() is measured: the kernel answers ECONNREFUSED itself), in a shuffled
order (fixed seed):

  allowed, answered  outbound allows the port: the supervisor continues the
                     call, the kernel refuses it
  refused, answered  the port is outside outbound.allow: the supervisor
                     answers ECONNREFUSED
  no answers         no network node: the kernel alone

and prints the median microseconds per connect() of each, and the cost of
the answers over the kernel alone.

    connect_cost.py AASMC AASM_LAUNCH [ROUNDS] [COUNT]
"""
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile

POLICY = """apiVersion: aasm.dev/v1
kind: Policy
metadata: {{name: connect-cost, tier: agent}}
spec:
  filesystem:
    read: {{allow: ["/usr", "/etc", "/proc"]}}
    write: {{allow: []}}
    execute: {{allow: ["/usr"]}}
{network}"""

CLIENT = """
import socket, sys, time
port, count = int(sys.argv[1]), int(sys.argv[2])
start = time.perf_counter()
for _ in range(count):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        pass
    s.close()
print((time.perf_counter() - start) / count * 1e6)
"""


def main():
    aasmc, launcher = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 21
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connect() is refused
    port = closed.getsockname()[1]
    with tempfile.TemporaryDirectory() as work:
        plans = {}
        for name, network in [("allowed", f"  network:\n    outbound: {{allow: [\"tcp:{port}\"]}}\n"),
                              ("refused", f"  network:\n    outbound: {{allow: [\"tcp:{port ^ 1}\"]}}\n"),
                              ("no answers", "")]:
            path = os.path.join(work, name.replace(" ", "-"))
            with open(path + ".yaml", "w") as f:
                f.write(POLICY.format(network=network))
            subprocess.run([aasmc, "compile", path + ".yaml", "-o", path + ".bin"], check=True)
            plans[name] = path + ".bin"
        cases = [("allowed, answered", "allowed"), ("refused, answered", "refused"), ("no answers", "no answers")]
        samples = {case: [] for case, _ in cases}
        order = list(cases)
        rng = random.Random(1)
        for _ in range(rounds):
            rng.shuffle(order)
            for case, plan in order:
                run = subprocess.run([launcher, plans[plan], "--", "/usr/bin/python3", "-c", CLIENT, str(port), str(count)],
                                     capture_output=True, text=True, check=True)
                samples[case].append(float(run.stdout))
    print(f"connect() cost, {rounds} rounds x {count} calls, median µs per call")
    medians = {case: statistics.median(values) for case, values in samples.items()}
    for case, _ in cases:
        print(f"  {case:18} {medians[case]:8.2f}")
    for case in ("allowed, answered", "refused, answered"):
        print(f"  {case} over the kernel alone: {medians[case] - medians['no answers']:+.2f} µs")


if __name__ == "__main__":
    main()
