#!/usr/bin/python3
"""The daemon's memory with many stored ARM resources: creates N Batch AI jobs (default 100000)
on a cluster without nodes (so every one stays queued) with the C++ load generator, then reads
the daemon's resident memory (VmRSS, VmHWM) fresh, after the creates, after a restart on the same
data directory and after a page of the job list. Prints one table row per point.

Usage: tools/bench/arm_memory.py [--build DIR] [--jobs N] [--clients C]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402
from arm_latency import WS, create_workspace, job_body  # noqa: E402
from bench_tools import tool  # noqa: E402
from process_stats import status_mib  # noqa: E402


def memory(pid):
    return {field: status_mib(pid, field) for field in ("VmRSS", "VmHWM")}


def create_jobs(build, ep, count, clients, body_file, prefix):
    port = ep["arm"].rsplit(":", 1)[1]
    created = 0
    while created < count:
        out = subprocess.run([tool(build, "arm_load"), "--port", port, "--ca", ep["ca_cert"],
                              "--method", "PUT", "--path", f"{WS}/experiments/e/jobs/{prefix}{created}-{{n}}?api-version=2018-05-01",
                              "--clients", str(clients), "--seconds", "5", "--body", body_file],
                             check=True, capture_output=True, text=True).stdout
        result = json.loads(out)
        assert result["errors"] == 0, result
        created += result["requests"]
    return created


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--jobs", type=int, default=100000)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    harness.EMULATOR = os.path.join(args.build, "emulator", "batchai-emulator")
    location = tempfile.mkdtemp(prefix="bai-bench-memory-")
    rows = []
    with tempfile.NamedTemporaryFile("w", suffix=".json") as body:
        json.dump(job_body(), body)
        body.flush()
        with harness.Emulator(location=location, args=["--lro-delay", "0"]) as emu:
            ep = emu.endpoints
            rows.append(("fresh", 0, memory(emu.process.pid)))
            create_workspace(ep)
            started = time.monotonic()
            created = create_jobs(args.build, ep, args.jobs, args.clients, body.name, "j")
            seconds = time.monotonic() - started
            time.sleep(2)
            rows.append((f"after {created} creates ({created / seconds:.0f}/s), all queued", created, memory(emu.process.pid)))
        with harness.Emulator(location=location) as emu:
            rows.append(("restarted on them", created, memory(emu.process.pid)))
            r = harness.arm_call(emu.endpoints, "GET", f"{WS}/experiments/e/jobs?maxresults=1000")
            assert r.status_code == 200, r.text
            rows.append(("after listing 1000 of them", created, memory(emu.process.pid)))
    db = os.path.getsize(os.path.join(location, "state.db"))
    subprocess.run(["rm", "-rf", location])
    print(f"Batch AI jobs stored, state.db {db / 1048576:.0f} MiB at the end, {os.cpu_count()} cores\n")
    print("| point | jobs | RSS MiB | peak RSS MiB |")
    print("|---|---|---|---|")
    for name, jobs, m in rows:
        print(f"| {name} | {jobs} | {m['VmRSS']:.0f} | {m['VmHWM']:.0f} |")


if __name__ == "__main__":
    main()
