"""Jobs with containerSettings: the bubblewrap sandbox on the host's root and on an image's root
(--image), its writable layer, the service's paths inside, MPI ranks entering their nodes'
sandboxes, --strict-images, and the docker runtime through a stand-in docker client."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from azure.mgmt.batchai import models as m

import harness
from jobs_fixture import JobsTestCase, record_command, RG, WS, EXP

SERVICE = "/mnt/batch/tasks/shared/LS_root"


def container(image):
    return m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(image=image))


def sandbox_works():
    bwrap = shutil.which("bwrap")
    return bwrap and subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-pid", "/bin/true"]).returncode == 0


def mounts_under(path):
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if line.split()[4].startswith(path)]


def layers_under(path):
    """The jobs' writable roots mounted under path (the nodes' share mounts are not counted)."""
    return [p for p in mounts_under(path) if "/containers/" in p]


def make_image(root, marker):
    """A minimal image root: bash and a few tools with their libraries, and /etc/bai-image."""
    tools = ["bash", "cat", "env", "hostname", "ls", "sh", "touch", "mkdir"]
    files = set()
    for tool in tools:
        path = shutil.which(tool)
        files.add(path)
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        for word in out.split():
            if word.startswith("/"):
                files.add(word)
    for d in ["etc", "tmp", "proc", "dev", "sys", "mnt", "root", "usr/bin", "usr/lib", "usr/lib64"]:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    for top in ["bin", "lib", "lib64", "sbin"]:  # merged /usr, as Debian 12
        os.symlink("usr/" + (top if top != "sbin" else "bin"), os.path.join(root, top))
    for path in files:
        for name in {path, os.path.realpath(path)}:
            parts = name.lstrip("/").split("/")
            if parts[0] != "usr":
                parts = ["usr", "bin" if parts[0] == "sbin" else parts[0]] + parts[1:]
            target = os.path.join(root, *parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not os.path.exists(target):
                shutil.copy2(os.path.realpath(path), target)
    with open(os.path.join(root, "etc", "bai-image"), "w") as f:
        f.write(marker + "\n")


@unittest.skipUnless(sandbox_works(), "bubblewrap cannot make a sandbox here")
class SandboxHostRootTest(JobsTestCase):
    emulator_args = JobsTestCase.emulator_args + ["--container-runtime", "sandbox"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.c = cls.cluster(cls, "sandboxed", nodes=2)
        cls.wait_cluster(cls, "sandboxed", idle=2)

    def test_job_sees_the_service_paths_its_gpu_and_a_writable_layer(self):
        prep = m.JobPreparation(command_line="echo from-prep > /opt/bai-layer-test && hostname > $AZ_BATCHAI_JOB_TEMP/prep-host")
        command = (record_command("sbx") + " && cat /opt/bai-layer-test && hostname && "
                   "echo kept > $AZ_BATCHAI_JOB_TEMP/kept && ls $AZ_BATCHAI_SHARED_JOB_TEMP")
        j = self.job("sbx", self.c, container_settings=container("tensorflow/tensorflow:1.8.0-gpu"),
                     job_preparation=prep, custom_toolkit_settings=m.CustomToolkitSettings(command_line=command))
        self.assertEqual(j.execution_state, "succeeded", self.read("sbx", "stderr.txt"))
        rec = self.records("sbx")["sbx"]
        env = rec["env"]
        self.assertEqual(env["AZ_BATCHAI_MOUNT_ROOT"], SERVICE + "/mounts")
        self.assertEqual(env["AZ_BATCHAI_JOB_TEMP"], SERVICE + "/jobs/sbx")
        self.assertEqual(env["AZ_BATCHAI_JOB_MOUNT_ROOT"], SERVICE + "/jobs/sbx/mounts")
        self.assertEqual(env["AZ_BATCHAI_SHARED_JOB_TEMP"], SERVICE + "/jobs/sbx/shared")
        self.assertEqual(env["AZ_BATCHAI_MPI_HOST_FILE"], SERVICE + "/jobs/sbx/hostfile")
        self.assertTrue(env["AZ_BATCHAI_OUTPUT_OUT"].startswith(SERVICE + "/mounts/afs/"), env["AZ_BATCHAI_OUTPUT_OUT"])
        self.assertEqual(rec["cwd"], SERVICE + "/jobs/sbx")
        # In a container the node's GPU is numbered 0; NVIDIA_VISIBLE_DEVICES names it.
        self.assertEqual(env["CUDA_VISIBLE_DEVICES"], "0")
        self.assertTrue(env["NVIDIA_VISIBLE_DEVICES"].startswith("GPU-"))
        stdout = self.read("sbx", "stdout.txt").splitlines()
        self.assertIn("from-prep", stdout)  # the preparation's write, in the job's layer
        master = [n for n in self.nodes() if n["cluster"].endswith("/clusters/sandboxed")]
        self.assertIn(stdout[stdout.index("from-prep") + 1], [n["nodeId"] for n in master])  # hostname: the node id
        self.assertFalse(os.path.exists("/opt/bai-layer-test"), "the writable layer leaked onto the host")
        log = self.read("sbx", "execution.log")
        self.assertIn("runtime: sandbox (bubblewrap) on the host's root: the image tensorflow/tensorflow:1.8.0-gpu", log)
        self.assertEqual(layers_under(self.emu.location), [], "a writable root stayed mounted")

    def test_mpi_ranks_run_in_their_nodes_sandboxes(self):
        command = record_command("mpi") + " && hostname"
        j = self.job("mpisbx", self.c, node_count=2, container_settings=container("ubuntu:16.04"),
                     custom_mpi_settings=m.CustomMpiSettings(command_line=command, process_count=4))
        self.assertEqual(j.execution_state, "succeeded", self.read("mpisbx", "stderr.txt"))
        records = self.records("mpisbx")
        self.assertEqual(sorted(records), ["mpi-rank0", "mpi-rank1", "mpi-rank2", "mpi-rank3"])
        for rec in records.values():
            self.assertEqual(rec["env"]["AZ_BATCHAI_MOUNT_ROOT"], SERVICE + "/mounts")
            self.assertEqual(rec["cwd"], SERVICE + "/jobs/mpisbx")
        hosts = [line for line in self.read("mpisbx", "stdout.txt").splitlines() if line.startswith("tvm-")]
        self.assertEqual(sorted(set(hosts)), sorted(n["nodeId"] for n in self.nodes() if n["cluster"].endswith("/clusters/sandboxed")))
        self.assertEqual(layers_under(self.emu.location), [])

    def test_terminate_kills_the_sandboxed_processes(self):
        sleeper = harness.sleep_of_this_run(6004)
        self.job("sbxterm", self.c, wait=False, container_settings=container("ubuntu:16.04"),
                 custom_toolkit_settings=m.CustomToolkitSettings(command_line=sleeper))
        self.wait_job("sbxterm", states=("running",))
        harness.wait_for(lambda: harness.processes_named(sleeper), what="the job's sleep")
        self.client.jobs.begin_terminate(RG, WS, EXP, "sbxterm").result()
        j = self.wait_job("sbxterm")
        self.assertEqual(j.execution_state, "failed")
        self.assertEqual(j.execution_info.errors[0].code, "JobTerminated")
        harness.wait_for(lambda: not harness.processes_named(sleeper), what="the job's processes to go")
        harness.wait_for(lambda: not layers_under(self.emu.location), what="the writable roots to go")

    def test_paths_off_the_volumes_fail_clearly(self):
        j = self.job("offvol", self.c, container_settings=container("ubuntu:16.04"),
                     std_out_err_path_prefix="/var/tmp/nowhere",
                     custom_toolkit_settings=m.CustomToolkitSettings(command_line="true"))
        self.assertEqual(j.execution_state, "failed")
        self.assertEqual(j.execution_info.errors[0].code, "JobPreparationFailed")
        self.assertIn("/var/tmp/nowhere", j.execution_info.errors[0].message)


@unittest.skipUnless(sandbox_works(), "bubblewrap cannot make a sandbox here")
class SandboxRestartTest(JobsTestCase):
    emulator_args = JobsTestCase.emulator_args + ["--container-runtime", "sandbox"]

    def test_a_killed_emulator_leaves_no_writable_root_mounted_and_the_job_runs_again(self):
        c = self.cluster("restarted", nodes=1)
        self.wait_cluster("restarted", idle=1)
        sleeper = harness.sleep_of_this_run(6001)  # the first run's process outlives the killed emulator
        command = (f"if [ -e $AZ_BATCHAI_MOUNT_ROOT/afs/ran-once ]; then echo second; "
                   f"else touch $AZ_BATCHAI_MOUNT_ROOT/afs/ran-once; exec {sleeper}; fi")
        self.job("again", c, wait=False, container_settings=container("ubuntu:16.04"),
                 custom_toolkit_settings=m.CustomToolkitSettings(command_line=command))
        harness.wait_for(lambda: harness.processes_named(sleeper), what="the first run")
        try:
            self.assertNotEqual(layers_under(self.emu.location), [])  # the job's writable root
            self.emu.send(9)
            self.emu.process.wait()
            self.emu.start()
            type(self).client = harness.arm_client(type(self).client.__class__, self.emu.endpoints)
            try:
                j = self.wait_job("again", timeout=60)
            except TimeoutError:
                with open(os.path.join(self.emu.location, "emulator.log")) as f:
                    self.fail("the requeued job did not end; emulator.log:\n" + f.read()[-4000:] +
                              "\nmounts: " + "\n".join(mounts_under(self.emu.location)))
            self.assertEqual(j.execution_state, "succeeded")
            self.assertIn("second", self.read("again", "stdout.txt"))
            self.assertEqual(layers_under(self.emu.location), [])
        finally:
            harness.kill_processes_named(sleeper)


@unittest.skipUnless(sandbox_works(), "bubblewrap cannot make a sandbox here")
class SandboxCleanStopTest(JobsTestCase):
    emulator_args = JobsTestCase.emulator_args + ["--container-runtime", "sandbox"]

    def test_sigterm_stops_the_sandboxed_job_and_unmounts_its_layer(self):
        c = self.cluster("stopped", nodes=1)
        self.wait_cluster("stopped", idle=1)
        sleeper = harness.sleep_of_this_run(6003)
        self.job("stopme", c, wait=False, container_settings=container("ubuntu:16.04"),
                 custom_toolkit_settings=m.CustomToolkitSettings(command_line="exec " + sleeper))
        running = lambda: harness.processes_named(sleeper)
        harness.wait_for(running, what="the job's process")
        try:
            self.assertNotEqual(layers_under(self.emu.location), [])
            code, _ = self.emu.stop()
            self.assertEqual(code, 0)
            self.assertEqual(mounts_under(self.emu.location), [])
            harness.wait_for(lambda: not running(), timeout=5, what="the job's process to be gone")
        finally:
            harness.kill_processes_named(sleeper)
            self.emu.start()  # for tearDownClass


@unittest.skipUnless(sandbox_works(), "bubblewrap cannot make a sandbox here")
class SandboxImageRootTest(JobsTestCase):
    @classmethod
    def setUpClass(cls):
        cls.image_dir = tempfile.mkdtemp(prefix="bai-image-")
        make_image(cls.image_dir, "bai test image")
        cls.emulator_args = JobsTestCase.emulator_args + ["--image", "bai/test=" + cls.image_dir, "--strict-images"]
        super().setUpClass()
        cls.c = cls.cluster(cls, "imaged", nodes=1)
        cls.wait_cluster(cls, "imaged", idle=1)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.image_dir, ignore_errors=True)

    def test_job_runs_in_the_image_root(self):
        command = ("cat /etc/bai-image > $AZ_BATCHAI_OUTPUT_OUT/image.txt && "
                   "echo $AZ_BATCHAI_MOUNT_ROOT >> $AZ_BATCHAI_OUTPUT_OUT/image.txt && "
                   "touch /etc/written-in-layer && ls /usr/bin/python3 || echo no-python")
        j = self.job("img", self.c, container_settings=container("bai/test:1.0"),
                     custom_toolkit_settings=m.CustomToolkitSettings(command_line=command))
        self.assertEqual(j.execution_state, "succeeded", self.read("img", "stderr.txt"))
        self.assertEqual(self.read("img", "image.txt", "OUT"), "bai test image\n" + SERVICE + "/mounts\n")
        self.assertIn("no-python", self.read("img", "stdout.txt"))  # the host's python is not in the image
        self.assertFalse(os.path.exists(os.path.join(self.image_dir, "etc", "written-in-layer")),
                         "the job wrote into the image")
        self.assertIn("image bai/test:1.0 from " + self.image_dir + " (--image)", self.read("img", "execution.log"))

    def test_strict_images_fails_a_job_whose_image_is_missing(self):
        j = self.job("noimg", self.c, container_settings=container("missing/image:2"),
                     custom_toolkit_settings=m.CustomToolkitSettings(command_line="true"))
        self.assertEqual(j.execution_state, "failed")
        error = j.execution_info.errors[0]
        self.assertEqual(error.code, "JobPreparationFailed")
        self.assertIn("missing/image:2", error.message)
        self.assertIn("--strict-images", error.message)
        self.assertIsNone(j.execution_info.exit_code)


# A stand-in docker client: `version` answers as an engine would; `image inspect` finds no image
# and `pull` gets it; `ps` lists none; `run --detach` keeps the container's flags (by its name)
# and `exec` runs the command in a bubblewrap sandbox built from them and exec's own (volumes,
# workdir, env names), so the job only works if the emulator's docker commands are complete; `rm`
# records the containers removed. (test_jobs_docker.py has the real engine.)
FAKE_DOCKER = r'''#!/usr/bin/python3
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
log = os.path.join(here, "calls.jsonl")
args = sys.argv[1:]
with open(log, "a") as f:
    f.write(json.dumps({"args": args}) + "\n")
if args[:1] == ["--config"]:
    args = args[2:]
if args[:1] == ["version"]:
    print("99.0-fake"); sys.exit(0)
if args[:2] == ["image", "inspect"]:
    sys.exit(1)
if args[:1] in (["rm"], ["pull"], ["ps"]):
    sys.exit(0)
takes_value = {"--name", "--network", "--volume", "--gpus", "--shm-size", "--workdir", "--env", "--label"}

def flags(words):
    i, found = 0, []
    while i < len(words) and words[i].startswith("--"):
        found.append((words[i], words[i + 1] if words[i] in takes_value else None))
        i += 2 if words[i] in takes_value else 1
    return found, words[i:]

if args[:1] == ["run"]:
    run, rest = flags(args[1:])
    if ("--detach", None) not in run:
        sys.exit(125)
    with open(os.path.join(here, "container-" + dict(run)["--name"] + ".json"), "w") as f:
        json.dump(run, f)
    print("fake-container-id"); sys.exit(0)
if args[:1] != ["exec"]:
    sys.exit(125)
exec_flags, rest = flags(args[1:])
name, command = rest[0], rest[1:]
with open(os.path.join(here, "container-" + name + ".json")) as f:
    run = json.load(f)
bwrap = ["bwrap", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/mnt", "--unshare-pid", "--die-with-parent", "--clearenv"]
volumes = []
for flag, value in run:
    if flag == "--volume":
        host, view = value.split(":", 1)
        read_only = view.endswith(":ro")
        view = view[:-3] if read_only else view
        # This stand-in's root is the host's, read-only: it cannot make a new mount point
        # outside /mnt (docker makes them in the container's layer). Such a volume is left out.
        if view.startswith("/mnt/") or os.path.exists(view):
            volumes.append((view, host, read_only))
workdir = "/"
for flag, value in exec_flags:
    if flag == "--workdir":
        workdir = value
    elif flag == "--env":
        bwrap += ["--setenv", value, os.environ.get(value, "")]
for view, host, read_only in sorted(volumes, key=lambda v: v[0].count("/")):
    bwrap += ["--ro-bind" if read_only else "--bind", host, view]
bwrap += ["--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--chdir", workdir, "--"] + command
os.execvp("bwrap", bwrap)
'''


@unittest.skipUnless(sandbox_works(), "bubblewrap cannot make a sandbox here")
class DockerRuntimeTest(JobsTestCase):
    @classmethod
    def setUpClass(cls):
        cls.bin_dir = tempfile.mkdtemp(prefix="bai-fake-docker-")
        docker = os.path.join(cls.bin_dir, "docker")
        with open(docker, "w") as f:
            f.write(FAKE_DOCKER)
        os.chmod(docker, 0o755)
        cls.docker_log = os.path.join(cls.bin_dir, "calls.jsonl")
        cls.emulator_env = dict(os.environ, PATH=cls.bin_dir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        super().setUpClass()
        cls.c = cls.cluster(cls, "docked", nodes=1)
        cls.wait_cluster(cls, "docked", idle=1)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.bin_dir, ignore_errors=True)

    def calls(self):
        with open(self.docker_log) as f:
            return [json.loads(line)["args"] for line in f]

    def test_job_runs_through_docker_with_its_gpus_volumes_and_variables(self):
        settings = m.ContainerSettings(image_source_registry=m.ImageSourceRegistry(image="nvidia/cuda:9.0-base"),
                                       shm_size="1g")
        j = self.job("dock", self.c, container_settings=settings,
                     environment_variables=[m.EnvironmentVariable(name="MY_VAR", value="my value")],
                     secrets=[m.EnvironmentVariableWithSecretValue(name="SECRET_VAR", value="s3cret")],
                     custom_toolkit_settings=m.CustomToolkitSettings(command_line=record_command("dock")))
        self.assertEqual(j.execution_state, "succeeded", self.read("dock", "stderr.txt"))
        env = self.records("dock")["dock"]["env"]
        self.assertEqual(env["MY_VAR"], "my value")
        self.assertEqual(env["SECRET_VAR"], "s3cret")
        self.assertEqual(env["AZ_BATCHAI_MOUNT_ROOT"], SERVICE + "/mounts")
        self.assertEqual(env["CUDA_VISIBLE_DEVICES"], "0")
        runs = [c for c in self.calls() if c[:1] == ["run"]]
        self.assertEqual(len(runs), 1)  # one container for the job on its node
        run = runs[0]
        self.assertIn("--detach", run)
        self.assertIn("nvidia/cuda:9.0-base", run)
        self.assertEqual(run[run.index("--network") + 1], "host")
        self.assertEqual(run[run.index("--shm-size") + 1], str(1 << 30))
        self.assertNotIn("--gpus", run)  # fake GPUs have no devices to give an engine (docker_parts_test: real ones)
        self.assertEqual(len(env["NVIDIA_VISIBLE_DEVICES"].split(",")), 1)
        name = run[run.index("--name") + 1]
        execs = [c for c in self.calls() if c[:1] == ["exec"]]
        self.assertEqual(len(execs), 1)
        self.assertIn(name, execs[0])
        self.assertIn("SECRET_VAR", execs[0])
        self.assertNotIn("s3cret", " ".join(run + execs[0]))  # values travel in the environment, not argv
        # Removed by name at the end.
        self.assertTrue(any(c[:2] == ["rm", "--force"] and name in c[2:] for c in self.calls()), self.calls())
        self.assertIn("runtime: docker, image nvidia/cuda:9.0-base", self.read("dock", "execution.log"))
        self.assertIn("docker engine 99.0-fake", self.read("dock", "execution.log"))
        # Pulled first (no credentials: the client's own configuration), and labelled as this
        # emulator's, so that a later start finds what a killed one left.
        self.assertIn(["pull", "nvidia/cuda:9.0-base"], self.calls())
        self.assertLess(self.calls().index(["pull", "nvidia/cuda:9.0-base"]), self.calls().index(run))
        self.assertLess(self.calls().index(run), self.calls().index(execs[0]))
        self.assertEqual(run[run.index("--label") + 1], "bai-emulator.owner=" + os.path.join(self.emu.location, "nodes"))


if __name__ == "__main__":
    unittest.main()
