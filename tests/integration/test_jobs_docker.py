"""Jobs in real containers: a real docker engine and a real registry (docker_engine.py) behind an
emulator started with --container-runtime docker. The job's image pulled from the private
registry with the job's credentials, its preparation and its command in one container, the
service's paths, variables and secrets inside, a failing pull, terminate, MPI and Horovod ranks
in their nodes' containers, a stopped emulator leaving none, and a killed emulator whose container the
next start removes; after every test no container of the emulator's is
left on the engine."""
import os
import unittest

import requests

from azure.core.exceptions import ResourceNotFoundError
from azure.mgmt.batchai import models as m

import docker_engine
import harness
from jobs_fixture import EXP, RG, WS, JobsTestCase

SERVICE = "/mnt/batch/tasks/shared/LS_root"
MPI_PACKAGES = ["openmpi-bin", "openmpi-common", "libopenmpi3", "libpmix2", "libhwloc15", "libhwloc-plugins"]
PYTHON_PACKAGES = ["python3-minimal", "python3.11-minimal", "libpython3.11-minimal"]
# A Horovod script's view of its rank (Horovod itself reads the same OpenMPI variables), its
# image and its container.
HOROVOD_SCRIPT = r"""
import os, re
with open("/etc/bai-image") as f:
    image = f.read().strip().replace(" ", "-")
with open("/proc/self/mountinfo") as f:
    layer = re.search(r"upperdir=([^,]*)", f.read())
print("rank=%s size=%s image=%s container=%s" % (os.environ["OMPI_COMM_WORLD_RANK"], os.environ["OMPI_COMM_WORLD_SIZE"],
                                                image, layer.group(1) if layer else None))
"""
engine = None
private_image = None  # "127.0.0.1:PORT/bai/train:1", in the registry only


def setUpModule():
    global engine, private_image
    engine, private_image = docker_engine.DockerEngine.with_private_image("bai/train:1", "the private image")


def tearDownModule():
    engine.stop()


def private(image="bai/train:1", password=docker_engine.PASSWORD, shm=None):
    """The private image by the registry's serverUrl and the repository, as a recipe names one."""
    return m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(
        server_url=engine.registry_address, image=image,
        credentials=m.PrivateRegistryCredentials(username=docker_engine.USER, password=password)), shm_size=shm)


class RealDockerTestCase(JobsTestCase):
    """An emulator whose container jobs run on the module's engine."""
    emulator_args = JobsTestCase.emulator_args + ["--container-runtime", "docker"]

    @classmethod
    def setUpClass(cls):
        cls.emulator_env = engine.env()
        super().setUpClass()


class RealDockerJobsTest(RealDockerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.c = cls.cluster(cls, "docked", nodes=1)
        cls.wait_cluster(cls, "docked", idle=1)

    def tearDown(self):
        harness.wait_for(lambda: engine.owned_containers() == [], timeout=30, what="the job's containers to be removed")

    def test_a_private_image_is_pulled_with_the_jobs_credentials_and_runs_the_job(self):
        command = ('cat /etc/bai-image /opt/prep-mark; echo "vars: $MY_VAR/$SECRET_VAR"; echo "cwd: $(pwd)"; '
                   'df -k /dev/shm | tail -n 1; ls $AZ_BATCHAI_MOUNT_ROOT; '
                   'echo made-inside > $AZ_BATCHAI_OUTPUT_OUT/inside.txt; echo to-stderr >&2')
        # The preparation runs in the job's container: what it writes there, the job sees.
        prep = m.JobPreparation(command_line="mkdir -p /opt && echo written-by-prep > /opt/prep-mark")
        j = self.job("private", self.c, container_settings=private(shm="64m"), job_preparation=prep,
                     environment_variables=[m.EnvironmentVariable(name="MY_VAR", value="my value")],
                     secrets=[m.EnvironmentVariableWithSecretValue(name="SECRET_VAR", value="s3cret")],
                     custom_toolkit_settings=m.CustomToolkitSettings(command_line=command))
        log = self.read("private", "execution.log")
        self.assertEqual(j.execution_state, "succeeded", log + self.read("private", "stderr.txt"))
        out = self.read("private", "stdout.txt")
        self.assertIn("the private image", out)  # the image's own root, not the host's
        self.assertIn("written-by-prep", out)
        self.assertFalse(os.path.exists("/opt/prep-mark"))
        self.assertIn("vars: my value/s3cret", out)
        self.assertIn(f"cwd: {SERVICE}/jobs/", out)
        self.assertIn("65536", out)  # /dev/shm of shmSize 64m, in KiB
        self.assertIn("afs", out)  # the cluster's share under the mount root
        self.assertEqual(self.read("private", "stderr.txt").strip(), "to-stderr")
        self.assertEqual(self.read("private", "inside.txt", "OUT").strip(), "made-inside")
        self.assertRegex(log, r"runtime: docker.*, image bai/train:1")
        self.assertRegex(log, r"docker engine \d+\.\d+")
        self.assertIn(f"pulling {private_image} as {docker_engine.USER}", log)
        self.assertIn("pull: Status: Downloaded newer image", log)
        self.assertNotIn(docker_engine.PASSWORD, log)
        self.assertTrue(engine.has_image(private_image))
        # The image is on the engine now: the next job does not pull it again.
        j = self.job("again", self.c, container_settings=private(),
                     custom_toolkit_settings=m.CustomToolkitSettings(command_line="cat /etc/bai-image"))
        self.assertEqual(j.execution_state, "succeeded")
        self.assertIn(f"image {private_image} is on the engine: not pulled", self.read("again", "execution.log"))

    def test_a_failed_pull_fails_the_job_at_its_preparation_with_the_registrys_words(self):
        for name, settings, words in [("badpass", private(image="bai/other:1", password="wrong"), "unauthorized"),
                                      ("noimage", private(image="bai/missing:1"), "not found")]:
            with self.subTest(name):
                j = self.job(name, self.c, container_settings=settings,
                             custom_toolkit_settings=m.CustomToolkitSettings(command_line="echo never"))
                self.assertEqual(j.execution_state, "failed")
                self.assertIsNone(j.execution_info.exit_code)
                error = j.execution_info.errors[0]
                self.assertEqual(error.code, "JobPreparationFailed")
                self.assertIn("could not be pulled", error.message)
                self.assertIn(words, error.message.lower())
                self.assertNotIn("never", self.read(name, "stdout.txt") if "stdout.txt" in self.files(name) else "")

    def test_terminate_removes_the_running_container(self):
        self.job("held", self.c, wait=False, container_settings=private(),
                 custom_toolkit_settings=m.CustomToolkitSettings(command_line="sleep 600"))
        harness.wait_for(lambda: engine.owned_containers(), timeout=60, what="the job's container")
        self.client.jobs.begin_terminate(RG, WS, EXP, "held").result()
        j = self.wait_job("held")
        self.assertEqual(j.execution_state, "failed")
        self.assertEqual(j.execution_info.errors[0].code, "JobTerminated")


    def test_wall_clock_time_and_preemption_end_the_container_too(self):
        slow = self.job("slow", self.c, container_settings=private(),
                        constraints=m.JobBasePropertiesConstraints(max_wall_clock_time="PT2S"),
                        custom_toolkit_settings=m.CustomToolkitSettings(command_line="sleep 600"))
        self.assertEqual(slow.execution_state, "failed")
        harness.wait_for(lambda: engine.owned_containers() == [], timeout=30, what="the slow job's container to go")
        lowpri = self.cluster("lowpri", nodes=1, priority="lowpriority")
        self.wait_cluster("lowpri", idle=1)
        self.job("pre", lowpri, wait=False, container_settings=private(),
                 custom_toolkit_settings=m.CustomToolkitSettings(command_line="sleep 600"))
        first = harness.wait_for(lambda: engine.owned_containers(), timeout=60, what="the job's container")
        node = next(n for n in self.nodes() if n["cluster"].endswith("/clusters/lowpri"))
        r = requests.post(f"{self.endpoints['arm']}/emulator/nodes/{node['nodeId']}/preempt", verify=self.endpoints["ca_cert"])
        self.assertEqual(r.status_code, 200, r.text)
        # Requeued: its container goes with the node, and the job runs again in a new one.
        harness.wait_for(lambda: (lambda now: now and not set(now) & set(first))(engine.owned_containers()),
                         timeout=60, what="the requeued job's new container")
        self.client.jobs.begin_delete(RG, WS, EXP, "pre").result()


class RealDockerMpiTest(RealDockerTestCase):
    @classmethod
    def setUpClass(cls):
        # An image with OpenMPI (the host's, at the same paths): the ranks' daemons start in it.
        engine.import_image("bai/mpi:1", "the mpi image", MPI_PACKAGES + PYTHON_PACKAGES)
        super().setUpClass()
        cls.c = cls.cluster(cls, "mpi", nodes=2)
        cls.wait_cluster(cls, "mpi", idle=2)

    def test_mpi_ranks_run_in_their_nodes_containers(self):
        command = ("echo rank=$OMPI_COMM_WORLD_RANK image=$(cat /etc/bai-image | tr ' ' -) "
                   "container=$(sed -n 's/.*upperdir=\\([^,]*\\).*/\\1/p' /proc/self/mountinfo | head -n 1)")
        j = self.job("mpidock", self.c, node_count=2,
                     container_settings=m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(image="bai/mpi:1")),
                     custom_mpi_settings=m.CustomMpiSettings(command_line=command, process_count=4))
        log = self.execution_log("mpidock")
        self.assertEqual(j.execution_state, "succeeded", log + self.read("mpidock", "stderr.txt"))
        lines = [line.split() for line in self.read("mpidock", "stdout.txt").splitlines() if line.startswith("rank=")]
        self.assertEqual(sorted(words[0] for words in lines), ["rank=0", "rank=1", "rank=2", "rank=3"])
        self.assertTrue(all(words[1] == "image=the-mpi-image" for words in lines), lines)
        # Two ranks in each node's container: two containers.
        containers = [words[2] for words in lines]
        self.assertEqual(len(set(containers)), 2, lines)
        self.assertEqual(sorted(containers.count(c) for c in set(containers)), [2, 2])
        self.assertIn("image bai/mpi:1 is on the engine: not pulled", log)

    def test_horovod_ranks_run_in_their_nodes_containers(self):
        self.share.get_file_client("scripts/hvd.py").upload_file(HOROVOD_SCRIPT.encode())
        j = self.job("hvddock", self.c, node_count=2,
                     container_settings=m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(image="bai/mpi:1")),
                     horovod_settings=m.HorovodSettings(python_script_file_path="$AZ_BATCHAI_MOUNT_ROOT/afs/scripts/hvd.py",
                                                        process_count=4))
        log = self.execution_log("hvddock")
        self.assertEqual(j.execution_state, "succeeded", log + self.read("hvddock", "stderr.txt"))
        lines = [dict(w.split("=", 1) for w in line.split()) for line in self.read("hvddock", "stdout.txt").splitlines()
                 if line.startswith("rank=")]
        self.assertEqual(sorted(line["rank"] for line in lines), ["0", "1", "2", "3"])
        self.assertTrue(all(line["size"] == "4" and line["image"] == "the-mpi-image" for line in lines), lines)
        containers = [line["container"] for line in lines]
        self.assertNotIn("None", containers)
        self.assertEqual(sorted(containers.count(c) for c in set(containers)), [2, 2])  # two ranks in each node's


class RealDockerRestartTest(RealDockerTestCase):
    def ran_once(self):
        try:
            self.share.get_file_client("ran-once").get_file_properties()
            return True
        except ResourceNotFoundError:
            return False

    def test_a_stopped_emulator_leaves_no_container(self):
        c = self.cluster("stopped", nodes=1)
        self.wait_cluster("stopped", idle=1)
        self.job("held", c, wait=False, container_settings=private(),
                 custom_toolkit_settings=m.CustomToolkitSettings(command_line="sleep 600"))
        harness.wait_for(lambda: engine.owned_containers(), timeout=60, what="the job's container")
        code, _ = self.emu.stop()  # SIGTERM
        self.assertEqual(code, 0)
        self.assertEqual(engine.owned_containers(), [])
        self.emu.start()
        type(self).client = harness.arm_client(type(self).client.__class__, self.emu.endpoints)
        self.client.jobs.begin_delete(RG, WS, EXP, "held").result()
        harness.wait_for(lambda: engine.owned_containers() == [], timeout=30, what="no container left")

    def test_a_killed_emulators_container_is_removed_by_the_next_start(self):
        c = self.cluster("restarted", nodes=1)
        self.wait_cluster("restarted", idle=1)
        command = ("if [ -e $AZ_BATCHAI_MOUNT_ROOT/afs/ran-once ]; then echo second; "
                   "else touch $AZ_BATCHAI_MOUNT_ROOT/afs/ran-once; exec sleep 600; fi")
        self.job("again", c, wait=False, container_settings=private(),
                 custom_toolkit_settings=m.CustomToolkitSettings(command_line=command))
        try:
            first = harness.wait_for(lambda: engine.owned_containers(), timeout=60, what="the first run's container")
        except TimeoutError:
            self.fail("no container; the job: " + str(self.client.jobs.get(RG, WS, EXP, "again").execution_state) +
                      "\n" + self.read("again", "execution.log") + self.read("again", "stderr.txt"))
        harness.wait_for(lambda: self.ran_once(), timeout=30, what="the first run's mark")
        self.emu.send(9)
        self.emu.process.wait()
        self.assertEqual(engine.owned_containers(), first)  # a killed emulator cannot remove it
        self.emu.start()
        type(self).client = harness.arm_client(type(self).client.__class__, self.emu.endpoints)
        try:
            j = self.wait_job("again", timeout=90)
        except TimeoutError:
            with open(os.path.join(self.emu.location, "emulator.log")) as f:
                self.fail("the requeued job did not end; emulator.log:\n" + f.read()[-4000:] +
                          "\ncontainers: " + engine.client("ps", "--all", "--format", "{{.Names}} {{.Status}} {{.Labels}}").stdout +
                          "\nexecution.log: " + self.read("again", "execution.log"))
        self.assertEqual(j.execution_state, "succeeded", self.read("again", "execution.log"))
        self.assertIn("second", self.read("again", "stdout.txt"))
        self.assertFalse(set(first) & set(engine.owned_containers()))
        harness.wait_for(lambda: engine.owned_containers() == [], timeout=30, what="no container left")


if __name__ == "__main__":
    unittest.main()
