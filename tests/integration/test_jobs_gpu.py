"""GPUs end to end: on a machine with an NVIDIA GPU, a job on an NC6 node (one GPU) runs the CUDA
sample workload (tools/gpu_sample) and sees exactly the GPU its node was given; a D-series node
sees none. Where no GPU (or no sample, when nvcc was missing at build time) is found, the tests
print a SKIPPED line and skip."""
import os
import shutil
import subprocess
import sys
import unittest

import requests
from azure.mgmt.batchai import models as m

from jobs_fixture import JobsTestCase

SAMPLE = os.environ.get("BAI_GPU_SAMPLE", "")


def gpu_uuids():
    if not shutil.which("nvidia-smi"):
        return []
    r = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True, text=True)
    return [line.strip() for line in r.stdout.splitlines() if line.strip()] if r.returncode == 0 else []


MACHINE_GPUS = gpu_uuids()
WHY_NOT = ("no NVIDIA GPU found (nvidia-smi)" if not MACHINE_GPUS else
           "the CUDA sample was not built (no nvcc)" if not SAMPLE or not os.path.exists(SAMPLE) else "")
if WHY_NOT:
    print(f"SKIPPED: GPU tests: {WHY_NOT}", file=sys.stderr)


@unittest.skipIf(WHY_NOT, WHY_NOT)
class GpuJobTest(JobsTestCase):
    emulator_args = ["--gpus", "auto", "--lro-delay", "0"]

    def test_a_job_sees_exactly_its_nodes_gpu(self):
        cluster = self.cluster("gpu", nodes=1, vm_size="STANDARD_NC6")
        self.wait_cluster("gpu", idle=1)
        node = next(n for n in self.nodes() if n["cluster"].endswith("/clusters/gpu"))
        self.assertEqual(len(node["gpus"]), 1)
        self.assertIn(node["gpus"][0], MACHINE_GPUS)
        job = self.job("cuda", cluster, custom_toolkit_settings=m.CustomToolkitSettings(command_line=SAMPLE))
        stdout = self.read("cuda", "stdout.txt")
        self.assertEqual(job.execution_state, "succeeded", stdout)
        self.assertIn(f"device 0: {node['gpus'][0]}", stdout)
        self.assertNotIn("device 1:", stdout)
        self.assertIn("device 0: saxpy on 2^20 floats ok", stdout)

    def test_a_cpu_node_sees_no_gpu(self):
        cluster = self.cluster("cpu", nodes=1, vm_size="STANDARD_D1")
        self.wait_cluster("cpu", idle=1)
        job = self.job("nocuda", cluster, custom_toolkit_settings=m.CustomToolkitSettings(command_line=SAMPLE))
        self.assertEqual(job.execution_info.exit_code, 77, self.read("nocuda", "stdout.txt"))
        self.assertIn("SKIPPED: no CUDA device visible", self.read("nocuda", "stdout.txt"))


if __name__ == "__main__":
    unittest.main()
