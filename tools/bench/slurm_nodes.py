#!/usr/bin/python3
"""Nodes on Slurm against nodes on this machine, side by side (not in CI; needs root, slurm-wlm and
munge: the tests' two-host cluster of tests/integration/slurm_cluster.py is started here):

1. a node's allocation: a 1-node cluster created -> its node idle (local: directories and setup;
   Slurm: a holder job submitted, scheduled and running, then the same), created and deleted again
   each round, the two emulators alternating;
2. submit -> running on an idle node: the client sends a job's PUT, the job's process prints its
   start time (`date +%s.%N`, the same clock on the head and the hosts of the test cluster);
3. N trivial jobs (`true`) queued on a 2-node cluster (one node per host under Slurm): wall time,
   jobs/s, and the CPU per job of the emulator and of its child processes (srun clients).

Three emulators side by side: local, Slurm with the data directory shared by the hosts, and Slurm
with --slurm-storage rest (the data directory hidden on the hosts by an empty tmpfs: a node's
directories and each job's are copied to its host by an srun step).

Usage: tools/bench/slurm_nodes.py [--build DIR] [--rounds R] [--samples N] [--jobs N]
"""
import argparse
import concurrent.futures
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from job_latency import SUB, WS, Bench, percentile, submit_to_running  # noqa: E402
from process_stats import cpu_seconds  # noqa: E402
from slurm_cluster import SlurmCluster  # noqa: E402


def prepare(emu):
    b = Bench(emu.endpoints)
    b.call("PUT", f"/subscriptions/{SUB}/resourcegroups/bench", {"location": "eastus"}, api_version="2021-04-01")
    b.call("PUT", f"{WS}", {"location": "eastus"})
    b.call("PUT", f"{WS}/experiments/e")
    return b


def allocation_seconds(b, name):
    started = time.perf_counter()
    b.cluster(name, 1)  # returns once the node is idle
    took = time.perf_counter() - started
    b.call("DELETE", f"{WS}/clusters/{name}")
    harness.wait_for(lambda: b.session.get(f"{b.ep['arm']}{WS}/clusters/{name}?api-version=2018-05-01",
                                           timeout=30).status_code == 404, timeout=120, what="the cluster gone")
    return took


def many_jobs(b, emu, jobs, prefix):
    b.call("PUT", f"{WS}/clusters/pair", {"properties": {
        "vmSize": "STANDARD_D2", "scaleSettings": {"manual": {"targetNodeCount": 2}},
        "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "Pw-123456"}}})
    harness.wait_for(lambda: b.call("GET", f"{WS}/clusters/pair").json()["properties"]
                     .get("nodeStateCounts", {}).get("idleNodeCount") == 2, timeout=120, what="two nodes")
    names = [f"{prefix}{i}" for i in range(jobs)]
    cpu_before = cpu_seconds(emu.process.pid)
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda n: Bench(emu.endpoints).submit(n, "pair", "true"), names))
    harness.wait_for(lambda: all(b.job(n)["executionState"] in ("succeeded", "failed") for n in names[-4:]) and
                     sum(1 for n in names if b.job(n)["executionState"] == "succeeded") == jobs,
                     timeout=1800, interval=0.5, what="the jobs")
    wall = time.perf_counter() - started
    cpu = [after - before for after, before in zip(cpu_seconds(emu.process.pid), cpu_before)]
    # Its nodes hold both hosts: given back before the next emulator's cluster asks for them.
    b.call("DELETE", f"{WS}/clusters/pair")
    harness.wait_for(lambda: b.session.get(f"{b.ep['arm']}{WS}/clusters/pair?api-version=2018-05-01",
                                           timeout=30).status_code == 404, timeout=120, what="the cluster gone")
    return wall, cpu[0], cpu[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=200)
    args = parser.parse_args()
    harness.EMULATOR = os.path.join(args.build, "emulator", "batchai-emulator")
    cluster = SlurmCluster(hosts=2)
    reason = cluster.cannot_start()
    if reason:
        sys.exit(f"cannot start the test Slurm cluster: {reason}")
    cluster.start()
    common = ["--lro-delay", "0", "--gpus", "none"]
    try:
        with harness.Emulator(args=common) as local, harness.Emulator(env=cluster.env(), args=common + [
                "--compute", "slurm", "--slurm-partition", "main"]) as slurm, harness.Emulator(
                env=cluster.env(), args=common + ["--compute", "slurm", "--slurm-partition", "main",
                                                  "--slurm-storage", "rest"]) as rest:
            cluster.hide_on_hosts(rest.location)
            sides = {"local": (local, prepare(local)), "slurm": (slurm, prepare(slurm)), "rest": (rest, prepare(rest))}
            names = list(sides)
            alloc = {side: [] for side in names}
            for r in range(args.rounds):
                for side in names[r % 3:] + names[:r % 3]:  # each goes first in turn
                    alloc[side].append(allocation_seconds(sides[side][1], f"alloc{r}"))
            latency = {}
            for side in names:
                emu, b = sides[side]
                b.cluster("warm", 1)
                latency[side] = submit_to_running(b, emu.location, "warm", args.samples, "lat")[0]
                b.call("DELETE", f"{WS}/clusters/warm")
            time.sleep(2)
            throughput = {side: many_jobs(sides[side][1], sides[side][0], args.jobs, "many") for side in names}
            cluster.show_on_hosts(rest.location)
    finally:
        cluster.stop()

    print(f"machine: {os.cpu_count()} cores; Slurm: 2 slurmd hosts in namespaces (2 CPUs each); "
          f"emulator {harness.EMULATOR}\n")
    print("| measure | local | Slurm | Slurm, --slurm-storage rest | Slurm / local | rest / local |")
    print("|---|---|---|---|---|---|")
    a = {side: statistics.median(alloc[side]) for side in alloc}
    rounds = " / ".join(str(['%.2f' % x for x in alloc[side]]) for side in alloc)
    print(f"| a node's allocation (create -> idle), median s; rounds {rounds} | {a['local']:.2f} | {a['slurm']:.2f} | "
          f"{a['rest']:.2f} | {a['slurm'] / a['local']:.1f}x | {a['rest'] / a['local']:.1f}x |")
    p50 = {side: percentile(latency[side], 50) for side in latency}
    p90 = " / ".join(f"{percentile(latency[side], 90):.0f}" for side in latency)
    print(f"| submit -> process running on an idle node, p50 ms (p90 {p90}) | {p50['local']:.0f} | {p50['slurm']:.0f} | "
          f"{p50['rest']:.0f} | {p50['slurm'] / p50['local']:.1f}x | {p50['rest'] / p50['local']:.1f}x |")
    wall = {side: throughput[side][0] for side in throughput}
    print(f"| {args.jobs} trivial jobs over 2 nodes, jobs/s | {args.jobs / wall['local']:.1f} | {args.jobs / wall['slurm']:.1f} | "
          f"{args.jobs / wall['rest']:.1f} | {wall['slurm'] / wall['local']:.1f}x the time | {wall['rest'] / wall['local']:.1f}x the time |")
    for i, what in ((1, "the emulator's CPU per job, ms"),
                    (2, "its child processes' CPU per job (shells, sandboxes; srun clients; tar), ms")):
        ms = {side: throughput[side][i] * 1000 / args.jobs for side in throughput}
        print(f"| {what} | {ms['local']:.1f} | {ms['slurm']:.1f} | {ms['rest']:.1f} | "
              f"{ms['slurm'] / max(ms['local'], 1e-9):.1f}x | {ms['rest'] / max(ms['local'], 1e-9):.1f}x |")


if __name__ == "__main__":
    main()
