"""The clusters' nodes on a real Slurm cluster (--compute slurm, emulator/engine/slurm.md), through
the Batch AI SDK: a 2-node cluster whose nodes land on the test cluster's two hosts (each a holder
job), its setup task and its jobs run there (their host names written into the share), the nodes
placed at the hosts' addresses, given back when the cluster shrinks; a low-priority node
pre-empted by Slurm itself (a job of a higher partition takes its host) becomes the node's
pre-emption: its job requeued and run again on a new node; a host whose slurmd is killed makes its
node unusable and its job requeued; an emulator killed mid-job and started again cancels what it
had held, never leaking an allocation, and runs the job again; MPI and Horovod jobs' ranks on both hosts
of a cluster that auto-scales from no node to two and back, talking over the hosts' network; an
allocation cancelled from outside (scancel) is a deallocation: the node leaves, a new one comes;
GPU nodes get the GPUs Slurm gave their allocations; blob containers, which the hosts cannot see
mounted here (they run in mount namespaces of their own, as a real cluster's hosts: shares are
links), are mounted on the hosts by bai-blobfuse over the Blob REST API, a node's for its life and
a job's for the job's; with --slurm-storage rest, hosts that cannot see the store's directory get
every share mounted by bai-sharefuse over the File REST API, the node's directories copied there.
SKIPPED where Slurm, munge or namespaces are not available (slurm_cluster.py)."""
import importlib.util
import json
import os
import re
import signal
import subprocess
import unittest

from azure.core.exceptions import ResourceNotFoundError
from azure.mgmt.batchai import BatchAI
from azure.mgmt.batchai import models as m
from azure.mgmt.resource import ResourceManagementClient
from azure.storage.blob import BlobServiceClient
from azure.storage.fileshare import ShareServiceClient

import harness
from slurm_cluster import SlurmCluster
from slurm_rest import RestEmulator, share

RG, WS, EXP = "rg-slurm", "ws", "exp"
CLUSTER = SlurmCluster(hosts=2, gpus=2)
CANNOT = CLUSTER.cannot_start()


@unittest.skipIf(CANNOT, f"SKIPPED: {CANNOT}")
class SlurmNodesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        CLUSTER.start()
        cls.location = None
        # The test hosts' two cores: an NC6 of one core, a GiB, and its GPU.
        cls.size_map = os.path.join(CLUSTER.dir, "sizes.json")
        with open(cls.size_map, "w") as f:
            json.dump({"Standard_NC6": {"cores": 1, "memoryMiB": 1024}}, f)
        cls.start_emulator()
        harness.arm_client(ResourceManagementClient, cls.emu.endpoints).resource_groups.create_or_update(
            RG, {"location": "eastus"})
        cls.client.workspaces.begin_create(RG, WS, m.WorkspaceCreateParameters(location="eastus")).result()
        cls.client.experiments.begin_create(RG, WS, EXP).result()
        cls.share.create_share()

    @classmethod
    def start_emulator(cls):
        # On the bridge's address: the hosts reach the Blob endpoint there (blob containers).
        cls.emu = harness.Emulator(location=cls.location, env=CLUSTER.env(), args=[
            "--host", CLUSTER.bridge_address, "--container-runtime", "sandbox", "--lro-delay", "0", "--gpus", "none", "--autoscale-idle", "1000", "--compute", "slurm",
            "--slurm-partition", "main", "--slurm-partition-lowpriority", "lowpri",
            "--slurm-size-map", cls.size_map]).start()
        cls.location = cls.emu.location
        # (Clients of this emulator's ports: a restart brings new ones.)
        cls.client = harness.arm_client(BatchAI, cls.emu.endpoints)
        cls.share = ShareServiceClient.from_connection_string(harness.connection_string(cls.emu.endpoints)).get_share_client("out")

    @classmethod
    def tearDownClass(cls):
        if cls.emu.process and cls.emu.process.poll() is None:
            cls.emu.stop()
        CLUSTER.stop()
        cls.emu.close()

    def holders(self, states=("PENDING", "RUNNING"), node=""):
        """This emulator's holder jobs (named bai<instance>-<node id>) in these states, of `node` when
        given: [(id, state, host)]."""
        with open(os.path.join(self.location, "slurm", "instance")) as f:
            instance = f.read().strip()
        lines = subprocess.run(["squeue", "--noheader", "--states=all", "--format=%i|%j|%T|%N"], capture_output=True,
                               text=True, timeout=30, env=CLUSTER.env()).stdout.splitlines()
        rows = [line.split("|") for line in lines]
        return [(r[0], r[2], r[3]) for r in rows if len(r) == 4 and r[1].startswith(instance + "-" + node) and r[2] in states]

    def nodes(self, cluster):
        import requests
        all_nodes = requests.get(f"{self.emu.endpoints['arm']}/emulator/nodes", verify=False, timeout=10).json()["value"]
        return [n for n in all_nodes if n["cluster"].lower().endswith("/clusters/" + cluster)]

    def history(self, cluster):
        """The engine's history of a cluster's nodes (the portal's API): [{time, event, node, detail}]."""
        import requests
        cluster_id = self.client.clusters.get(RG, WS, cluster).id
        return requests.get(f"{self.emu.endpoints['arm']}/portal/api/resource", params={"id": cluster_id}, verify=False,
                            timeout=10).json()["history"]

    def volumes(self):
        return m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
            account_name=harness.DEV_ACCOUNT, azure_file_url=f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/out",
            credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path="afs")])

    def read(self, path, missing=None):
        """A file of the share; `missing` when there is none and it is given."""
        try:
            return self.share.get_file_client(path).download_file().readall().decode()
        except ResourceNotFoundError:
            if missing is None:
                raise
            return missing

    def job(self, cluster_id, name, command, priority="normal"):
        return self.client.jobs.begin_create(RG, WS, EXP, name, m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster_id), node_count=1, scheduling_priority=priority,
            std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            custom_toolkit_settings=m.CustomToolkitSettings(command_line=command))).result()

    def tearDown(self):
        # What a test left (when it failed) must not hold the hosts the next one needs.
        for name in ("two", "low", "frail", "kept", "auto", "outside", "gpu", "blobby", "badmount", "boxed"):
            try:
                self.client.clusters.begin_delete(RG, WS, name).result()
            except Exception:
                pass

    def test_a_a_clusters_nodes_are_allocations_on_the_hosts(self):
        cluster = self.client.clusters.begin_create(RG, WS, "two", m.ClusterCreateParameters(
            vm_size="STANDARD_D2",  # two cores: one node per host (each has two)
            scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=2)),
            node_setup=m.NodeSetup(mount_volumes=self.volumes(), setup_task=m.SetupTask(
                command_line="hostname > $AZ_BATCHAI_MOUNT_ROOT/afs/setup-$(hostname)",
                std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs")),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        harness.wait_for(lambda: self.client.clusters.get(RG, WS, "two").node_state_counts.idle_node_count == 2,
                         timeout=60, interval=0.2, what="two idle nodes")
        held = self.holders(("RUNNING",))
        self.assertEqual(sorted(h[2] for h in held), ["host1", "host2"])
        self.assertEqual(self.read("setup-host1"), "host1\n")  # the setup task ran on each host
        self.assertEqual(self.read("setup-host2"), "host2\n")
        addresses = sorted(n["ipAddress"] for n in self.nodes("two"))
        self.assertEqual(addresses, sorted(CLUSTER.host_address(i) for i in (1, 2)))
        # The listing (and the portal) name each node's host and the Slurm job that holds it.
        placed = sorted((n["host"]["name"], n["host"]["allocation"]) for n in self.nodes("two"))
        self.assertEqual(placed, sorted((h[2], h[0]) for h in self.holders(("RUNNING",))))
        # Two jobs at once: one on each node, each on its host.
        jobs = [self.job(cluster.id, f"where{i}", f"sleep 2; hostname > $AZ_BATCHAI_MOUNT_ROOT/afs/job{i}") for i in (1, 2)]
        for j in jobs:
            harness.wait_for(lambda: self.client.jobs.get(RG, WS, EXP, j.name).execution_state in ("succeeded", "failed"),
                             timeout=60, interval=0.2, what=f"{j.name} done")
            self.assertEqual(self.client.jobs.get(RG, WS, EXP, j.name).execution_state, "succeeded")
        self.assertEqual(sorted([self.read("job1"), self.read("job2")]), ["host1\n", "host2\n"])
        # Shrunk to nothing: the allocations are given back.
        self.client.clusters.update(RG, WS, "two", m.ClusterUpdateParameters(scale_settings=m.ScaleSettings(
            manual=m.ManualScaleSettings(target_node_count=0))))
        harness.wait_for(lambda: not self.holders(), timeout=60, interval=0.2, what="the holders cancelled")
        self.client.clusters.begin_delete(RG, WS, "two").result()

    def test_b_slurms_pre_emption_is_the_nodes(self):
        cluster = self.client.clusters.begin_create(RG, WS, "low", m.ClusterCreateParameters(
            vm_size="STANDARD_D2", vm_priority="lowpriority",
            scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            node_setup=m.NodeSetup(mount_volumes=self.volumes()),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        job = self.job(cluster.id, "long", "echo run >> $AZ_BATCHAI_MOUNT_ROOT/afs/runs; sleep 300")

        def running_on():
            nodes = [n for n in self.nodes("low") if (n.get("job") or "").lower() == job.id.lower()]
            return nodes[0] if nodes else None
        first = harness.wait_for(running_on, timeout=60, interval=0.2, what="the job running")
        host = [h[2] for h in self.holders(("RUNNING",))]
        self.assertEqual(len(host), 1)
        # A job of the higher partition takes that host's cores: Slurm pre-empts the holder.
        blocker = subprocess.run(["sbatch", "--parsable", "-p", "main", "-w", host[0], "-N1", "-n1", "--cpus-per-task=2",
                                  "--output=/dev/null", "--wrap", "exec sleep infinity"],
                                 capture_output=True, text=True, timeout=30, env=CLUSTER.env()).stdout.strip()
        try:
            second = harness.wait_for(lambda: (lambda n: n if n and n["nodeId"] != first["nodeId"] else None)(running_on()),
                                      timeout=90, interval=0.2, what="the job requeued onto a new node")
            self.assertNotEqual(second["ipAddress"], first["ipAddress"])  # the other host: this one is taken
            harness.wait_for(lambda: self.read("runs") == "run\nrun\n", timeout=30, interval=0.2, what="its second run")
            self.assertNotIn(first["nodeId"], [n["nodeId"] for n in self.nodes("low")])
        finally:
            subprocess.run(["scancel", blocker], env=CLUSTER.env(), timeout=30)
        self.client.jobs.begin_terminate(RG, WS, EXP, "long").result()
        self.client.clusters.begin_delete(RG, WS, "low").result()
        harness.wait_for(lambda: not self.holders(), timeout=60, interval=0.2, what="the holders cancelled")

    def test_g_a_gpu_nodes_gpus_are_those_slurm_gave_its_allocation(self):
        cluster = self.client.clusters.begin_create(RG, WS, "gpu", m.ClusterCreateParameters(
            vm_size="STANDARD_NC6", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=3)),
            node_setup=m.NodeSetup(mount_volumes=self.volumes()),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        nodes = harness.wait_for(lambda: (lambda n: n if len(n) == 3 and all(x["state"] == "idle" for x in n) else None)(
            self.nodes("gpu")), timeout=60, interval=0.2, what="three idle GPU nodes")
        # Each node: one GPU, the one at the index Slurm gave its holder on its host.
        for node in nodes:
            (holder,) = self.holders(("RUNNING",), node=node["nodeId"])
            detail = subprocess.run(["scontrol", "show", "job", "-d", holder[0]], capture_output=True, text=True,
                                    env=CLUSTER.env(), timeout=30).stdout
            index = re.search(r"GRES=gpu:1\(IDX:(\d)\)", detail).group(1)
            self.assertEqual(node["gpus"], [f"GPU-{holder[2]}-{index}"])
        self.assertEqual(len({g for n in nodes for g in n["gpus"]}), 3)  # never one GPU twice
        # A job sees its node's GPU in the variables the emulator gives as locally (Slurm sets
        # CUDA_VISIBLE_DEVICES itself in a step that asks for GPUs: empty here, where its device
        # files are plain files).
        self.job(cluster.id, "cuda", "echo $(hostname) $AZ_BATCHAI_NUM_GPUS $NVIDIA_VISIBLE_DEVICES "
                                     "> $AZ_BATCHAI_MOUNT_ROOT/afs/cuda")
        harness.wait_for(lambda: self.client.jobs.get(RG, WS, EXP, "cuda").execution_state in ("succeeded", "failed"),
                         timeout=60, interval=0.2, what="the job done")
        self.assertEqual(self.client.jobs.get(RG, WS, EXP, "cuda").execution_state, "succeeded")
        host, count, visible = self.read("cuda").split()
        self.assertEqual(count, "1")
        self.assertIn(visible, [n["gpus"][0] for n in nodes])
        self.assertTrue(visible.startswith(f"GPU-{host}-"), visible)  # the GPU of the host it ran on
        self.client.clusters.begin_delete(RG, WS, "gpu").result()
        harness.wait_for(lambda: not self.holders(), timeout=60, interval=0.2, what="the holders cancelled")

    def test_h_blob_containers_are_mounted_on_the_hosts_over_rest(self):
        # The hosts see this machine's disk, not its mounts (slurm_cluster.py): a blob container
        # is mounted on each host by bai-blobfuse over the Blob REST API (the emulator listens on
        # the bridge's address), the node's for the node's life, a job's for the job's.
        container = BlobServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints)).create_container("data")
        container.upload_blob("in/given.txt", b"put through REST")
        blob = lambda path: m.AzureBlobFileSystemReference(
            account_name=harness.DEV_ACCOUNT, container_name="data", relative_mount_path=path,
            credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY))
        cluster = self.client.clusters.begin_create(RG, WS, "blobby", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            node_setup=m.NodeSetup(mount_volumes=m.MountVolumes(
                azure_blob_file_systems=[blob("bfs")], azure_file_shares=self.volumes().azure_file_shares,
                # Run on the host, not here: a tmpfs the host alone sees.
                unmanaged_file_systems=[m.UnmanagedFileSystemReference(
                    mount_command="mount -t tmpfs -o size=1m tmpfs", relative_mount_path="scratch")])),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        harness.wait_for(lambda: [n["state"] for n in self.nodes("blobby")] == ["idle"], timeout=60, interval=0.2,
                         what="the node idle")
        self.assertEqual(self.client.clusters.get(RG, WS, "blobby").errors or [], [])
        script = ("set -e; cat $AZ_BATCHAI_MOUNT_ROOT/bfs/in/given.txt > $AZ_BATCHAI_MOUNT_ROOT/afs/blob-read; "
                  "mkdir -p $AZ_BATCHAI_MOUNT_ROOT/bfs/out $AZ_BATCHAI_JOB_MOUNT_ROOT/jbfs/out; "
                  "hostname > $AZ_BATCHAI_MOUNT_ROOT/bfs/out/node-level; hostname > $AZ_BATCHAI_JOB_MOUNT_ROOT/jbfs/out/job-level; "
                  "grep ' fuse.bai-blob ' /proc/mounts | cut -d' ' -f2 | sort > $AZ_BATCHAI_MOUNT_ROOT/afs/blob-mounts; "
                  "stat -f -c %T $AZ_BATCHAI_MOUNT_ROOT/scratch > $AZ_BATCHAI_MOUNT_ROOT/afs/scratch-type; "
                  "touch $AZ_BATCHAI_MOUNT_ROOT/scratch/written-on-the-host")
        for name in ("blob-one", "blob-two"):  # the node's mount outlives a job
            self.client.jobs.begin_create(RG, WS, EXP, name, m.JobCreateParameters(
                cluster=m.ResourceId(id=cluster.id), node_count=1, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
                mount_volumes=m.MountVolumes(azure_blob_file_systems=[blob("jbfs")]),
                custom_toolkit_settings=m.CustomToolkitSettings(command_line=script))).result()
            job = harness.wait_for(lambda: (lambda j: j if j.execution_state in ("succeeded", "failed") else None)(
                self.client.jobs.get(RG, WS, EXP, name)), timeout=120, interval=0.2, what=f"job {name} done")
            self.assertEqual(job.execution_state, "succeeded", self.what_happened(job))
            self.assertEqual(self.read("blob-read"), "put through REST")
            self.assertEqual(self.read("scratch-type").strip(), "tmpfs")
            self.assertEqual(os.listdir(os.path.join(self.nodes("blobby")[0]["root"], "mounts", "scratch")), [])
            # Two bai-blobfuse mounts on the host (the node's and the job's), none of this machine's.
            node = self.nodes("blobby")[0]
            self.assertEqual(self.read("blob-mounts").split(), sorted([
                os.path.join(node["root"], "mounts", "bfs"), os.path.join(node["root"], "jobs", name, "mounts", "jbfs")]))
            host = [h[2] for h in self.holders(("RUNNING",), node=self.nodes("blobby")[0]["nodeId"])][0]
            for path in ("out/node-level", "out/job-level"):
                self.assertEqual(container.download_blob(path).readall().decode().strip(), host)
                container.delete_blob(path)
        self.client.clusters.begin_delete(RG, WS, "blobby").result()
        harness.wait_for(lambda: not self.holders(), timeout=60, interval=0.2, what="the holders cancelled")
        # Unmounted on the hosts as the node and the jobs left.
        for i in (1, 2):
            self.assertEqual([p for p, _ in CLUSTER.mounts_on(i) if p.startswith(self.location)], [])
        program = os.path.join(self.location, "bin", "bai-blobfuse")
        harness.wait_for(lambda: not subprocess.run(["pgrep", "-f", program], capture_output=True).stdout, timeout=30,
                         what="bai-blobfuse gone")
        # A mountCommand that fails on the host: the node is unusable, with the command's own words.
        self.client.clusters.begin_create(RG, WS, "badmount", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            node_setup=m.NodeSetup(mount_volumes=m.MountVolumes(unmanaged_file_systems=[m.UnmanagedFileSystemReference(
                mount_command="echo no such export >&2; exit 32;", relative_mount_path="nfs")])),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        harness.wait_for(lambda: [n["state"] for n in self.nodes("badmount")] == ["unusable"], timeout=60, interval=0.2,
                         what="the node unusable")
        errors = [(e.code, e.message) for e in self.client.clusters.get(RG, WS, "badmount").errors]
        self.assertEqual([c for c, _ in errors], ["MountFailed"], errors)
        self.assertIn("on the node's host: its mountCommand", errors[0][1])
        self.assertIn("exited with 32: no such export", errors[0][1])
        self.client.clusters.begin_delete(RG, WS, "badmount").result()

    def test_j_hosts_without_the_data_directory_mount_the_shares_over_rest(self):
        # --slurm-storage rest: the hosts do not see the data directory (hidden on them here by an
        # empty tmpfs: their own disk): the node's directories, scripts and the mounting programs
        # are copied there, and every share is mounted on the host by bai-sharefuse through the
        # File endpoint, a node's for its life and a job's for the job's. The emulator listens on
        # 127.0.0.1, which the hosts do not reach: they reach its File endpoint through a relay on
        # the bridge (a site's proxy), named by --slurm-file-endpoint.
        rest = RestEmulator(self, CLUSTER, self.size_map, RG, WS, EXP, args=["--container-runtime", "sandbox"])
        emu, client, relay, out, scratch, read = rest.emu, rest.client, rest.relay, rest.out, rest.scratch, rest.read
        storage_dir = os.path.join(emu.location, "storage")
        cluster = client.clusters.begin_create(RG, WS, "restful", m.ClusterCreateParameters(
            vm_size="STANDARD_D2", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=2)),
            node_setup=m.NodeSetup(mount_volumes=m.MountVolumes(azure_file_shares=[share("out", "afs")]),
                                   setup_task=m.SetupTask(command_line="hostname > $AZ_BATCHAI_MOUNT_ROOT/afs/setup-$(hostname)",
                                                          std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs")),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        harness.wait_for(lambda: client.clusters.get(RG, WS, "restful").node_state_counts.idle_node_count == 2,
                         timeout=90, interval=0.2, what="two idle nodes")
        self.assertEqual(client.clusters.get(RG, WS, "restful").errors or [], [])
        self.assertEqual(sorted(read(f"setup-host{i}") for i in (1, 2)), ["host1\n", "host2\n"])
        script = (f"set -e; h=$(hostname); cat $AZ_BATCHAI_MOUNT_ROOT/afs/given.txt > $AZ_BATCHAI_JOB_MOUNT_ROOT/jfs/read-$h; "
                  f"(test -e {storage_dir} && echo there || echo absent) > $AZ_BATCHAI_MOUNT_ROOT/afs/storage-$h; "
                  f"stat -f -c %T {emu.location} > $AZ_BATCHAI_MOUNT_ROOT/afs/location-$h; "
                  "grep ' fuse.bai-share ' /proc/mounts | cut -d' ' -f2 | sort > $AZ_BATCHAI_MOUNT_ROOT/afs/share-mounts-$h; "
                  "mkdir -p $AZ_BATCHAI_MOUNT_ROOT/afs/runs/$h/ckpt; echo weights > $AZ_BATCHAI_MOUNT_ROOT/afs/runs/$h/ckpt/w.pt; "
                  "mv $AZ_BATCHAI_MOUNT_ROOT/afs/runs/$h $AZ_BATCHAI_MOUNT_ROOT/afs/runs/done-$h; echo printed")
        names = ("rest1", "rest2")
        for name in names:
            client.jobs.begin_create(RG, WS, EXP, name, m.JobCreateParameters(
                cluster=m.ResourceId(id=cluster.id), node_count=1, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
                mount_volumes=m.MountVolumes(azure_file_shares=[share("scratch", "jfs")]),
                custom_toolkit_settings=m.CustomToolkitSettings(command_line="sleep 2; " + script))).result()
        for name in names:
            job = harness.wait_for(lambda: (lambda j: j if j.execution_state in ("succeeded", "failed") else None)(
                client.jobs.get(RG, WS, EXP, name)), timeout=120, interval=0.2, what=f"job {name} done")
            errors = [(e.code, e.message) for e in (job.execution_info.errors or [])] if job.execution_info else []
            self.assertEqual(job.execution_state, "succeeded", errors)
            # Its output, which the emulator wrote into the share here, as `job file` lists it.
            files = {f.name: f for f in client.jobs.list_output_files(RG, WS, EXP, name, m.JobsListOutputFilesOptions(
                outputdirectoryid="stdouterr"))}
            self.assertIn("stdout.txt", files)
        import requests
        nodes = [n for n in requests.get(f"{emu.endpoints['arm']}/emulator/nodes", verify=False, timeout=10).json()["value"]
                 if n["cluster"].lower().endswith("/clusters/restful")]
        roots = {n["host"]["name"]: n["root"] for n in nodes}
        self.assertEqual(sorted(roots), ["host1", "host2"])
        for host, root in roots.items():
            self.assertEqual(scratch.get_file_client(f"read-{host}").download_file().readall(), b"put through REST")
            self.assertEqual(read(f"storage-{host}").strip(), "absent")  # the store is not there
            self.assertEqual(read(f"location-{host}").strip(), "tmpfs")  # the host's own copy
            job = [n for n in names if os.path.isdir(os.path.join(root, "jobs", n))][0]
            # The node's share mounts on the host (the hosts' mount namespaces also see what suites
            # running beside this one mount on the machine).
            ours = [p for p in read(f"share-mounts-{host}").split() if p.startswith(root + os.sep)]
            self.assertEqual(ours, sorted([
                os.path.join(root, "mounts", "afs"), os.path.join(root, "jobs", job, "mounts", "jfs")]))
            self.assertEqual(read(f"runs/done-{host}/ckpt/w.pt"), "weights\n")
        self.assertEqual(sorted(e["name"] for e in out.list_directories_and_files("runs")), ["done-host1", "done-host2"])
        # MPI over both hosts: the hostfile, the scripts through which mpirun enters the nodes and
        # its agent were copied to the hosts.
        out.get_file_client("rank.py").upload_file(
            "import os, socket\nfrom mpi4py import MPI\nc = MPI.COMM_WORLD\ntotal = c.allreduce(c.Get_rank() + 1)\n"
            "with open(os.environ['AZ_BATCHAI_MOUNT_ROOT'] + '/afs/rank-%d' % c.Get_rank(), 'w') as f:\n"
            "    f.write('%s %d %d' % (socket.gethostname(), c.Get_size(), total))\n")
        client.jobs.begin_create(RG, WS, EXP, "ranks", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=2, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            custom_mpi_settings=m.CustomMpiSettings(command_line="/usr/bin/python3 $AZ_BATCHAI_MOUNT_ROOT/afs/rank.py",
                                                    process_count=4))).result()
        job = harness.wait_for(lambda: (lambda j: j if j.execution_state in ("succeeded", "failed") else None)(
            client.jobs.get(RG, WS, EXP, "ranks")), timeout=120, interval=0.2, what="the MPI job done")
        self.assertEqual(job.execution_state, "succeeded", [(e.code, e.message) for e in (job.execution_info.errors or [])])
        self.assertEqual(sorted(read(f"rank-{r}") for r in range(4)), ["host1 4 10"] * 2 + ["host2 4 10"] * 2)
        self.assertGreater(relay.connections, 0)  # the hosts' mounts came through the site's proxy
        # containerSettings: a sandbox on the host, the node's share bound in from its mount there.
        client.jobs.begin_create(RG, WS, EXP, "boxed", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=1, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            container_settings=m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(image="ubuntu:22.04")),
            custom_toolkit_settings=m.CustomToolkitSettings(command_line=(
                "set -e; cat $AZ_BATCHAI_MOUNT_ROOT/afs/given.txt > $AZ_BATCHAI_MOUNT_ROOT/afs/boxed-read; "
                "hostname > $AZ_BATCHAI_MOUNT_ROOT/afs/boxed-name")))).result()
        job = harness.wait_for(lambda: (lambda j: j if j.execution_state in ("succeeded", "failed") else None)(
            client.jobs.get(RG, WS, EXP, "boxed")), timeout=120, interval=0.2, what="the sandboxed job done")
        self.assertEqual(job.execution_state, "succeeded", [(e.code, e.message) for e in (job.execution_info.errors or [])])
        self.assertEqual(read("boxed-read"), "put through REST")
        self.assertIn(read("boxed-name").strip(), [n["nodeId"] for n in nodes])  # the sandbox's hostname
        client.clusters.begin_delete(RG, WS, "restful").result()
        with open(os.path.join(emu.location, "slurm", "instance")) as f:
            instance = f.read().strip()
        harness.wait_for(lambda: instance not in subprocess.run(["squeue", "-h", "-o", "%j"], capture_output=True, text=True,
                                                                env=CLUSTER.env()).stdout,
                         timeout=60, interval=0.2, what="the holders cancelled")
        # Unmounted on the hosts as the nodes and the jobs left; bai-sharefuse gone.
        for i in (1, 2):
            self.assertEqual([p for p, t in CLUSTER.mounts_on(i) if p.startswith(emu.location) and p != emu.location], [])
            # The host's copy of its node's directories went with the node.
            self.assertTrue(CLUSTER.exists_on(i, os.path.join(emu.location, "bin", "bai-sharefuse")))
            self.assertEqual([root for root in roots.values() if CLUSTER.exists_on(i, root)], [])
        program = os.path.join(emu.location, "bin", "bai-sharefuse")
        harness.wait_for(lambda: not subprocess.run(["pgrep", "-f", program], capture_output=True).stdout, timeout=30,
                         what="bai-sharefuse gone")

    def test_i_a_containers_job_runs_in_a_sandbox_on_the_host(self):
        # containerSettings on a host: bubblewrap there over the host's root (no --image for it),
        # read-only (the writable overlay would be made on this machine), the node's hostname.
        cluster = self.client.clusters.begin_create(RG, WS, "boxed", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            node_setup=m.NodeSetup(mount_volumes=self.volumes()),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        script = ("set -e; hostname > $AZ_BATCHAI_MOUNT_ROOT/afs/boxed-name; "
                  "grep -o '127[.]77[.][0-9]*[.]1[0-9]' /proc/net/fib_trie | sort -u > $AZ_BATCHAI_MOUNT_ROOT/afs/boxed-address; "
                  "(touch /usr/bai-boxed 2>/dev/null && echo writable || echo read-only) > $AZ_BATCHAI_MOUNT_ROOT/afs/boxed-root")
        self.client.jobs.begin_create(RG, WS, EXP, "boxed", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=1, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            container_settings=m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(image="ubuntu:22.04")),
            custom_toolkit_settings=m.CustomToolkitSettings(command_line=script))).result()
        job = harness.wait_for(lambda: (lambda j: j if j.execution_state in ("succeeded", "failed") else None)(
            self.client.jobs.get(RG, WS, EXP, "boxed")), timeout=120, interval=0.2, what="the job done")
        self.assertEqual(job.execution_state, "succeeded", self.what_happened(job))
        node = self.nodes("boxed")[0]
        self.assertEqual(self.read("boxed-name").strip(), node["nodeId"])  # the sandbox's hostname
        self.assertEqual(self.read("boxed-address").split(), [node["ipAddress"]])  # on its host's network
        self.assertEqual(self.read("boxed-root").strip(), "read-only")
        self.assertFalse(os.path.exists("/usr/bai-boxed"))
        self.client.clusters.begin_delete(RG, WS, "boxed").result()

    def test_z_a_hosts_slurmd_killed_makes_its_node_unusable(self):
        # The last one: its host stays down.
        cluster = self.client.clusters.begin_create(RG, WS, "frail", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        self.job(cluster.id, "stranded", "sleep 600")
        node = harness.wait_for(lambda: (lambda n: n[0] if n and n[0].get("job") else None)(self.nodes("frail")),
                                timeout=60, interval=0.2, what="the job running")
        host = [h[2] for h in self.holders(("RUNNING",), node=node["nodeId"])]
        self.assertEqual(len(host), 1)
        CLUSTER.kill_slurmd(int(host[0][-1]))
        # Slurm calls the host down after SlurmdTimeout (5 s) and its pings: about 45 s here.
        harness.wait_for(lambda: [n["state"] for n in self.nodes("frail")] == ["unusable"], timeout=150, interval=0.5,
                         what="the node unusable")
        self.assertEqual(self.nodes("frail")[0]["nodeId"], node["nodeId"])
        stranded = self.client.jobs.get(RG, WS, EXP, "stranded")
        self.assertEqual(stranded.execution_state, "queued", self.what_happened(stranded))  # requeued
        errors = self.client.clusters.get(RG, WS, "frail").errors
        self.assertIn("NodeFailed", [e.code for e in errors])
        self.client.jobs.begin_terminate(RG, WS, EXP, "stranded").result()
        self.client.clusters.begin_delete(RG, WS, "frail").result()

    def what_happened(self, job):
        """A failure's evidence: the job's errors and what the emulator's log says of it and of Slurm."""
        errors = [(e.code, e.message) for e in (job.execution_info.errors or [])] if job.execution_info else []
        with open(os.path.join(self.location, "emulator.log"), errors="replace") as f:
            lines = [l for l in f if job.name in l or "slurm" in l or "lost" in l]
        return f"errors {errors}; emulator.log:\n" + "".join(lines[-40:])

    def test_c_a_restarted_emulator_leaks_no_allocation(self):
        cluster = self.client.clusters.begin_create(RG, WS, "kept", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            node_setup=m.NodeSetup(mount_volumes=self.volumes()),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        self.job(cluster.id, "survivor", "echo run >> $AZ_BATCHAI_MOUNT_ROOT/afs/survivor; sleep 600")
        harness.wait_for(lambda: self.read("survivor", "") == "run\n", timeout=60, interval=0.2, what="the job running")
        before = self.holders(("RUNNING",))
        self.assertEqual(len(before), 1)
        # Killed: nothing of it gives the allocation back.
        self.emu.send(signal.SIGKILL)
        self.emu.process.wait(timeout=10)
        self.assertEqual(self.holders(("RUNNING",)), before)
        type(self).start_emulator()
        # The old holder is cancelled at start; the cluster gets a node (a new holder) again, and
        # the job that ran when the emulator was killed is requeued and runs again there.
        harness.wait_for(lambda: self.read("survivor") == "run\nrun\n", timeout=60, interval=0.2, what="its second run")
        now = self.holders(("RUNNING",))
        self.assertEqual(len(now), 1)
        self.assertNotEqual(now[0][0], before[0][0])
        self.assertIn(before[0][0], [h[0] for h in self.holders(("CANCELLED",))])
        self.client.jobs.begin_terminate(RG, WS, EXP, "survivor").result()
        self.client.clusters.begin_delete(RG, WS, "kept").result()
        harness.wait_for(lambda: not self.holders(), timeout=60, interval=0.2, what="the holders cancelled")

    @unittest.skipIf(importlib.util.find_spec("mpi4py") is None, "SKIPPED: python3-mpi4py is not installed (tools/setup --test installs it)")
    def test_e_mpi_and_horovod_jobs_span_the_hosts_of_an_auto_scaled_cluster(self):
        cluster = self.client.clusters.begin_create(RG, WS, "auto", m.ClusterCreateParameters(
            vm_size="STANDARD_D2",  # two cores: one node per host
            scale_settings=m.ScaleSettings(auto_scale=m.AutoScaleSettings(minimum_node_count=0, maximum_node_count=2,
                                                                          initial_node_count=0)),
            node_setup=m.NodeSetup(mount_volumes=self.volumes()),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        self.assertEqual(self.holders(), [])
        # Each rank: its host, the world's size, an allreduce over the hosts' network, and how
        # many of srun's variables it sees (none: it runs as on a Batch AI node; OpenMPI's own
        # PMIX_ ones it has). Started by a custom MPI job and by a Horovod one (the same mpirun,
        # with the toolkit's interpreter and script).
        self.share.get_file_client("rank.py").upload_file(
            "import os, socket, sys\nfrom mpi4py import MPI\nc = MPI.COMM_WORLD\ntotal = c.allreduce(c.Get_rank() + 1)\n"
            "slurm = len([v for v in os.environ if v.startswith('SLURM_')])\n"
            "with open(os.environ['AZ_BATCHAI_MOUNT_ROOT'] + '/afs/%s-%d' % (sys.argv[1], c.Get_rank()), 'w') as f:\n"
            "    f.write('%s %d %d %d' % (socket.gethostname(), c.Get_size(), total, slurm))\n")
        script = "$AZ_BATCHAI_MOUNT_ROOT/afs/rank.py"
        jobs = {"spread": m.JobCreateParameters(
                    cluster=m.ResourceId(id=cluster.id), node_count=2, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
                    custom_mpi_settings=m.CustomMpiSettings(command_line=f"/usr/bin/python3 {script} mpi", process_count=4)),
                "horovod": m.JobCreateParameters(
                    cluster=m.ResourceId(id=cluster.id), node_count=2, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
                    horovod_settings=m.HorovodSettings(python_script_file_path=script, python_interpreter_path="/usr/bin/python3",
                                                       command_line_args="hvd", process_count=4))}
        for name, parameters in jobs.items():
            self.client.jobs.begin_create(RG, WS, EXP, name, parameters).result()
        for name, prefix in (("spread", "mpi"), ("horovod", "hvd")):
            harness.wait_for(lambda: self.client.jobs.get(RG, WS, EXP, name).execution_state in ("succeeded", "failed"),
                             timeout=120, interval=0.2, what=f"the {name} job done")
            job = self.client.jobs.get(RG, WS, EXP, name)
            self.assertEqual(job.execution_state, "succeeded", self.what_happened(job))
            # Four ranks, two slots a node: two on each host.
            self.assertEqual(sorted(self.read(f"{prefix}-{r}") for r in range(4)), ["host1 4 10 0"] * 2 + ["host2 4 10 0"] * 2)
        # Scaled up to two nodes for it (an allocation on each host), then down to none.
        placed = sorted({e["detail"] for e in self.history("auto") if e["event"] == "placed"})
        self.assertEqual(placed, sorted(CLUSTER.host_address(i) for i in (1, 2)))
        harness.wait_for(lambda: not self.holders() and self.client.clusters.get(RG, WS, "auto").current_node_count == 0,
                         timeout=90, interval=0.5, what="the cluster back to no node, its allocations given back")
        self.client.clusters.begin_delete(RG, WS, "auto").result()

    def test_f_an_allocation_cancelled_from_outside_is_a_deallocation(self):
        self.client.clusters.begin_create(RG, WS, "outside", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        first = harness.wait_for(lambda: (lambda n: n[0] if n and n[0]["state"] == "idle" else None)(self.nodes("outside")),
                                 timeout=60, interval=0.2, what="the node idle")
        held = self.holders(("RUNNING",), node=first["nodeId"])
        self.assertEqual(len(held), 1)
        subprocess.run(["scancel", held[0][0]], env=CLUSTER.env(), timeout=30, check=True)
        # The node leaves, as a deallocation: the cluster's target brings a new one, a new allocation.
        second = harness.wait_for(lambda: (lambda n: n[0] if n and n[0]["nodeId"] != first["nodeId"] and n[0]["state"] == "idle"
                                           else None)(self.nodes("outside")), timeout=60, interval=0.2, what="a new node")
        self.assertEqual(len(self.nodes("outside")), 1)
        self.assertEqual(len(self.holders(("RUNNING",), node=second["nodeId"])), 1)
        events = [(e["node"], e["event"]) for e in self.history("outside")]
        self.assertIn((first["nodeId"], "released"), events)
        self.assertIn((first["nodeId"], "leaves"), events)
        self.assertEqual(self.client.clusters.get(RG, WS, "outside").errors or [], [])  # not a failure
        self.client.clusters.begin_delete(RG, WS, "outside").result()


if __name__ == "__main__":
    unittest.main()
