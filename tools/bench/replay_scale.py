#!/usr/bin/env python3
"""The replay's scale benchmark (not in CI): a scenario of 1000 declared-workload jobs over 7
virtual days on a 100-node auto-scaling low-priority cluster, with a pre-emption every 4 hours,
replayed by `batchai-emulator replay`. Reports the wall time, the virtual time and their ratio.

With --baseline OTHER (another build's batchai-emulator), each run replays the scenario with both,
alternating which goes first, and reports each run's wall and CPU time (user + system, the
replay's process and what it started) and the ratio of the medians: a change measured side by
side in one sitting, as this machine's speed varies from hour to hour.

Usage: tools/bench/replay_scale.py [--emulator build/emulator/batchai-emulator] [--jobs 1000]
       [--days 7] [--runs 3] [--keep FILE] [--baseline OTHER_EMULATOR]"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def scenario(jobs, days):
    hours = days * 24
    lines = [
        f"name {jobs} jobs over {days} virtual days on a 100-node auto-scaling low-priority cluster",
        "emulator --autoscale-idle 600000",
    ]
    # Five workloads of 2 to 6 hours.
    for k in range(5):
        lines.append(f'workload w{k} duration {2 + k}h prints "epoch 1" prints "epoch 2"')
    lines += [
        "set ws = /subscriptions/${subscription}/resourceGroups/scale/providers/Microsoft.BatchAI/workspaces/ws",
        "set v = api-version=2018-05-01",
        "request PUT arm /subscriptions/${subscription}/resourceGroups/scale?api-version=2021-04-01",
        '{"location": "eastus"}',
        "request PUT arm ${ws}?${v}",
        '{"location": "eastus"}',
        "request PUT arm ${ws}/experiments/exp?${v}",
        "{}",
        "request PUT arm ${ws}/clusters/pool?${v}",
        '{"properties": {"vmSize": "STANDARD_NC6", "vmPriority": "lowpriority",',
        '  "scaleSettings": {"autoScale": {"minimumNodeCount": 0, "maximumNodeCount": 100, "initialNodeCount": 0}},',
        '  "userAccountSettings": {"adminUserName": "demo", "adminUserPassword": "Demo-Pass-1"}}}',
        "expect status 202",
    ]
    submitted = 0
    batches = []
    for hour in range(hours):
        batch = []
        due = round(jobs * (hour + 1) / hours) - submitted
        for _ in range(due):
            name = f"j{submitted:04d}"
            batch.append((name, submitted % 5))
            lines.append(f"request PUT arm ${{ws}}/experiments/exp/jobs/{name}?${{v}}")
            lines.append('{"properties": {"cluster": {"id": "${ws}/clusters/pool"}, "nodeCount": 1,'
                         ' "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP",'
                         f' "customToolkitSettings": {{"commandLine": "workload w{submitted % 5}"}}}}}}')
            submitted += 1
        batches.append(batch)
        lines.append("advance 1h")
        # Every 4 hours a node is pre-empted: the one running the first job submitted an hour
        # ago (all of them last 2 hours or more, and the cluster is never full, so it runs).
        if hour % 4 == 3 and batches[-1]:
            lines.append(f"fault preempt job {batches[-1][0][0]}")
    lines.append("advance 12h")
    lines.append("request GET arm ${ws}/clusters/pool?${v}")
    lines.append("expect json /properties/currentNodeCount == 0")
    lines.append(f"expect states {batches[3][0][0]} queued running queued running succeeded")
    lines.append(f"request GET arm ${{ws}}/experiments/exp/jobs/j{jobs - 1:04d}?${{v}}")
    lines.append('expect json /properties/executionState == "succeeded"')
    return "\n".join(lines) + "\n", submitted


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--emulator", default=os.path.join(ROOT, "build", "emulator", "batchai-emulator"))
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", help="also write the scenario to this file")
    parser.add_argument("--baseline", help="another build's batchai-emulator, run alternately beside this one")
    args = parser.parse_args()
    text, jobs = scenario(args.jobs, args.days)
    if args.keep:
        with open(args.keep, "w") as f:
            f.write(text)
    with tempfile.NamedTemporaryFile("w", suffix=".scenario", delete=False) as f:
        f.write(text)
        path = f.name
    builds = [args.emulator] + ([args.baseline] if args.baseline else [])
    walls = {b: [] for b in builds}
    cpus = {b: [] for b in builds}
    reported = None
    try:
        for run in range(args.runs):
            for build in builds if run % 2 == 0 else builds[::-1]:
                before = os.times()
                started = time.monotonic()
                done = subprocess.run([build, "replay", path], capture_output=True, text=True)
                walls[build].append(time.monotonic() - started)
                after = os.times()
                cpus[build].append(after.children_user - before.children_user +
                                   after.children_system - before.children_system)
                if done.returncode != 0:
                    sys.stdout.write(build + ": " + done.stdout + done.stderr)
                    return 1
                if build == args.emulator:
                    reported = done.stdout.strip()
    finally:
        os.unlink(path)
    m = re.search(r"(\d+) events, (\S+) of virtual time in ([\d.]+) s", reported)
    events, virtual = int(m.group(1)), m.group(2)
    d, rest = virtual.split("d")
    h, mi, s = rest.split(":")
    virtual_s = int(d) * 86400 + int(h) * 3600 + int(mi) * 60 + float(s)
    median = statistics.median(walls[args.emulator])
    print(f"scenario: {jobs} declared-workload jobs, {args.days} virtual days, auto-scale 0..100 low-priority nodes, "
          f"a pre-emption every 4 h")
    print(f"trace: {events} events; virtual time {virtual} ({virtual_s:.0f} s)")
    mine = walls[args.emulator]
    print(f"wall time (whole command, {args.runs} runs): median {median:.3f} s, min {min(mine):.3f} s, max {max(mine):.3f} s")
    if args.baseline:
        def rounds(values):
            return ", ".join(f"{v:.2f}" for v in values)
        for name, build in (("this build", args.emulator), ("baseline", args.baseline)):
            print(f"{name}: wall {statistics.median(walls[build]):.3f} s ({rounds(walls[build])}), "
                  f"CPU {statistics.median(cpus[build]):.3f} s ({rounds(cpus[build])})")
        print(f"this build / baseline, medians: wall {median / statistics.median(walls[args.baseline]):.3f}, "
              f"CPU {statistics.median(cpus[args.emulator]) / statistics.median(cpus[args.baseline]):.3f}; "
              f"runs alternate which goes first")
    print(f"time compression: x{virtual_s / median:,.0f} (target: under 0.5 s of wall time)")
    print(f"command: {' '.join([os.path.relpath(args.emulator), 'replay', '<generated scenario>'])} "
          f"(tools/bench/replay_scale.py --keep FILE writes it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
