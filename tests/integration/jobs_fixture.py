"""What the job engine's integration tests share: an emulator with fake GPUs, a workspace, an
experiment, a file share mounted by the clusters at $AZ_BATCHAI_MOUNT_ROOT/afs, and helpers to
create clusters and jobs through the azure-mgmt-batchai SDK and wait for their states."""
import os
import time
import unittest
import urllib.request
import json

from azure.mgmt.batchai import BatchAI
from azure.mgmt.batchai import models as m
from azure.mgmt.resource import ResourceManagementClient
from azure.storage.fileshare import ShareServiceClient

import harness

RG = "rg-jobs"
LOCATION = "eastus"
WS = "ws"
EXP = "exp"
SHARE = "jobs"
PYTHON = "/usr/bin/python3"
DONE = ("succeeded", "failed")

# Writes what a process of a job saw (its rank variables, the job's environment, argv, the node)
# as JSON into $AZ_BATCHAI_OUTPUT_OUT/<name>.json, and prints it.
RECORDER = r'''
import json, os, sys, socket
names = [k for k in os.environ if k.startswith(("AZ_BATCH", "CUDA_", "NVIDIA_", "TF_CONFIG", "OMPI_COMM_WORLD", "MY_", "SECRET_"))]
doc = {"argv": sys.argv[1:], "env": {k: os.environ[k] for k in names}, "cwd": os.getcwd(), "pid": os.getpid()}
rank = os.environ.get("OMPI_COMM_WORLD_RANK")
role = os.environ.get("TF_CONFIG") and json.loads(os.environ["TF_CONFIG"])["task"]
name = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "record"
if rank is not None:
    name += "-rank" + rank
elif role:
    name += "-%s%d" % (role["type"], role["index"])
elif os.environ.get("AZ_BATCHAI_TASK_INDEX"):
    name += "-task" + os.environ["AZ_BATCHAI_TASK_INDEX"]
out = os.environ.get("AZ_BATCHAI_OUTPUT_OUT")
if out:
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(doc, f)
print(json.dumps(doc))
'''


def share_volume(endpoints, relative="afs"):
    return m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
        account_name=harness.DEV_ACCOUNT, azure_file_url=f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/{SHARE}",
        credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path=relative)])


class JobsTestCase(unittest.TestCase):
    emulator_args = ["--gpus", "fake:4", "--lro-delay", "0", "--autoscale-idle", "300"]
    emulator_env = None  # the emulator's environment; None: the test's
    emulator_ignored_signals = ()  # signals it starts with ignored (harness.Emulator)

    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator(args=cls.emulator_args, env=cls.emulator_env,
                                   ignored_signals=cls.emulator_ignored_signals).start()
        cls.endpoints = cls.emu.endpoints
        cls.client = harness.arm_client(BatchAI, cls.endpoints)
        harness.arm_client(ResourceManagementClient, cls.endpoints).resource_groups.create_or_update(
            RG, {"location": LOCATION})
        cls.client.workspaces.begin_create(RG, WS, m.WorkspaceCreateParameters(location=LOCATION)).result()
        cls.client.experiments.begin_create(RG, WS, EXP).result()
        shares = ShareServiceClient.from_connection_string(harness.connection_string(cls.endpoints))
        cls.share = shares.create_share(SHARE)
        cls.share.create_directory("scripts")
        cls.share.get_file_client("scripts/record.py").upload_file(RECORDER.encode())

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert code == 0, f"emulator exited with {code}"

    # ---- clusters ----

    def cluster(self, name, nodes=1, vm_size="STANDARD_NC6", setup=None, auto=None, priority=None,
                deallocation=None, volumes=None):
        scale = (m.ScaleSettings(auto_scale=auto) if auto else
                 m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=nodes,
                                                             node_deallocation_option=deallocation)))
        params = m.ClusterCreateParameters(
            vm_size=vm_size, vm_priority=priority,
            user_account_settings=m.UserAccountSettings(admin_user_name="alice", admin_user_password="Secret-Pass1"),
            scale_settings=scale,
            node_setup=m.NodeSetup(mount_volumes=volumes or share_volume(self.endpoints), setup_task=setup))
        return self.client.clusters.begin_create(RG, WS, name, params).result()

    def wait_cluster(self, name, idle=None, current=None, timeout=60):
        def ready():
            c = self.client.clusters.get(RG, WS, name)
            counts = c.node_state_counts
            if c.allocation_state != "steady":
                return None
            if idle is not None and counts.idle_node_count != idle:
                return None
            if current is not None and c.current_node_count != current:
                return None
            return c
        return harness.wait_for(ready, timeout=timeout, interval=0.05, what=f"cluster {name} steady")

    # ---- jobs ----

    def job(self, name, cluster, wait=True, **settings):
        settings.setdefault("node_count", 1)
        settings.setdefault("std_out_err_path_prefix", "$AZ_BATCHAI_MOUNT_ROOT/afs")
        settings.setdefault("output_directories", [m.OutputDirectory(id="OUT", path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs")])
        params = m.JobCreateParameters(cluster=m.ResourceId(id=cluster.id), **settings)
        self.client.jobs.begin_create(RG, WS, EXP, name, params).result()
        return self.wait_job(name) if wait else self.client.jobs.get(RG, WS, EXP, name)

    def wait_job(self, name, states=DONE, timeout=60):
        def reached():
            j = self.client.jobs.get(RG, WS, EXP, name)
            return j if j.execution_state in states else None
        return harness.wait_for(reached, timeout=timeout, interval=0.05, what=f"job {name} in {states}")

    def files(self, name, directory_id="stdouterr", directory="."):
        return {f.name: f for f in self.client.jobs.list_output_files(
            RG, WS, EXP, name, m.JobsListOutputFilesOptions(outputdirectoryid=directory_id, directory=directory))}

    def read(self, name, file_name, directory_id="stdouterr"):
        item = self.files(name, directory_id)[file_name]
        with urllib.request.urlopen(item.download_url, timeout=10) as r:
            return r.read().decode()

    def execution_log(self, name):
        """The master's execution log: execution.log, or for a job on several nodes the
        execution-<nodeId>.log that has every node's lines."""
        logs = [f for f in self.files(name) if f.startswith("execution") and f.endswith(".log")]
        if "execution.log" in logs:
            return self.read(name, "execution.log")
        texts = [self.read(name, f) for f in logs]
        return next(t for t in texts if " node 0: " in t and " node 1: " in t)

    def records(self, name):
        """The JSON documents RECORDER wrote into the job's OUT directory, by file stem."""
        out = {}
        for file_name in self.files(name, "OUT"):
            if file_name.endswith(".json"):
                out[file_name[:-5]] = json.loads(self.read(name, file_name, "OUT"))
        return out

    def nodes(self):
        import requests
        r = requests.get(self.endpoints["arm"] + "/emulator/nodes", verify=self.endpoints["ca_cert"], timeout=10)
        r.raise_for_status()
        return r.json()["value"]


def record_command(tag="record", args=""):
    return f"{PYTHON} $AZ_BATCHAI_MOUNT_ROOT/afs/scripts/record.py {tag} {args}".strip()
