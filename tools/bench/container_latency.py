#!/usr/bin/python3
"""A container job's start, side by side on the three runtimes, and an image's first pull:

1. submit -> process running (the client's PUT to the process's own clock, bash's
   $EPOCHREALTIME) for one job at a time on an idle 1-node cluster: on the host (no
   containerSettings), in the bubblewrap sandbox (--container-runtime sandbox, the host's root)
   and in a real docker container (--container-runtime docker) with the image already on the
   engine. One emulator per runtime, started once; the rounds take the runtimes in a rotating
   order; p50 and p90 over every sample, and each round's p50.
2. the same for an Azure Batch task (`/bin/bash -c 'echo $EPOCHREALTIME'`, added with the
   azure-batch SDK, its process's clock read from its stdout.txt) on an idle 1-node pool: a pool
   without containerConfiguration (on the host) beside a pool with it, the task's
   containerSettings naming an image the engine has (docker), one emulator, alternating with
   `docker run` of the same command by hand.
3. the first pull of a ~100 MiB image (one layer of random bytes over busybox and bash) from a
   registry on loopback with credentials: a job's submit -> process running, which includes the
   pull, beside `docker pull` of the same image by hand (removed from the engine before each).

The engine and the registry are Debian's dockerd and docker-registry, started for the bench on
their own socket, data root and port (tests/integration/docker_engine.py) and stopped after.

Usage: tools/bench/container_latency.py [--build DIR] [--samples N] [--rounds N] [--pull-mib N]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docker_engine  # noqa: E402
import harness  # noqa: E402
from job_latency import SUB, WS, Bench, percentile, submit_to_running  # noqa: E402

CLOCK = "echo $EPOCHREALTIME"  # bash's, in every runtime (busybox's date has no %N)


def batch_pools(emu):
    """A client of the emulator's Batch endpoint and two idle 1-node pools with a job each: `host`
    (no containerConfiguration) and `docker` (the bench image among its containerImageNames)."""
    from azure.batch import BatchServiceClient
    from azure.batch import models as bm
    from azure.batch.batch_auth import SharedKeyCredentials
    from test_batch_pools import DEV_BATCH, DEV_BATCH_KEY, vm_configuration
    client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=emu.endpoints["batch"])
    for pool_id in ("host", "docker"):
        configuration = vm_configuration()
        if pool_id == "docker":
            configuration.container_configuration = bm.ContainerConfiguration(type="dockerCompatible",
                                                                              container_image_names=["bai/bench:1"])
        client.pool.add(bm.PoolAddParameter(id=pool_id, vm_size="STANDARD_D1", target_dedicated_nodes=1,
                                            virtual_machine_configuration=configuration))
        client.job.add(bm.JobAddParameter(id=pool_id, pool_info=bm.PoolInformation(pool_id=pool_id)))
        harness.wait_for(lambda: [n for n in client.compute_node.list(pool_id) if n.state == bm.ComputeNodeState.idle],
                         timeout=60, what=f"pool {pool_id}'s node")
    return client


def docker_run_by_hand(engine):
    """ms from `docker run` of the same command in the same image (the engine has it) to its clock:
    the floor of a task in a container of its own."""
    import subprocess
    started = time.time()
    out = subprocess.run([engine.docker, "run", "--rm", "--network", "host", "bai/bench:1", "/bin/bash", "-c", CLOCK],
                         env=engine.env(), capture_output=True, text=True, check=True).stdout
    return (float(out.strip()) - started) * 1000


def batch_add_to_running(client, pool_id, task_id):
    """ms from the client's add to the task's process reading its clock."""
    from azure.batch import models as bm
    settings = bm.TaskContainerSettings(image_name="bai/bench:1") if pool_id == "docker" else None
    added = time.time()
    client.task.add(pool_id, bm.TaskAddParameter(id=task_id, command_line=f"/bin/bash -c '{CLOCK}'", container_settings=settings))
    harness.wait_for(lambda: client.task.get(pool_id, task_id).state == bm.TaskState.completed, timeout=60, interval=0.01,
                     what=f"task {task_id}")
    out = b"".join(client.file.get_from_task(pool_id, task_id, "stdout.txt")).decode().strip()
    return (float(out) - added) * 1000


def rotating_rounds(names, rounds, measure):
    """`rounds` rounds of measure(name, round) (a list of ms) for each name, the one that goes first
    rotating: every name's samples, and each round's p50 by name."""
    samples = {name: [] for name in names}
    per_round = []
    order = list(names)
    for r in range(rounds):
        this_round = {}
        for name in order:
            values = measure(name, r)
            samples[name] += values
            this_round[name] = statistics.median(values)
        per_round.append(this_round)
        order = order[1:] + order[:1]
    return samples, per_round


def print_latencies(title, noun, samples, per_round):
    """A markdown table of p50, p90 and p50 over the first name's (the host's), then each round's p50."""
    print(f"| {title} | p50 ms | p90 ms | p50 / host |")
    print("|---|---|---|---|")
    host = statistics.median(next(iter(samples.values())))
    for name, values in samples.items():
        print(f"| {name} ({len(values)} {noun}) | {statistics.median(values):.1f} | {percentile(values, 90):.1f} | "
              f"{statistics.median(values) / host:.2f} |")
    for i, r in enumerate(per_round):
        print(f"round {i + 1} p50: " + ", ".join(f"{k} {v:.1f}" for k, v in r.items()))


def start_emulator(runtime, env):
    emu = harness.Emulator(args=["--lro-delay", "0", "--gpus", "none", "--container-runtime", runtime], env=env).start()
    b = Bench(emu.endpoints)
    b.call("PUT", f"/subscriptions/{SUB}/resourcegroups/bench", {"location": "eastus"}, api_version="2021-04-01")
    b.call("PUT", f"{WS}", {"location": "eastus"})
    b.call("PUT", f"{WS}/experiments/e")
    b.cluster("warm", 1)
    return emu, b


def big_image(engine, mib):
    """A ~`mib` MiB image in the registry only: its reference."""
    root = tempfile.mkdtemp(prefix="bai-big-", dir=engine.dir)
    rootfs = os.path.join(root, "rootfs")
    docker_engine.image_root(rootfs, "big")
    with open(os.path.join(rootfs, "payload"), "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))
    import subprocess
    tar = subprocess.run(["tar", "-C", rootfs, "-c", "."], capture_output=True, check=True).stdout
    reference = f"{engine.registry_address}/bai/big:1"
    subprocess.run([engine.docker, "import", "-", reference], env=engine.env(), input=tar, capture_output=True, check=True)
    config = tempfile.mkdtemp(prefix="bai-docker-config-", dir=engine.dir)
    engine.client("login", engine.registry_address, "--username", docker_engine.USER, "--password-stdin",
                  input=docker_engine.PASSWORD, config=config)
    engine.client("push", reference, config=config)
    engine.client("rmi", reference)
    return reference, config


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--samples", type=int, default=10, help="jobs per runtime and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pull-mib", type=int, default=100)
    parser.add_argument("--pulls", type=int, default=3)
    args = parser.parse_args()
    harness.EMULATOR = os.path.join(args.build, "emulator", "batchai-emulator")
    engine = docker_engine.DockerEngine()
    try:
        engine.start()
    except unittest.SkipTest as e:
        sys.exit(f"SKIPPED: {e}")
    emulators = {}
    try:
        engine.import_image("bai/bench:1", "bench")
        images = {"host": None, "sandbox": "ubuntu:16.04", "docker": "bai/bench:1"}
        for runtime in images:
            emulators[runtime] = start_emulator(runtime, engine.env())

        def job_latencies(runtime, r):
            emu, b = emulators[runtime]
            return submit_to_running(b, emu.location, "warm", args.samples, f"{runtime}{r}x", images[runtime], CLOCK)[0]
        samples, rounds = rotating_rounds(list(images), args.rounds, job_latencies)

        batch_emu = harness.Emulator(args=["--gpus", "none", "--container-runtime", "docker"], env=engine.env()).start()
        emulators["batch"] = (batch_emu, None)
        client = batch_pools(batch_emu)

        def task_latencies(pool_id, r):
            if pool_id == "docker run by hand":
                return [docker_run_by_hand(engine) for _ in range(args.samples)]
            return [batch_add_to_running(client, pool_id, f"r{r}t{i}") for i in range(args.samples)]
        batch_samples, batch_rounds = rotating_rounds(["host", "docker", "docker run by hand"], args.rounds, task_latencies)

        reference, config = big_image(engine, args.pull_mib)
        emu, b = emulators["docker"]
        registry = {"image": "bai/big:1", "serverUrl": engine.registry_address,
                    "credentials": {"username": docker_engine.USER, "password": docker_engine.PASSWORD}}
        job_pulls, hand_pulls = [], []
        for i in range(args.pulls):
            job_pulls += submit_to_running(b, emu.location, "warm", 1, f"pull{i}x", registry, CLOCK)[0]
            engine.client("rmi", reference)
            start = time.perf_counter()
            engine.client("pull", reference, config=config)
            hand_pulls.append((time.perf_counter() - start) * 1000)
            engine.client("rmi", reference)
    finally:
        for emu, _ in emulators.values():
            emu.stop()
            emu.close()
        engine.stop()

    print_latencies("submit -> process running, idle 1-node cluster", "jobs", samples, rounds)
    print_latencies("Batch task add -> process running, idle 1-node pool", "tasks", batch_samples, batch_rounds)
    print(f"| first pull of a {args.pull_mib} MiB image from the loopback registry | ms, each of {args.pulls} |")
    print("|---|---|")
    print(f"| a job's submit -> process running, the pull included | {', '.join(f'{t:.0f}' for t in job_pulls)} |")
    print(f"| `docker pull` by hand | {', '.join(f'{t:.0f}' for t in hand_pulls)} |")


if __name__ == "__main__":
    main()
