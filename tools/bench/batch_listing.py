#!/usr/bin/python3
"""The Batch service with many tasks stored:

1. N trivial tasks (`/bin/true`, default 10,000) run in one job on 4 nodes x 16 slots, added in
   collections of 100; then listed with `$filter=state eq 'completed'` and
   `$select=id,state,executionInfo` in pages of `maxresults` (default 1000, the service's most for
   tasks), as the SDK's list pages them: ms per page (p50, max), every round.
2. the emulator's memory (VmRSS) with those tasks stored, and again with `--stored` tasks
   (default 100,000: more collections of the same tasks, run at once), then one listing of
   them all the same way.

The pages are fetched with `requests` and a SharedKey signature (the azure-batch SDK's own auth
class), timed from the request to the last byte, before the JSON is parsed: what the client
costs is the same for every page and small beside the server's work.

Usage: tools/bench/batch_listing.py [--build DIR] [--tasks N] [--stored N] [--page N] [--rounds N]
"""
import argparse
import os
import statistics
import sys
import time

import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402
from azure.batch import BatchServiceClient  # noqa: E402
from azure.batch import models as bm  # noqa: E402
from azure.batch.batch_auth import SharedKeyAuth, SharedKeyCredentials  # noqa: E402
from test_batch_pools import API, DEV_BATCH, DEV_BATCH_KEY, vm_configuration  # noqa: E402
from process_stats import status_mib  # noqa: E402


def run_tasks(client, job, first, count):
    start = time.perf_counter()
    for low in range(first, first + count, 100):
        client.task.add_collection(job, [bm.TaskAddParameter(id=f"t{i}", command_line="/bin/true")
                                         for i in range(low, min(low + 100, first + count))])
    while client.job.get_task_counts(job).task_counts.completed < first + count:
        time.sleep(0.2)
    return time.perf_counter() - start


def list_pages(url, job, page):
    """Every page of the completed tasks: (ms per page, tasks listed)."""
    auth = SharedKeyAuth("authorization", DEV_BATCH, DEV_BATCH_KEY)
    session = requests.Session()
    link = (f"{url}/jobs/{job}/tasks?api-version={API}&maxresults={page}"
            f"&$filter=state%20eq%20'completed'&$select=id,state,executionInfo")
    times, listed = [], 0
    while link:
        start = time.perf_counter()
        answer = session.get(link, auth=auth, headers={"Accept": "application/json"})
        answer.content  # noqa: B018 (read to the last byte)
        times.append((time.perf_counter() - start) * 1000)
        answer.raise_for_status()
        body = answer.json()
        listed += len(body["value"])
        link = body.get("odata.nextLink")
    return times, listed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--stored", type=int, default=100_000)
    parser.add_argument("--page", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    emulator = os.path.join(args.build, "emulator", "batchai-emulator")

    with harness.Emulator(command=[emulator]) as emu:
        url = emu.endpoints["batch"]
        client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=url)
        client.pool.add(bm.PoolAddParameter(id="many", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
                                            target_dedicated_nodes=4, task_slots_per_node=16))
        client.job.add(bm.JobAddParameter(id="listed", pool_info=bm.PoolInformation(pool_id="many")))
        harness.wait_for(lambda: len([n for n in client.compute_node.list("many") if n.state == bm.ComputeNodeState.idle]) == 4,
                         what="the nodes to be idle")
        wall = run_tasks(client, "listed", 0, args.tasks)
        memory_first = status_mib(emu.process.pid)
        rounds = []
        for _ in range(args.rounds):
            times, listed = list_pages(url, "listed", args.page)
            if listed != args.tasks:
                sys.exit(f"listed {listed} tasks, not {args.tasks}")
            rounds.append(times)
        stored_wall = run_tasks(client, "listed", args.tasks, args.stored - args.tasks) if args.stored > args.tasks else 0
        memory_stored = status_mib(emu.process.pid)
        stored_times, listed = list_pages(url, "listed", args.page) if args.stored > args.tasks else ([], args.stored)
        if listed != args.stored:
            sys.exit(f"listed {listed} tasks, not {args.stored}")
        memory_listed = status_mib(emu.process.pid)

    every = [t for times in rounds for t in times]
    print(f"{args.tasks} tasks run in {wall:.1f} s ({args.tasks / wall:.0f}/s)")
    print("| measure | emulator |")
    print("|---|---|")
    print(f"| {args.tasks} completed tasks listed in pages of {args.page} with $filter and $select: "
          f"ms per page, p50 (max) over {args.rounds} rounds | {statistics.median(every):.1f} ({max(every):.1f}) |")
    print(f"| a whole listing ({len(rounds[0])} pages), ms, median of the rounds | "
          f"{statistics.median(sum(times) for times in rounds):.0f} |")
    print(f"| emulator memory with {args.tasks} tasks stored, MiB RSS | {memory_first:.0f} |")
    if args.stored > args.tasks:
        print(f"| {args.stored - args.tasks} more tasks run: tasks/s | {(args.stored - args.tasks) / stored_wall:.0f} |")
        print(f"| emulator memory with {args.stored} tasks stored, MiB RSS | {memory_stored:.0f} |")
        print(f"| the {args.stored} listed in pages of {args.page} with $filter and $select: ms per page, p50 (max), "
              f"one round | {statistics.median(stored_times):.1f} ({max(stored_times):.1f}) |")
        print(f"| emulator memory after that listing, MiB RSS | {memory_listed:.0f} |")
    for i, times in enumerate(rounds):
        print(f"round {i + 1}: " + " ".join(f"{t:.1f}" for t in times))


if __name__ == "__main__":
    main()
