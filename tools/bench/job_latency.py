#!/usr/bin/python3
"""The job engine's speed, side by side with the native machine and the cloud:

1. submit-to-running on a warm cluster: from the client sending the job's PUT to its process
   running (the process writes its start time), and the document's startTime - creationTime;
   one job at a time on an idle 1-node cluster. The cloud took about 10 s (batchai-api.md).
2. 1000 trivial jobs (`true`) queued on a cluster without nodes (8 submitting clients), then
   drained by 16 nodes: wall time from the resize, jobs/s, node time per job (wall x 16 / jobs)
   beside what `bash -c true` costs natively (measured here, in this run), and the CPU time per
   job of the emulator and of the jobs' processes.
3. the emulator's memory (VmRSS) before and after, with the 1000 jobs stored.
4. submit-to-running as (1) for a job with containerSettings in the bubblewrap sandbox (the host's
   root with a writable overlay layer per job: --container-runtime sandbox), when bwrap works here.

The emulator runs with --lro-delay 0 (the create operation succeeds at once; the default 500 ms
delay would come on top of (1)).

Usage: tools/bench/job_latency.py [--build DIR] [--jobs N] [--samples N]
"""
import argparse
import concurrent.futures
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402
from process_stats import cpu_seconds, status_mib  # noqa: E402

SUB = harness.SUBSCRIPTION
PROVIDER = f"/subscriptions/{SUB}/resourceGroups/bench/providers/Microsoft.BatchAI"
WS = f"{PROVIDER}/workspaces/ws"
CLOUD_SUBMIT_TO_RUNNING_MS = 10000.0


def arm_time_seconds(text):
    from datetime import datetime
    return datetime.strptime(text.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


class Bench:
    def __init__(self, ep):
        import requests
        self.ep = ep
        self.session = requests.Session()
        self.session.verify = ep["ca_cert"]
        self.session.headers["Authorization"] = "Bearer bench"

    def call(self, method, path, body=None, api_version="2018-05-01"):
        r = self.session.request(method, f"{self.ep['arm']}{path}?api-version={api_version}", json=body, timeout=30,
                                 verify=self.ep["ca_cert"])
        if r.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text}")
        return r

    def cluster(self, name, nodes):
        self.call("PUT", f"{WS}/clusters/{name}", {"properties": {
            "vmSize": "STANDARD_D1", "scaleSettings": {"manual": {"targetNodeCount": nodes}},
            "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "Pw-123456"}}})
        harness.wait_for(lambda: self.call("GET", f"{WS}/clusters/{name}").json()["properties"]
                         .get("nodeStateCounts", {}).get("idleNodeCount") == nodes, timeout=120, what="nodes")

    def submit(self, name, cluster, command, image=None):
        """`image`: an image name, or the whole imageSourceRegistry."""
        properties = {"cluster": {"id": f"{WS}/clusters/{cluster}"}, "nodeCount": 1,
                      "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP", "customToolkitSettings": {"commandLine": command}}
        if image:
            registry = image if isinstance(image, dict) else {"image": image}
            properties["containerSettings"] = {"imageSourceRegistry": registry}
        self.call("PUT", f"{WS}/experiments/e/jobs/{name}", {"properties": properties})

    def job(self, name):
        return self.call("GET", f"{WS}/experiments/e/jobs/{name}").json()["properties"]


def submit_to_running(b, location, cluster, samples, prefix, image=None, clock="date +%s.%N"):
    """(client send -> the process's own clock, creationTime -> startTime) in ms per job; the
    process prints its start time (`clock`), read back from its stdout.txt in the node's job
    directory."""
    import glob
    to_process, to_start = [], []
    for i in range(samples):
        name = f"{prefix}{i}"
        sent = time.time()
        b.submit(name, cluster, clock, image)
        harness.wait_for(lambda: b.job(name)["executionState"] in ("succeeded", "failed"), timeout=120,
                         interval=0.002, what=name)
        p = b.job(name)
        if p["executionState"] != "succeeded":
            raise RuntimeError(f"{name} failed: {p}")
        [stdout] = glob.glob(f"{location}/nodes/*/*/jobs/{name}/**/stdout.txt", recursive=True)
        with open(stdout) as f:
            to_process.append((float(f.read()) - sent) * 1000)
        to_start.append((arm_time_seconds(p["executionInfo"]["startTime"]) - arm_time_seconds(p["creationTime"])) * 1000)
    return to_process, to_start


def sandbox_works():
    return subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-pid", "/bin/true"],
                          stderr=subprocess.DEVNULL).returncode == 0


def native_true_ms(samples):
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        subprocess.run(["/bin/bash", "-c", "true"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()
    harness.EMULATOR = os.path.join(args.build, "emulator", "batchai-emulator")
    with harness.Emulator(args=["--lro-delay", "0", "--gpus", "none", "--container-runtime", "sandbox"]) as emu:
        b = Bench(emu.endpoints)
        b.call("PUT", f"/subscriptions/{SUB}/resourcegroups/bench", {"location": "eastus"}, api_version="2021-04-01")
        b.call("PUT", f"{WS}", {"location": "eastus"})
        b.call("PUT", f"{WS}/experiments/e")
        rss_start = status_mib(emu.process.pid)

        # 1. submit to running
        b.cluster("warm", 1)
        to_process, to_start = submit_to_running(b, emu.location, "warm", args.samples, "lat")
        sandboxed = sandbox_works()
        if sandboxed:
            sandbox_process, sandbox_start = submit_to_running(b, emu.location, "warm", args.samples, "sbx", "ubuntu:16.04")

        # 2. many trivial jobs through 16 nodes: queued first (on a cluster without nodes), then
        # the cluster grows to 16 and drains the queue; no client competes for the cores then
        # but the poller.
        b.cluster("wide", 0)
        names = [f"many{i}" for i in range(args.jobs)]
        submit_started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda n: Bench(emu.endpoints).submit(n, "wide", "true"), names))
        submit_wall = time.perf_counter() - submit_started

        def all_done():
            page = b.call("GET", f"{WS}/experiments/e/jobs").json()
            done, link = [], page
            while True:
                done += [j for j in link["value"] if j["properties"]["executionState"] in ("succeeded", "failed")]
                if not link.get("nextLink"):
                    break
                link = b.session.get(link["nextLink"], timeout=30, verify=b.ep["ca_cert"]).json()
            return len(done) >= args.jobs + args.samples * (2 if sandboxed else 1) and done
        cpu_before = cpu_seconds(emu.process.pid)
        started = time.perf_counter()
        b.call("PATCH", f"{WS}/clusters/wide", {"properties": {"scaleSettings": {"manual": {"targetNodeCount": 16}}}})
        done = harness.wait_for(all_done, timeout=1800, interval=0.5, what="all jobs")
        wall = time.perf_counter() - started
        cpu_after = cpu_seconds(emu.process.pid)
        many = [j["properties"] for j in done if j["name"].startswith("many")]
        failed = sum(1 for p in many if p["executionState"] != "succeeded")
        run_ms = [(arm_time_seconds(p["executionInfo"]["endTime"]) - arm_time_seconds(p["executionInfo"]["startTime"])) * 1000
                  for p in many]
        native = native_true_ms(args.samples)
        rss_end = status_mib(emu.process.pid)

    print(f"machine: {os.cpu_count()} cores; emulator {harness.EMULATOR}\n")
    print("| measure | p50 ms | p90 ms | p99 ms | cloud | ratio (cloud / emulator, p50) |")
    print("|---|---|---|---|---|---|")
    rows = [("submit -> process running (client clock)", to_process),
            ("creationTime -> startTime (document)", to_start)]
    if sandboxed:
        rows += [("sandboxed (containerSettings): submit -> process running", sandbox_process),
                 ("sandboxed: creationTime -> startTime (document)", sandbox_start)]
    for label, values in rows:
        p50 = percentile(values, 50)
        ratio = f"{CLOUD_SUBMIT_TO_RUNNING_MS / p50:.0f}x" if p50 >= 1 else f"> {CLOUD_SUBMIT_TO_RUNNING_MS:.0f}x (p50 under the 1 ms resolution)"
        print(f"| {label} | {p50:.1f} | {percentile(values, 90):.1f} | {percentile(values, 99):.1f} | "
              f"~{CLOUD_SUBMIT_TO_RUNNING_MS:.0f} | {ratio} |")
    node_ms_per_job = wall * 1000 * 16 / args.jobs
    print(f"\n{args.jobs} trivial jobs (`true`), queued first (8 clients: {submit_wall:.1f} s), then drained by 16 "
          f"nodes: {wall:.1f} s wall from the resize ({args.jobs / wall:.0f} jobs/s), {failed} failed")
    print(f"node time per job: {node_ms_per_job:.1f} ms, against {native:.1f} ms for `bash -c true` natively: "
          f"overhead {node_ms_per_job - native:.1f} ms per job (includes the 16 nodes joining and the 0.5 s poll)")
    print(f"per job, startTime -> endTime: p50 {statistics.median(run_ms):.1f} ms, p90 {percentile(run_ms, 90):.1f} ms "
          f"(document times have 1 ms resolution)")
    own = (cpu_after[0] - cpu_before[0]) * 1000 / args.jobs
    children = (cpu_after[1] - cpu_before[1]) * 1000 / args.jobs
    print(f"CPU per job: emulator {own:.1f} ms, the jobs' processes {children:.1f} ms "
          f"(16 nodes on {os.cpu_count()} cores: the rest of the node time is waiting for a core)")
    print(f"emulator VmRSS: {rss_start:.1f} MiB at start, {rss_end:.1f} MiB with "
          f"{args.jobs + args.samples * (2 if sandboxed else 1)} jobs stored and 17 nodes")
    if not sandboxed:
        print("SKIPPED: the sandboxed rows (bubblewrap cannot make a sandbox here)")


if __name__ == "__main__":
    main()
