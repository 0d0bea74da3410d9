"""Docker containers on the hosts of a Slurm cluster (--compute slurm, emulator/engine/slurm.md),
through the Batch AI SDK: each test host runs a docker engine of its own (slurm_cluster.py's
start_docker: the same socket path on every host, as a site's hosts have it; none on this
machine), and a job with containerSettings runs in a container on each of its nodes' hosts: the
image pulled there from a private registry with the job's credentials (the registry reached
through a relay on the cluster's bridge), the job's preparation and command inside it on both
hosts, the containers removed from both engines when the job ends; a holder cancelled from outside
takes its node's container with it (its TERM trap); a container that an ended allocation left on
a host (a host that failed with its jobs) is removed when the host is allocated again, another
emulator's left alone. SKIPPED where Slurm, namespaces or docker.io are not available."""
import json
import os
import re
import subprocess
import unittest

from azure.core.exceptions import ResourceNotFoundError
from azure.mgmt.batchai import BatchAI
from azure.mgmt.batchai import models as m
from azure.mgmt.resource import ResourceManagementClient
from azure.storage.fileshare import ShareServiceClient

import docker_engine
import harness
from slurm_cluster import SlurmCluster
from slurm_rest import GIVEN, RestEmulator, share
from tcp_relay import TcpRelay

RG, WS, EXP = "rg-slurm-docker", "ws", "exp"
CLUSTER = SlurmCluster(hosts=2)
CANNOT = CLUSTER.cannot_start()
LOCAL_IMAGE = "bai/hosted-local:1"  # imported on each host's engine
MPI_IMAGE = "bai/hosted-mpi:1"  # with the hosts' OpenMPI, imported on each host's engine
MPI_PACKAGES = ["openmpi-bin", "openmpi-common", "libopenmpi3", "libpmix2", "libhwloc15", "libhwloc-plugins"]
ALLOCATION_LABEL = "bai-emulator.allocation"


@unittest.skipIf(CANNOT, f"SKIPPED: {CANNOT}")
class SlurmDockerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A registry on this machine (and an engine here to push to it), reached by the hosts
        # through a relay on the bridge.
        cls.registry, reference = docker_engine.DockerEngine.with_private_image("bai/hosted", "from-the-registry")
        try:
            CLUSTER.start()
            CLUSTER.start_docker()
            cls.relay = TcpRelay(CLUSTER.bridge_address, ("127.0.0.1", int(cls.registry.registry_address.split(":")[1])))
            cls.private = f"{CLUSTER.bridge_address}:{cls.relay.port}/{reference.split('/', 1)[1]}"
            root = os.path.join(CLUSTER.dir, "image")
            docker_engine.image_root(os.path.join(root, "rootfs"), "imported-on-the-host")
            tar = subprocess.run(["tar", "-C", os.path.join(root, "rootfs"), "-c", "."], capture_output=True, check=True).stdout
            docker_engine.image_root(os.path.join(root, "mpi"), "the hosts mpi image", MPI_PACKAGES)
            mpi_tar = subprocess.run(["tar", "-C", os.path.join(root, "mpi"), "-c", "."], capture_output=True, check=True).stdout
            for i in (1, 2):
                for name, image in ((LOCAL_IMAGE, tar), (MPI_IMAGE, mpi_tar)):
                    done = CLUSTER.docker_on(i, "import", "-", name, input=image)
                    assert done.returncode == 0, done.stderr
            cls.size_map = os.path.join(CLUSTER.dir, "sizes.json")
            with open(cls.size_map, "w") as f:
                json.dump({"Standard_D1": {"cores": 1, "memoryMiB": 512}, "Standard_D2": {"cores": 2, "memoryMiB": 512}}, f)
            # Every docker client on the hosts reaches its host's engine at this path (this
            # machine has none there: the emulator's own probe finds no engine).
            env = dict(CLUSTER.env(), DOCKER_HOST=CLUSTER.DOCKER_HOST)
            cls.emu = harness.Emulator(env=env, args=[
                "--host", CLUSTER.bridge_address, "--lro-delay", "0", "--gpus", "none", "--compute", "slurm",
                "--slurm-partition", "main", "--slurm-size-map", cls.size_map]).start()
        except BaseException:
            CLUSTER.stop()
            cls.registry.stop()
            raise
        cls.client = harness.arm_client(BatchAI, cls.emu.endpoints)
        harness.arm_client(ResourceManagementClient, cls.emu.endpoints).resource_groups.create_or_update(RG, {"location": "eastus"})
        cls.client.workspaces.begin_create(RG, WS, m.WorkspaceCreateParameters(location="eastus")).result()
        cls.client.experiments.begin_create(RG, WS, EXP).result()
        cls.share = ShareServiceClient.from_connection_string(harness.connection_string(cls.emu.endpoints)).get_share_client("out")
        cls.share.create_share()
        cls.owner = os.path.join(cls.emu.location, "nodes")

    @classmethod
    def tearDownClass(cls):
        if cls.emu.process and cls.emu.process.poll() is None:
            cls.emu.stop()
        CLUSTER.stop()
        cls.relay.close()
        cls.registry.stop()
        cls.emu.close()

    def tearDown(self):
        for name in ("pair", "single", "ranks"):
            try:
                self.client.clusters.begin_delete(RG, WS, name).result()
            except Exception:
                pass

    # ---- helpers ----

    def containers_on(self, i, *filters, owner=None):
        """The containers on host i's engine that this emulator (or `owner`) labelled (running or
        not), with more `label=...` filters when given: {id: {label: value}}."""
        argv = ["ps", "--all", "--quiet", "--filter", f"label={docker_engine.OWNER_LABEL}={owner or self.owner}"]
        for f in filters:
            argv += ["--filter", f]
        ids = CLUSTER.docker_on(i, *argv).stdout.decode().split()
        found = {}
        for cid in ids:
            inspected = CLUSTER.docker_on(i, "inspect", "--format", "{{json .Config.Labels}}", cid)
            if inspected.returncode != 0:
                continue  # removed between the listing and the inspection: it is gone, as asked
            found[cid] = json.loads(inspected.stdout.decode().strip() or "{}")
        return found

    def volumes(self):
        return m.MountVolumes(azure_file_shares=[share("out", "afs")])

    def cluster(self, name, nodes, vm_size="STANDARD_D1"):
        return self.client.clusters.begin_create(RG, WS, name, m.ClusterCreateParameters(
            vm_size=vm_size, scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=nodes)),
            node_setup=m.NodeSetup(mount_volumes=self.volumes()),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()

    def idle(self, name, count):
        harness.wait_for(lambda: self.client.clusters.get(RG, WS, name).node_state_counts.idle_node_count == count,
                         timeout=90, interval=0.2, what=f"{count} idle node(s) of {name}")

    def read(self, path):
        try:
            return self.share.get_file_client(path).download_file().readall().decode()
        except ResourceNotFoundError:
            return None

    def done(self, name, client=None):
        client = client or self.client
        return harness.wait_for(lambda: (lambda j: j if j.execution_state in ("succeeded", "failed") else None)(
            client.jobs.get(RG, WS, EXP, name)), timeout=180, interval=0.3, what=f"{name} done")

    def execution_log(self, name, client=None):
        """The master node's execution log (the longest: it has every node's lines, each other
        node's file its own), as listOutputFiles links them."""
        import requests
        files = (client or self.client).jobs.list_output_files(RG, WS, EXP, name, m.JobsListOutputFilesOptions(outputdirectoryid="stdouterr"))
        return max((requests.get(f.download_url, timeout=10).text for f in files if f.name.startswith("execution")),
                   key=len, default="") + "".join(requests.get(f.download_url, timeout=10).text
                                                  for f in files if f.name in ("stderr.txt", "stdout.txt"))

    # ---- tests ----

    def test_a_a_jobs_containers_run_on_its_nodes_hosts(self):
        # What an allocation that ended left on a host (labelled as this emulator's, of a Slurm job
        # that no longer runs) goes when the host is allocated again; another emulator's stays.
        for i in (1, 2):
            for owner, allocation in ((self.owner, "999999"), ("/another/emulator/nodes", "999999")):
                made = CLUSTER.docker_on(i, "create", "--label", f"{docker_engine.OWNER_LABEL}={owner}",
                                         "--label", f"{ALLOCATION_LABEL}={allocation}", LOCAL_IMAGE, "/bin/true")
                self.assertEqual(made.returncode, 0, made.stderr)
        self.assertEqual(len(self.containers_on(1)), 1)
        cluster = self.cluster("pair", 2, "STANDARD_D2")  # two cores: one node per host (each has two)
        self.idle("pair", 2)
        for i in (1, 2):
            harness.wait_for(lambda: not self.containers_on(i), timeout=30, interval=0.2, what=f"the orphan gone from host {i}")
            others = CLUSTER.docker_on(i, "ps", "--all", "--quiet", "--filter", "label=" + docker_engine.OWNER_LABEL).stdout.split()
            self.assertEqual(len(others), 1)  # the other emulator's
            self.assertNotEqual(CLUSTER.docker_on(i, "image", "inspect", self.private).returncode, 0)  # not pulled yet

        prep = "echo \"$(cat /etc/bai-image) $(hostname)\" > $AZ_BATCHAI_MOUNT_ROOT/afs/prep-$(hostname)"
        command = ("set -e; cat /etc/bai-image > $AZ_BATCHAI_MOUNT_ROOT/afs/main-image; hostname > $AZ_BATCHAI_MOUNT_ROOT/afs/main-host; "
                   "echo \"$SECRET_WORD\" > $AZ_BATCHAI_MOUNT_ROOT/afs/main-variable; pwd > $AZ_BATCHAI_MOUNT_ROOT/afs/main-cwd")
        self.client.jobs.begin_create(RG, WS, EXP, "boxed", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=2, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            environment_variables=[m.EnvironmentVariable(name="SECRET_WORD", value="it's here")],
            container_settings=m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(
                image=self.private, credentials=m.PrivateRegistryCredentials(
                    username=docker_engine.USER, password=docker_engine.PASSWORD))),
            job_preparation=m.JobPreparation(command_line=prep),
            custom_toolkit_settings=m.CustomToolkitSettings(command_line=command))).result()
        job = self.done("boxed")
        log = self.execution_log("boxed")
        self.assertEqual(job.execution_state, "succeeded", log)
        # The preparation ran in the image on both hosts; the command in it on the master's.
        self.assertEqual(self.read("prep-host1"), "from-the-registry host1\n")
        self.assertEqual(self.read("prep-host2"), "from-the-registry host2\n")
        self.assertEqual(self.read("main-image"), "from-the-registry\n")
        self.assertIn(self.read("main-host").strip(), ("host1", "host2"))
        self.assertEqual(self.read("main-variable"), "it's here\n")
        self.assertEqual(self.read("main-cwd").strip(), "/mnt/batch/tasks/shared/LS_root/jobs/boxed")
        self.assertIn("runtime: docker", log)
        self.assertEqual(log.count("pulling " + self.private + " as " + docker_engine.USER), 2)  # on each host
        self.assertNotIn(docker_engine.PASSWORD, log)
        self.assertEqual(len(re.findall(r"container bai-boxed-\S+ started on ", log)), 2)
        for i in (1, 2):
            # Pulled by each host's engine; the job's containers gone from both when it ended.
            self.assertEqual(CLUSTER.docker_on(i, "image", "inspect", self.private).returncode, 0)
            self.assertEqual(self.containers_on(i), {})
        self.assertGreater(self.relay.connections, 0)  # the hosts pulled through the bridge
        # The credentials' file was removed after the pulls.
        leftovers = subprocess.run(["find", os.path.join(self.emu.location, "nodes"), "-name", "config.json"],
                                   capture_output=True, text=True).stdout
        self.assertEqual(leftovers, "")

    def test_d_mpi_ranks_run_in_their_nodes_containers_on_both_hosts(self):
        # mpirun runs on the master node's host (as locally beside the nodes) and takes no node
        # for its own: its daemons start in each node's container, the master's too, through the
        # node's script (a step, then docker exec there).
        cluster = self.cluster("ranks", 2, "STANDARD_D2")
        self.idle("ranks", 2)
        command = ("echo $(hostname) $(cat /etc/bai-image | tr ' ' -) $OMPI_COMM_WORLD_SIZE "
                   "> $AZ_BATCHAI_MOUNT_ROOT/afs/mpi-rank-$OMPI_COMM_WORLD_RANK")
        self.client.jobs.begin_create(RG, WS, EXP, "ranks", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=2, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            container_settings=m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(image=MPI_IMAGE)),
            custom_mpi_settings=m.CustomMpiSettings(command_line=command, process_count=4))).result()
        job = self.done("ranks")
        self.assertEqual(job.execution_state, "succeeded", self.execution_log("ranks"))
        ranks = sorted(self.read(f"mpi-rank-{r}") or "" for r in range(4))
        self.assertEqual(ranks, ["host1 the-hosts-mpi-image 4\n"] * 2 + ["host2 the-hosts-mpi-image 4\n"] * 2)
        for i in (1, 2):
            self.assertEqual(self.containers_on(i), {})

    def test_b_a_holder_cancelled_from_outside_takes_its_container_with_it(self):
        cluster = self.cluster("single", 1)
        self.idle("single", 1)
        self.client.jobs.begin_create(RG, WS, EXP, "long", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=1, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            container_settings=m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(image=LOCAL_IMAGE)),
            custom_toolkit_settings=m.CustomToolkitSettings(command_line="echo started > $AZ_BATCHAI_MOUNT_ROOT/afs/long; sleep 600"))).result()
        harness.wait_for(lambda: self.read("long") == "started\n", timeout=90, interval=0.3, what="the job running in its container")
        placed = [(i, c) for i in (1, 2) for c in self.containers_on(i).values()]
        self.assertEqual(len(placed), 1)
        host, labels = placed[0]
        allocation = labels[ALLOCATION_LABEL]
        state = subprocess.run(["squeue", "-h", "-j", allocation, "-o", "%T %j"], env=CLUSTER.env(), capture_output=True,
                               text=True).stdout.split()
        self.assertEqual(state[0], "RUNNING")  # the label names the Slurm job that holds the node
        self.assertTrue(state[1].startswith("bai"))  # a holder of this emulator's
        subprocess.run(["scancel", allocation], env=CLUSTER.env(), timeout=30, check=True)
        # Gone from its host's engine with its allocation (its processes with it): the holder's
        # TERM trap removes it, or the next holder's sweep on that host does (the unit tests
        # HolderScript.* tell the two apart).
        harness.wait_for(lambda: not self.containers_on(host), timeout=30, interval=0.2, what="the container gone with its allocation")
        # The job is requeued onto the cluster's next node (as a deallocation), and runs again.
        harness.wait_for(lambda: len([c for i in (1, 2) for c in self.containers_on(i).values()
                                      if c.get(ALLOCATION_LABEL) != allocation]) == 1,
                         timeout=90, interval=0.3, what="the job's container again, on the new node's allocation")
        self.client.jobs.begin_terminate(RG, WS, EXP, "long").result()
        harness.wait_for(lambda: not any(self.containers_on(i) for i in (1, 2)), timeout=60, interval=0.3,
                         what="the terminated job's container removed")

    def test_c_hosts_without_the_data_directory_run_containers_over_the_shares_mounts(self):
        # --slurm-storage rest: the hosts do not see the data directory (hidden there), the shares
        # are mounted on the host by bai-sharefuse and bound into the container from there; the
        # registry's credentials are copied to the host for the pull and removed after it.
        rest = RestEmulator(self, CLUSTER, self.size_map, RG, WS, EXP, env={"DOCKER_HOST": CLUSTER.DOCKER_HOST})
        emu, client, read = rest.emu, rest.client, rest.read
        cluster = client.clusters.begin_create(RG, WS, "restful", m.ClusterCreateParameters(
            vm_size="STANDARD_D2", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            node_setup=m.NodeSetup(mount_volumes=m.MountVolumes(azure_file_shares=[share("out", "afs")])),
            user_account_settings=m.UserAccountSettings(admin_user_name="u", admin_user_password="Pw-123456"))).result()
        self.addCleanup(lambda: client.clusters.begin_delete(RG, WS, "restful").result())
        harness.wait_for(lambda: client.clusters.get(RG, WS, "restful").node_state_counts.idle_node_count == 1,
                         timeout=90, interval=0.2, what="the node idle")
        for i in (1, 2):  # pulled again: its credentials must reach the host
            CLUSTER.docker_on(i, "rmi", self.private)
        client.jobs.begin_create(RG, WS, EXP, "boxed", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=1, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            mount_volumes=m.MountVolumes(azure_file_shares=[share("scratch", "jfs")]),
            container_settings=m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(
                image=self.private, credentials=m.PrivateRegistryCredentials(
                    username=docker_engine.USER, password=docker_engine.PASSWORD))),
            custom_toolkit_settings=m.CustomToolkitSettings(command_line=(
                "set -e; cat $AZ_BATCHAI_MOUNT_ROOT/afs/given.txt > $AZ_BATCHAI_JOB_MOUNT_ROOT/jfs/read; "
                "cat /etc/bai-image > $AZ_BATCHAI_MOUNT_ROOT/afs/image; hostname > $AZ_BATCHAI_MOUNT_ROOT/afs/host")))).result()
        job = self.done("boxed", client)
        self.assertEqual(job.execution_state, "succeeded", [(e.code, e.message) for e in (job.execution_info.errors or [])])
        self.assertEqual(rest.scratch.get_file_client("read").download_file().readall(), GIVEN)
        self.assertEqual(read("image"), "from-the-registry\n")
        host = read("host").strip()
        i = int(host[-1])
        log = self.execution_log("boxed", client)
        self.assertIn("pulling " + self.private + " as " + docker_engine.USER, log)
        self.assertEqual(CLUSTER.docker_on(i, "image", "inspect", self.private).returncode, 0)
        self.assertEqual(self.containers_on(i, owner=os.path.join(emu.location, "nodes")), {})
        import requests
        node = [n for n in requests.get(f"{emu.endpoints['arm']}/emulator/nodes", verify=False, timeout=10).json()["value"]
                if n["cluster"].lower().endswith("/clusters/restful")][0]
        job_dir = os.path.join(node["root"], "jobs", "boxed")
        self.assertTrue(CLUSTER.exists_on(i, job_dir))  # the host's own copy of the job's directory
        self.assertFalse(CLUSTER.exists_on(i, os.path.join(job_dir, ".image-pull")))  # the credentials went after the pull
        self.assertFalse(os.path.exists(os.path.join(job_dir, ".image-pull")))


if __name__ == "__main__":
    unittest.main()
