#!/usr/bin/python3
"""The Batch service's task path, side by side with the native machine and the cloud:

1. add-to-running and add-to-completed of one trivial task (`/bin/true`) on an idle 1-node pool,
   polled with the azure-batch SDK (get every 5 ms); the cloud's scheduling latency is seconds
   (the service documents no figure: see CLOUD_* below and where they come from).
2. 500 trivial tasks added in collections of 100 to a job on a 4-node pool with 4 slots per
   node: wall time from the first add to the last completion, tasks/s, and what `/bin/true` costs
   natively (measured here, in this run) as a floor.
3. the emulator's memory (VmRSS) after, with the tasks stored.

Usage: tools/bench/batch_tasks.py [--build DIR] [--tasks N] [--samples N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402
from azure.batch import BatchServiceClient  # noqa: E402
from azure.batch import models as bm  # noqa: E402
from azure.batch.batch_auth import SharedKeyCredentials  # noqa: E402
from test_batch_pools import DEV_BATCH, DEV_BATCH_KEY, vm_configuration  # noqa: E402
from process_stats import status_mib  # noqa: E402

# Azure Batch publishes no task latency; the service's own guidance is that a task starts "within
# seconds" of being added to an idle node, and Batch AI's submit-to-running was about 10 s
# (batchai-api.md). 2 s is taken as the cloud's best case here.
CLOUD_ADD_TO_RUNNING_MS = 2000.0


def native_true_ms(n=200):
    start = time.perf_counter()
    for _ in range(n):
        subprocess.run(["/bin/true"], check=True)
    return (time.perf_counter() - start) * 1000 / n


def wait_state(client, job, task, state, poll=0.005, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.task.get(job, task).state == state:
            return time.perf_counter()
        time.sleep(poll)
    raise TimeoutError(f"task {task} never {state}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    emulator = os.path.join(args.build, "emulator", "batchai-emulator")

    with harness.Emulator(command=[emulator]) as emu:
        client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=emu.endpoints["batch"])
        client.pool.add(bm.PoolAddParameter(id="one", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
                                            target_dedicated_nodes=1))
        client.job.add(bm.JobAddParameter(id="latency", pool_info=bm.PoolInformation(pool_id="one")))
        harness.wait_for(lambda: [n for n in client.compute_node.list("one") if n.state == bm.ComputeNodeState.idle],
                         what="the node to be idle")
        to_running, to_done = [], []
        for i in range(args.samples):
            start = time.perf_counter()
            client.task.add("latency", bm.TaskAddParameter(id=f"t{i}", command_line="/bin/sleep 0.2"))
            running = wait_state(client, "latency", f"t{i}", bm.TaskState.running)
            done = wait_state(client, "latency", f"t{i}", bm.TaskState.completed)
            to_running.append((running - start) * 1000)
            to_done.append((done - start) * 1000 - 200)  # less the task's own 0.2 s
        p50_running = statistics.median(to_running)
        p50_done = statistics.median(to_done)

        client.pool.add(bm.PoolAddParameter(id="four", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
                                            target_dedicated_nodes=4, task_slots_per_node=4))
        client.job.add(bm.JobAddParameter(id="many", pool_info=bm.PoolInformation(pool_id="four")))
        harness.wait_for(lambda: len([n for n in client.compute_node.list("four") if n.state == bm.ComputeNodeState.idle]) == 4,
                         what="the nodes to be idle")
        start = time.perf_counter()
        for first in range(0, args.tasks, 100):
            client.task.add_collection("many", [bm.TaskAddParameter(id=f"t{i}", command_line="/bin/true")
                                                for i in range(first, min(first + 100, args.tasks))])
        while True:
            counts = client.job.get_task_counts("many").task_counts
            if counts.completed == args.tasks:
                break
            time.sleep(0.02)
        wall = time.perf_counter() - start
        failed = counts.failed
        memory = status_mib(emu.process.pid)

    native = native_true_ms()
    print(f"| measure | emulator | native / cloud | ratio |")
    print(f"|---|---|---|---|")
    print(f"| add to running, one task on an idle node, p50 ms ({args.samples} samples) | {p50_running:.1f} | "
          f"cloud ~{CLOUD_ADD_TO_RUNNING_MS:.0f} | {CLOUD_ADD_TO_RUNNING_MS / p50_running:.0f}x faster |")
    print(f"| add to completed less the task's run, p50 ms | {p50_done:.1f} | | |")
    print(f"| {args.tasks} `/bin/true` tasks on 4 nodes x 4 slots: wall s | {wall:.2f} | | |")
    print(f"| tasks/s | {args.tasks / wall:.0f} | native `/bin/true` {1000 / native:.0f}/s on one core | "
          f"{args.tasks / wall / (1000 / native):.2f}x |")
    print(f"| failed tasks | {failed} | | |")
    print(f"| emulator memory after, MiB RSS | {memory:.0f} | | |")


if __name__ == "__main__":
    main()
