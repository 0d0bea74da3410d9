"""GPU checks of the Azure Batch endpoint on a machine with an NVIDIA GPU (the device machine,
which has neither the azure-batch SDK nor a network): the Batch REST API signed with SharedKey by
hand, standard library and requests only. Pools of a GPU size and of a CPU size, from a marketplace
image (tasks on the host) and from a custom image whose root is the host's (tasks in a bubblewrap
sandbox); each pool's task runs the CUDA sample workload. Prints PASS/FAIL per check, exits 1 if any
failed.

Usage: batch_gpu_check.py ENDPOINTS_JSON GPU_SAMPLE MACHINE_GPU_UUID OUT_DIR
"""
import base64
import email.utils
import hashlib
import hmac
import json
import os
import sys
import urllib.parse

import requests

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import DEV_BATCH_ACCOUNT as ACCOUNT, DEV_BATCH_KEY as KEY, wait_for  # noqa: E402 (standard library only)

API = "2022-10-01.16.0"
SIGNED = ["content-encoding", "content-language", "content-length", "content-md5", "content-type", "date",
          "if-modified-since", "if-match", "if-none-match", "if-unmodified-since", "range"]


class SharedKey(requests.auth.AuthBase):
    """Azure Batch's SharedKey scheme: the verb, the standard headers, the ocp- headers and the
    account-qualified path with its sorted query parameters, HMAC-SHA256 with the account key."""

    def __call__(self, r):
        r.headers["ocp-date"] = email.utils.formatdate(usegmt=True)
        url = urllib.parse.urlsplit(r.url)
        headers = {k.lower(): v for k, v in r.headers.items()}
        if r.body is not None:
            headers["content-length"] = str(len(r.body))
        lines = [r.method] + [headers.get(h, "") for h in SIGNED]
        lines += [f"{k}:{v}" for k, v in sorted(headers.items()) if k.startswith("ocp-")]
        resource = f"/{ACCOUNT}{url.path}"
        for name, value in sorted(urllib.parse.parse_qsl(url.query)):
            resource += f"\n{name}:{value}"
        to_sign = "\n".join(lines) + "\n" + resource
        mac = hmac.new(base64.b64decode(KEY), to_sign.encode(), hashlib.sha256).digest()
        r.headers["Authorization"] = f"SharedKey {ACCOUNT}:{base64.b64encode(mac).decode()}"
        return r


class Batch:
    def __init__(self, endpoints):
        self.base = endpoints["batch"]
        self.verify = endpoints["ca_cert"]

    def call(self, method, path, body=None, expect=(200, 201, 202)):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json; odata=minimalmetadata"} if data else {}
        r = requests.request(method, f"{self.base}{path}?api-version={API}", data=data, headers=headers,
                             auth=SharedKey(), verify=self.verify, timeout=30)
        if r.status_code not in expect:
            raise RuntimeError(f"{method} {path}: {r.status_code} {r.text}")
        return r

    @staticmethod
    def wait(what, probe, timeout=120):
        return wait_for(probe, timeout=timeout, interval=0.2, what=what)


def main():
    endpoints = json.load(open(sys.argv[1]))
    sample, machine_uuid, out = sys.argv[2], sys.argv[3], sys.argv[4]
    batch = Batch(endpoints)
    failed = False

    def check(name, ok):
        nonlocal failed
        print(("PASS: " if ok else "FAIL: ") + name, flush=True)
        failed |= not ok

    marketplace = {"imageReference": {"publisher": "microsoft-azure-batch", "offer": "ubuntu-server-container",
                                      "sku": "20-04-lts", "version": "latest"},
                   "nodeAgentSKUId": "batch.node.ubuntu 20.04"}
    custom = {"imageReference": {"virtualMachineImageId": "/subscriptions/00000000-0000-0000-0000-000000000000/"
                                 "resourceGroups/ml/providers/Microsoft.Compute/images/host-root"},
              "nodeAgentSKUId": "batch.node.ubuntu 20.04"}
    pools = {"gpu": ("standard_nc6", marketplace), "boxed": ("standard_nc6", custom), "cpu": ("standard_d1_v2", marketplace)}
    # One pool at a time: the machine has one GPU and a GPU pool keeps its node's until it goes.
    results = {}
    for pool, (size, image) in pools.items():
        batch.call("POST", "/pools", {"id": pool, "vmSize": size, "virtualMachineConfiguration": image,
                                      "targetDedicatedNodes": 1})
        node = batch.wait(f"pool {pool}'s node to be idle", lambda: next(
            (n for n in batch.call("GET", f"/pools/{pool}/nodes").json()["value"] if n["state"] == "idle"), None))
        print(f"pool {pool}: node {node['id']} idle", flush=True)
        batch.call("POST", "/jobs", {"id": f"job-{pool}", "poolInfo": {"poolId": pool}})
        command = ("/bin/sh -c \"env | grep -E '^(CUDA|NVIDIA)_' | sort; ls /dev/nvidia* 2>/dev/null | tr '\\n' ' '; "
                   f"echo; {sample}\"")
        batch.call("POST", f"/jobs/job-{pool}/tasks", {"id": "cuda", "commandLine": command})
        task = batch.wait(f"pool {pool}'s task", lambda: (
            lambda t: t if t["state"] == "completed" else None)(batch.call("GET", f"/jobs/job-{pool}/tasks/cuda").json()))
        stdout = batch.call("GET", f"/jobs/job-{pool}/tasks/cuda/files/stdout.txt").text
        stderr = batch.call("GET", f"/jobs/job-{pool}/tasks/cuda/files/stderr.txt").text
        with open(f"{out}/batch_{pool}_stdout.txt", "w") as f:
            f.write(stdout + "\n--- stderr\n" + stderr)
        print(f"--- pool {pool} task: exit {task['executionInfo'].get('exitCode')}\n{stdout}{stderr}", flush=True)
        results[pool] = (task["executionInfo"].get("exitCode"), stdout.splitlines())
        batch.call("DELETE", f"/pools/{pool}")
        batch.wait(f"pool {pool} to go", lambda: batch.call("GET", f"/pools/{pool}", expect=(200, 404)).status_code == 404)

    code, lines = results["gpu"]
    check("Batch GPU pool: the task's CUDA_VISIBLE_DEVICES names the machine's GPU", f"CUDA_VISIBLE_DEVICES={machine_uuid}" in lines)
    check("Batch GPU pool: the task sees the GPU by UUID", any(l.startswith(f"device 0: {machine_uuid}") for l in lines))
    check("Batch GPU pool: the CUDA sample computed and the task exited 0",
          "device 0: saxpy on 2^20 floats ok" in lines and code == 0)
    code, lines = results["boxed"]
    check("Batch custom-image GPU pool: in its sandbox the task's CUDA_VISIBLE_DEVICES is 0", "CUDA_VISIBLE_DEVICES=0" in lines)
    check("Batch custom-image GPU pool: the CUDA sample computed in the sandbox",
          "device 0: saxpy on 2^20 floats ok" in lines and code == 0)
    code, _ = results["cpu"]
    check("Batch CPU pool: the task sees no GPU (the sample exits 77)", code == 77)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
