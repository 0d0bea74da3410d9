#!/usr/bin/python3
"""The project's lean listener against Boost.Beast on Asio, each with the same trivial handler
(build/tools/http_stack_null): 4 KiB GET and PUT with the C++ load generator (1 and 8 keep-alive
clients), the server's CPU per request, and its resident memory with 1000 idle connections open.
Rounds alternate which stack goes first; the table gives every round and the geometric mean of
the rounds' ratios (lean / Beast, above 1 means the lean listener does more).

Usage: tools/bench/http_stacks.py [--build DIR] [--rounds N]
"""
import argparse
import json
import math
import os
import socket
import subprocess
import time

from process_stats import cpu_seconds, status_mib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def load(build, port, op, count, clients):
    out = subprocess.run([tool(build, "storage_load"), "--port", str(port), "--account",
                          "devstoreaccount1", "--key", KEY, "--container", "c", "--op", op, "--count", str(count),
                          "--blobs", "1000", "--size", "4096", "--clients", str(clients)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def measure(build, stack):
    server = subprocess.Popen([tool(build, "http_stack_null"), stack], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        row = {}
        for op, count, clients in (("put", 20000, 1), ("get", 40000, 1), ("get", 80000, 8)):
            before = cpu_seconds(server.pid)[0]
            r = load(build, port, op, count, clients)
            assert r["errors"] == 0, r
            cpu = cpu_seconds(server.pid)[0] - before
            row[f"{op} x{clients}"] = (r["per_second"], r["p50_ms"], cpu * 1e6 / r["requests"])
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(1000)]
        time.sleep(0.5)
        row["rss idle 1000"] = status_mib(server.pid)
        for s in idle:
            s.close()
        return row
    finally:
        server.kill()
        server.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    rounds = []
    for i in range(args.rounds):
        order = ("lean", "beast") if i % 2 == 0 else ("beast", "lean")
        results = {stack: measure(args.build, stack) for stack in order}
        rounds.append(results)
    print(f"{args.rounds} rounds, {os.cpu_count()} cores; req/s (p50 ms, server CPU us/request) per round\n")
    print("| measure | lean listener | Beast/Asio | lean / Beast (geometric mean) |")
    print("|---|---|---|---|")
    for key in ("put x1", "get x1", "get x8"):
        lean = [r["lean"][key] for r in rounds]
        beast = [r["beast"][key] for r in rounds]
        ratio = math.exp(sum(math.log(a[0] / b[0]) for a, b in zip(lean, beast)) / len(rounds))
        fmt = lambda xs: ", ".join(f"{x[0]:.0f} ({x[1]:.3f}, {x[2]:.0f})" for x in xs)
        print(f"| 4 KiB {key} | {fmt(lean)} | {fmt(beast)} | {ratio:.2f} |")
    lean = [r["lean"]["rss idle 1000"] for r in rounds]
    beast = [r["beast"]["rss idle 1000"] for r in rounds]
    print(f"| RSS with 1000 idle connections, MiB | {', '.join(f'{x:.0f}' for x in lean)} | "
          f"{', '.join(f'{x:.0f}' for x in beast)} | |")


if __name__ == "__main__":
    main()
