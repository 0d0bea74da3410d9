#!/usr/bin/python3
"""Latency and throughput of the ARM endpoint: GET job and job create (to its 202), with the
C++ load generator (build/tools/arm_load) on loopback, 1 and 8 concurrent keep-alive clients.
The cloud's figure for comparison is the one recorded from the service: a job create took about
1 s to succeed (shared/reference/batchai-api.md section 1.3).

Usage: tools/bench/arm_latency.py [--build DIR] [--seconds S]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402
from bench_tools import tool  # noqa: E402

SUB = harness.SUBSCRIPTION
PROVIDER = f"/subscriptions/{SUB}/resourceGroups/bench/providers/Microsoft.BatchAI"
WS = f"{PROVIDER}/workspaces/ws"
# No nodes: the benchmark measures the API, not the jobs it would start.
CLUSTER = {"properties": {"vmSize": "STANDARD_NC6", "scaleSettings": {"manual": {"targetNodeCount": 0}},
                          "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "p"}}}
CLOUD_JOB_CREATE_MS = 1000.0


def job_body():
    return {"properties": {"cluster": {"id": f"{WS}/clusters/c"}, "nodeCount": 1,
                           "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
                           "customToolkitSettings": {"commandLine": "python train.py --epochs 10"},
                           "environmentVariables": [{"name": "MODE", "value": "bench"}]}}


def create_workspace(ep):
    """The resource group, workspace WS, experiment e and the node-less cluster c the benches use."""
    harness.arm_call(ep, "PUT", f"/subscriptions/{SUB}/resourcegroups/bench", {"location": "eastus"}, api_version="2021-04-01")
    harness.arm_call(ep, "PUT", WS, {"location": "eastus"})
    harness.arm_call(ep, "PUT", f"{WS}/experiments/e")
    harness.wait_for_operation(ep, harness.arm_call(ep, "PUT", f"{WS}/clusters/c", CLUSTER))


def load(build, ep, method, path, clients, seconds, body_file=None):
    port = ep["arm"].rsplit(":", 1)[1]
    cmd = [tool(build, "arm_load"), "--port", port, "--ca", ep["ca_cert"], "--method", method,
           "--path", path + "?api-version=2018-05-01", "--clients", str(clients), "--seconds", str(seconds)]
    if body_file:
        cmd += ["--body", body_file]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    harness.EMULATOR = os.path.join(args.build, "emulator", "batchai-emulator")
    with harness.Emulator() as emu, tempfile.NamedTemporaryFile("w", suffix=".json") as body:
        ep = emu.endpoints
        create_workspace(ep)
        harness.wait_for_operation(ep, harness.arm_call(ep, "PUT", f"{WS}/experiments/e/jobs/target", job_body()))
        json.dump(job_body(), body)
        body.flush()
        rows = []
        for clients in (1, 8):
            rows.append(("GET job", clients, load(args.build, ep, "GET", f"{WS}/experiments/e/jobs/target", clients, args.seconds)))
        for clients in (1, 8):
            rows.append(("job create (to 202)", clients,
                         load(args.build, ep, "PUT", f"{WS}/experiments/e/jobs/c{clients}-{{n}}", clients, args.seconds, body.name)))
    print(f"ARM endpoint, HTTPS keep-alive, {args.seconds:.0f} s per row, {os.cpu_count()} cores\n")
    print("| operation | clients | requests/s | p50 ms | p90 ms | p99 ms | errors | cloud | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, clients, r in rows:
        cloud = f"~{CLOUD_JOB_CREATE_MS:.0f} ms to succeed" if "create" in name else "not published"
        ratio = f"{CLOUD_JOB_CREATE_MS / r['p50_ms']:.0f}x faster" if "create" in name and r["p50_ms"] else "-"
        print(f"| {name} | {clients} | {r['per_second']:.0f} | {r['p50_ms']:.2f} | {r['p90_ms']:.2f} | "
              f"{r['p99_ms']:.2f} | {r['errors']} | {cloud} | {ratio} |")


if __name__ == "__main__":
    main()
