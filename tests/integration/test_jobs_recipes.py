"""Every recipe job.json of ../shared/reference/jobs/recipes run through the SDK, as the az CLI
would submit it (storage placeholders filled in, the cluster named), with the frameworks replaced
by stand-ins: `python`, `cntk` and `caffe` on the nodes' PATH record their argv and environment.
The launch plan, the environment and the file layout are checked without installing TensorFlow.
The recipes' images are not at hand, so their jobs run on the host (--container-runtime host),
where the stand-ins are: test_jobs_containers covers the container runtimes."""
import glob
import json
import os
import shutil
import tempfile
import unittest
import urllib.request

from azure.mgmt.batchai import BatchAI
from azure.mgmt.batchai import models as m
from azure.mgmt.resource import ResourceManagementClient
from azure.storage.blob import BlobServiceClient
from azure.storage.fileshare import ShareServiceClient

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
RECIPES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "reference", "jobs", "recipes"))
RG, WS, EXP = "rg", "ws", "recipes"

STANDIN = """#!/usr/bin/python3
# A stand-in for {tool}: records how it was started.
import glob, json, os, sys, time
role = json.loads(os.environ.get("TF_CONFIG", "{{}}")).get("task", {{}}).get("type", "")
doc = {{"tool": "{tool}", "argv": sys.argv[1:], "env": dict(os.environ), "role": role,
        "directories": [k for k, v in os.environ.items() if k.startswith("AZ_BATCHAI_OUTPUT_") and os.path.isdir(v)]}}
job = os.path.basename(os.environ.get("AZ_BATCHAI_JOB_TEMP", "none"))
with open(os.path.join("{records}", "%s-%d.json" % (job, os.getpid())), "w") as f:
    json.dump(doc, f)
# TensorFlow's parameter servers are stopped once the workers are done: a worker waits until
# they have recorded themselves.
if role in ("worker", "master") and os.environ.get("AZ_BATCHAI_PS_HOSTS"):
    wanted = len(os.environ["AZ_BATCHAI_PS_HOSTS"].split(","))
    deadline = time.time() + 20
    while time.time() < deadline:
        roles = []
        for path in glob.glob(os.path.join("{records}", job + "-*.json")):
            try:
                with open(path) as f:
                    roles.append(json.load(f).get("role"))
            except ValueError:
                pass
        if roles.count("ps") >= wanted:
            break
        time.sleep(0.05)
print("{tool} stand-in ran", " ".join(sys.argv[1:]))
"""


def expected_processes(p):
    nodes = p["nodeCount"]
    for block, default in (("customMpiSettings", nodes), ("horovodSettings", nodes), ("chainerSettings", nodes),
                           ("cntkSettings", nodes), ("caffeSettings", nodes), ("pyTorchSettings", nodes)):
        if block in p:
            return p[block].get("processCount", default)
    if "caffe2Settings" in p:
        return nodes
    tf = p["tensorFlowSettings"]
    if "workerCount" in tf or "parameterServerCount" in tf or nodes > 1:
        return tf.get("workerCount", nodes) + tf.get("parameterServerCount", 1)
    return 1


def expected_logs(p):
    if "tensorFlowSettings" in p:
        return {"stdout-wk-0.txt"}
    if "pyTorchSettings" in p or "caffe2Settings" in p:
        return {"stdout-0.txt", "stderr-0.txt"}
    return {"stdout.txt", "stderr.txt"}


class RecipeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tools = tempfile.mkdtemp(prefix="bai-standins-")
        cls.records = os.path.join(cls.tools, "records")
        os.makedirs(cls.records)
        for tool in ("python", "cntk", "caffe"):
            path = os.path.join(cls.tools, tool)
            with open(path, "w") as f:
                f.write(STANDIN.format(tool=tool, records=cls.records))
            os.chmod(path, 0o755)
        cls.saved_path = os.environ["PATH"]
        os.environ["PATH"] = cls.tools + ":" + cls.saved_path  # what the nodes' processes get
        cls.emu = harness.Emulator(args=["--lro-delay", "0", "--gpus", "fake:8", "--container-runtime", "host"]).start()
        ep = cls.emu.endpoints
        cls.client = harness.arm_client(BatchAI, ep)
        harness.arm_client(ResourceManagementClient, ep).resource_groups.create_or_update(RG, {"location": "eastus"})
        cls.client.workspaces.begin_create(RG, WS, m.WorkspaceCreateParameters(location="eastus")).result()
        cls.client.experiments.begin_create(RG, WS, EXP).result()
        shares = ShareServiceClient.from_connection_string(harness.connection_string(ep))
        for name in ("logs", "scripts", "data", "external", "batchscoring", "images", "output"):
            shares.create_share(name)
        # The blob containers the recipes mount (they must exist, as in the cloud).
        blobs = BlobServiceClient.from_connection_string(harness.connection_string(ep))
        containers = set()
        for path in glob.glob(os.path.join(RECIPES, "**", "*.json"), recursive=True):
            with open(path) as f:
                volumes = json.load(f)["properties"].get("mountVolumes", {})
            containers.update(v["containerName"] for v in volumes.get("azureBlobFileSystems", []))
        for name in sorted(containers):
            blobs.create_container(name)
        cluster = m.ClusterCreateParameters(
            vm_size="STANDARD_NC24", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=2)),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"),
            node_setup=m.NodeSetup(mount_volumes=m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
                account_name=harness.DEV_ACCOUNT, azure_file_url=f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/external",
                credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path="external")])))
        cls.cluster = cls.client.clusters.begin_create(RG, WS, "nc24", cluster).result()

    @classmethod
    def tearDownClass(cls):
        os.environ["PATH"] = cls.saved_path
        code, _ = cls.emu.stop()
        cls.emu.close()
        shutil.rmtree(cls.tools, ignore_errors=True)
        assert code == 0, f"emulator exited with {code}"

    def read(self, job, file_name):
        item = next(f for f in self.client.jobs.list_output_files(
            RG, WS, EXP, job, m.JobsListOutputFilesOptions(outputdirectoryid="stdouterr")) if f.name == file_name)
        with urllib.request.urlopen(item.download_url, timeout=10) as r:
            return r.read().decode(errors="replace")

    def submit(self, name, path):
        """The recipe as the az CLI would send it."""
        with open(path) as f:
            text = f.read()
        text = text.replace("<AZURE_BATCHAI_STORAGE_ACCOUNT>", harness.DEV_ACCOUNT).replace(
            "<AZURE_BATCHAI_STORAGE_KEY>", harness.DEV_KEY)
        p = json.loads(text)["properties"]
        p["cluster"] = {"id": self.cluster.id}
        volumes = p.get("mountVolumes", {})
        for volume in volumes.get("azureFileShares", []) + volumes.get("azureBlobFileSystems", []):
            volume.setdefault("accountName", harness.DEV_ACCOUNT)
            volume.setdefault("credentials", {"accountKey": harness.DEV_KEY})
        if "jobPreparation" in p:  # apt-get and pip have no place in a test: a stand-in step
            p["jobPreparation"]["commandLine"] = "echo preparation ran"
        body = {"properties": p}
        r = harness.arm_call(self.emu.endpoints, "PUT",
                             f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/{RG}/providers/Microsoft.BatchAI/"
                             f"workspaces/{WS}/experiments/{EXP}/jobs/{name}", body)
        self.assertEqual(r.status_code, 202, r.text)
        harness.wait_for_operation(self.emu.endpoints, r)
        return p

    def test_every_recipe_launches_as_its_toolkit_says(self):
        paths = sorted(glob.glob(os.path.join(RECIPES, "**", "*.json"), recursive=True))
        self.assertGreaterEqual(len(paths), 17)
        for path in paths:
            name = "r-" + os.path.relpath(path, RECIPES).replace("/", "-").replace(".json", "").replace("_", "-").lower()[:60]
            with self.subTest(os.path.relpath(path, RECIPES)):
                p = self.submit(name, path)
                job = harness.wait_for(lambda: (lambda j: j if j.execution_state in ("succeeded", "failed") else None)(
                    self.client.jobs.get(RG, WS, EXP, name)), timeout=60, what=name)
                logs = {f.name for f in self.client.jobs.list_output_files(
                    RG, WS, EXP, name, m.JobsListOutputFilesOptions(outputdirectoryid="stdouterr"))}
                if job.execution_state != "succeeded":
                    errors = [(e.code, e.message) for e in (job.execution_info.errors or [])] if job.execution_info else []
                    self.fail(f"{name}: {job.execution_state} {errors}\n" + "\n".join(
                        f"--- {log}\n{self.read(name, log)}" for log in sorted(logs)))
                self.assertTrue(expected_logs(p) <= logs, logs)
                self.assertTrue(any(f.startswith("execution") and f.endswith(".log") for f in logs), logs)
                if "jobPreparation" in p:
                    self.assertIn("stdout-job_prep.txt", logs)
                records = []
                for record in sorted(os.listdir(self.records)):
                    if record.startswith(name + "-"):
                        with open(os.path.join(self.records, record)) as f:
                            records.append(json.load(f))
                self.assertEqual(len(records), expected_processes(p), [r["argv"] for r in records])
                for record in records:
                    env = record["env"]
                    self.assertTrue(all("$" not in a for a in record["argv"]), record["argv"])
                    for output in p.get("outputDirectories", []):
                        out = env["AZ_BATCHAI_OUTPUT_" + output["id"]]
                        self.assertIn(job.job_output_directory_path_segment + "/outputs", out)
                        # there when the process ran (job-level mounts go when the job ends)
                        self.assertIn("AZ_BATCHAI_OUTPUT_" + output["id"], record["directories"], out)
                    for data in p.get("inputDirectories", []):
                        self.assertNotIn("$", env["AZ_BATCHAI_INPUT_" + data["id"]])
                    self.assertEqual(env["AZ_BATCHAI_NUM_GPUS"], "4")
                    for user in p.get("environmentVariables", []):
                        self.assertEqual(env[user["name"]], user["value"])


if __name__ == "__main__":
    unittest.main()
