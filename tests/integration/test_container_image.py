"""The emulator's container image (the Dockerfile at the repository's root), built and run on a
real docker engine, and driven from this machine with the SDKs and the pytest plugin, as a CI
pipeline drives it as a service.

No registry is reachable here, so the base image is made on the spot: a Debian 12 root made by
debootstrap through the package mirror with the image's runtime packages
(tools/container/runtime-packages), imported with `docker import`. The image is built by the
Dockerfile with a context that holds this build's programs, which its compiling stage then takes
as built (CI compiles them once already; the repository's own context leaves build/ out, and
`docker build .` compiles), with no network: the base must hold every runtime package.

Two containers run: one with the image's default command (--bind-all) in a network namespace of
its own, whose listening sockets show every address of the container; one sharing this machine's
network (the test's servers stay on loopback, as every test's do) with the emulator on free
loopback ports, driven from here: /health, a Batch AI job in the container's sandbox runtime that
writes to an Azure file share, and the pytest plugin's example attached to it by URL.

Skips visibly where docker or debootstrap is missing, or the mirror cannot be reached. The debootstrap root is
kept in $BAI_IMAGE_BASE_CACHE (default ~/.cache/batchai-emulator) for the next run, keyed by the package list.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

from azure.mgmt.batchai import BatchAI
from azure.mgmt.batchai import models as m
from azure.mgmt.resource import ResourceManagementClient
from azure.storage.fileshare import ShareServiceClient

import docker_engine
import harness

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGES_FILE = os.path.join(ROOT, "tools", "container", "runtime-packages")
MIRROR = "http://deb.debian.org/debian"
BASE = "bai-test/debian:12"
IMAGE = "bai-test/batchai-emulator"
PROGRAMS = ["emulator/batchai-emulator", "emulator/bai-node-ssh", "tools/bai", "fuse_mounts/bai-blobfuse",
            "fuse_mounts/bai-sharefuse"]
DEFAULT_PORTS = [10443, 10000, 10004, 10447, 10080]


def runtime_packages():
    with open(PACKAGES_FILE) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def base_root_tar(work):
    """A tar of a Debian 12 root with the runtime packages (debootstrap), from the cache when there."""
    packages = runtime_packages()
    key = hashlib.sha256(("bookworm " + " ".join(packages)).encode()).hexdigest()[:16]
    cache = os.environ.get("BAI_IMAGE_BASE_CACHE") or os.path.expanduser("~/.cache/batchai-emulator")
    tar = os.path.join(cache, f"debian-12-runtime-{key}.tar")
    if os.path.exists(tar):
        return tar
    root = os.path.join(work, "debian-root")
    done = subprocess.run(["debootstrap", "--variant=minbase", "--include=" + ",".join(packages), "bookworm", root,
                           MIRROR], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise unittest.SkipTest("SKIPPED: debootstrap could not make a Debian 12 root through " + MIRROR +
                                " (no mirror here?): " + done.stdout[-600:] + done.stderr[-600:])
    os.makedirs(cache, exist_ok=True)
    partial = tar + ".partial"
    subprocess.run(["tar", "-C", root, "-cf", partial, "."], check=True)
    os.replace(partial, tar)
    shutil.rmtree(root, ignore_errors=True)
    return tar


CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
                "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
                "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
                "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
                "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF",
                "CHECKPOINT_RESTORE"]


def privileged():
    """docker run's --privileged, or where this machine is itself a container whose bounding set
    lacks capabilities (runc cannot grant them: "unable to apply caps"), what --privileged grants
    but those: every other capability, the devices FUSE needs, no seccomp, AppArmor or masked paths."""
    with open("/proc/self/status") as f:
        bounding = int(next(line for line in f if line.startswith("CapBnd:")).split()[1], 16)
    lacking = [name for bit, name in enumerate(CAPABILITIES) if not bounding >> bit & 1]
    if not lacking:
        return ["--privileged"]
    flags = ["--cap-add", "ALL"]
    for name in lacking:
        flags += ["--cap-drop", name]
    return flags + ["--device", "/dev/fuse", "--security-opt", "seccomp=unconfined", "--security-opt",
                    "apparmor=unconfined", "--security-opt", "systempaths=unconfined"]


def read_json(path):
    """The JSON in `path`, or None while it is being written."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError):
        return None


def listening_ports(proc_net_tcp):
    """{(address hex, port)} of the sockets in LISTEN (state 0A) in a /proc/net/tcp text."""
    found = set()
    for line in proc_net_tcp.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 3 and fields[3] == "0A":
            address, port = fields[1].split(":")
            found.add((address, int(port, 16)))
    return found


class ContainerImage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [p for p in ("debootstrap",) if not shutil.which(p)]
        if missing:
            raise unittest.SkipTest("SKIPPED: " + ", ".join(missing) + " not installed (tools/setup --test installs it)")
        build = os.path.dirname(os.path.dirname(harness.EMULATOR))
        absent = [p for p in PROGRAMS if not os.path.exists(os.path.join(build, p))]
        if absent:
            raise unittest.SkipTest("SKIPPED: this build lacks " + ", ".join(absent))
        cls.engine = docker_engine.DockerEngine().start()
        cls.work = tempfile.mkdtemp(prefix="bai-image-test-")
        try:
            cls.make_image(build)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def make_image(cls, build):
        started = time.monotonic()
        with open(base_root_tar(cls.work), "rb") as tar:
            subprocess.run([cls.engine.docker, "import", "-", BASE], env=cls.engine.env(), stdin=tar,
                           capture_output=True, check=True, timeout=600)
        cls.base_seconds = time.monotonic() - started
        # The context: the Dockerfile, what its stages copy, and this build's programs.
        context = os.path.join(cls.work, "context")
        os.makedirs(os.path.join(context, "tools"))
        shutil.copy2(os.path.join(ROOT, "Dockerfile"), context)
        shutil.copytree(os.path.join(ROOT, "tools", "container"), os.path.join(context, "tools", "container"))
        for program in PROGRAMS:
            target = os.path.join(context, "build", program)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(build, program), target)
        started = time.monotonic()
        built = subprocess.run([cls.engine.docker, "build", "--network", "none", "--build-arg", "BASE=" + BASE,
                                "-t", IMAGE, context],
                               env=cls.engine.env(DOCKER_BUILDKIT="0"), capture_output=True, text=True, timeout=600)
        cls.build_seconds = time.monotonic() - started
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        cls.size = int(cls.engine.client("image", "inspect", "--format", "{{.Size}}", IMAGE).stdout.strip())

    @classmethod
    def tearDownClass(cls):
        engine = getattr(cls, "engine", None)
        if engine:
            ids = engine.client("ps", "--all", "--quiet", "--filter", "ancestor=" + IMAGE, check=False).stdout.split()
            if ids:
                engine.client("rm", "--force", *ids, check=False)
            engine.stop()
        if getattr(cls, "work", None):
            # The containers wrote the data directories as root: removable by this (root) test.
            shutil.rmtree(cls.work, ignore_errors=True)

    def run_container(self, *args, network="host", data=None, options=()):
        data = data or tempfile.mkdtemp(prefix="data-", dir=self.work)
        argv = ["run", "--detach", *privileged(), "--network", network, "--volume", f"{data}:/data", *options, IMAGE,
                *args]
        started = self.engine.client(*argv, check=False)
        self.assertEqual(started.returncode, 0, started.stderr)
        cid = started.stdout.strip()
        self.addCleanup(self.engine.client, "rm", "--force", cid, check=False)
        return cid, data

    def logs(self, cid):
        done = self.engine.client("logs", cid, check=False)
        return done.stdout[-3000:] + done.stderr[-3000:]

    def test_the_default_command_listens_on_every_address_of_the_container(self):
        cid, _ = self.run_container(network="none")

        def listening():
            table = self.engine.client("exec", cid, "cat", "/proc/net/tcp", check=False).stdout
            ports = listening_ports(table)
            return ports if all(("00000000", p) in ports for p in DEFAULT_PORTS) else None
        ports = harness.wait_for(listening, timeout=60, interval=0.2, what="the five endpoints listening")
        self.assertTrue(all(("00000000", p) in ports for p in DEFAULT_PORTS), (ports, self.logs(cid)))
        # Its URLs still name loopback and the default ports, which the published ports reach.
        endpoints = json.loads(self.engine.client("exec", cid, "cat", "/data/endpoints.json").stdout)
        self.assertEqual(endpoints["arm"], "https://127.0.0.1:10443")
        self.assertEqual(endpoints["blob"], "http://127.0.0.1:10000")
        # The image's health check (bai status) passes.
        health = harness.wait_for(
            lambda: self.engine.client("inspect", "--format", "{{.State.Health.Status}}", cid).stdout.strip() == "healthy",
            timeout=60, interval=0.5, what="docker's health check")
        self.assertTrue(health)
        # docker stop: tini passes SIGTERM on, and the emulator stops cleanly.
        self.engine.client("stop", "--time", "20", cid)
        code = self.engine.client("inspect", "--format", "{{.State.ExitCode}}", cid).stdout.strip()
        self.assertEqual(code, "0", self.logs(cid))

    def test_a_public_host_names_the_urls_and_the_certificate(self):
        # A CI service's alias: clients in the service's network reach it as "batchai" (docker's
        # --add-host makes the name, on the container's own loopback: nothing leaves it).
        cid, _ = self.run_container("--bind-all", "--public-host", "batchai", network="none",
                                    options=("--add-host", "batchai:127.0.0.1"))
        client = """
import json, ssl, sys, urllib.request
context = ssl.create_default_context(cafile="/data/tls/cert.pem")  # verifies the name "batchai"
with urllib.request.urlopen("https://batchai:10443/emulator/endpoints", timeout=5, context=context) as r:
    endpoints = json.load(r)
with urllib.request.urlopen(endpoints["blob"] + "/health", timeout=5) as r:
    print(json.dumps({"endpoints": endpoints, "blob_health": r.status}))
"""
        def answered():
            done = self.engine.client("exec", cid, "python3", "-c", client, check=False)
            return json.loads(done.stdout) if done.returncode == 0 else None
        seen = harness.wait_for(answered, timeout=60, interval=0.3, what="the endpoints by the public name")
        self.assertEqual(seen["blob_health"], 200)
        for name, scheme, port in (("arm", "https", 10443), ("blob", "http", 10000), ("file", "http", 10004),
                                   ("batch", "http", 10447), ("proxy", "http", 10080)):
            self.assertEqual(seen["endpoints"][name], f"{scheme}://batchai:{port}")
        # The health check reaches the endpoints on loopback, whatever name the URLs give.
        self.assertTrue(harness.wait_for(
            lambda: self.engine.client("inspect", "--format", "{{.State.Health.Status}}", cid).stdout.strip() == "healthy",
            timeout=60, interval=0.5, what="docker's health check"))

    def test_run_as_a_service_and_driven_from_here(self):
        # --bind-all is refused on a machine that is no container (the option's guard): the host's
        # emulator here refuses it only where /.dockerenv is absent, so this is checked in the image.
        started = time.monotonic()
        cid, data = self.run_container("--arm-port", "0", "--blob-port", "0", "--file-port", "0", "--batch-port", "0",
                                       "--proxy-port", "0")
        endpoints_file = os.path.join(data, "endpoints.json")
        endpoints = harness.wait_for(lambda: os.path.exists(endpoints_file) and read_json(endpoints_file),
                                     timeout=60, interval=0.05, what="endpoints.json")

        def healthy():
            try:
                with urllib.request.urlopen(endpoints["blob"] + "/health", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        harness.wait_for(healthy, timeout=60, interval=0.05, what="/health")
        ready = time.monotonic() - started
        # The data directory is the volume: the certificate to trust is in it.
        cert = os.path.join(data, "tls", "cert.pem")
        self.assertTrue(os.path.exists(cert))
        endpoints = dict(endpoints, ca_cert=cert)
        print(f"image {self.size / 1e6:.0f} MB; base made and imported in {self.base_seconds:.1f} s; built in "
              f"{self.build_seconds:.1f} s; /health answered {ready:.2f} s after docker run", file=sys.stderr)

        # A Batch AI job in the container's sandbox runtime, writing to an Azure file share.
        shares = ShareServiceClient.from_connection_string(harness.connection_string(endpoints))
        share = shares.create_share("jobs")
        harness.arm_client(ResourceManagementClient, endpoints).resource_groups.create_or_update("rg", {"location": "eastus"})
        client = harness.arm_client(BatchAI, endpoints)
        client.workspaces.begin_create("rg", "ws", m.WorkspaceCreateParameters(location="eastus")).result()
        client.experiments.begin_create("rg", "ws", "exp").result()
        volume = m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
            account_name=harness.DEV_ACCOUNT, azure_file_url=f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/jobs",
            credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path="afs")])
        cluster = client.clusters.begin_create("rg", "ws", "c", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)),
            user_account_settings=m.UserAccountSettings(admin_user_name="alice", admin_user_password="Secret-Pass1"),
            node_setup=m.NodeSetup(mount_volumes=volume))).result()
        client.jobs.begin_create("rg", "ws", "exp", "hello", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=1, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
            custom_toolkit_settings=m.CustomToolkitSettings(
                command_line="echo hello from $(hostname) > $AZ_BATCHAI_MOUNT_ROOT/afs/hello.txt; python3 --version"))).result()
        job = harness.wait_for(
            lambda: (lambda j: j if j.execution_state in ("succeeded", "failed") else None)(
                client.jobs.get("rg", "ws", "exp", "hello")),
            timeout=120, interval=0.2, what="the job done")
        self.assertEqual(job.execution_state, "succeeded", self.logs(cid))
        written = share.get_file_client("hello.txt").download_file().readall().decode()
        self.assertTrue(written.startswith("hello from "), written)

        # The pytest plugin's example, attached to the container by its ARM URL, as the README shows.
        example = os.path.join(ROOT, "tools", "pytest-batchai", "example")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools", "pytest-batchai"), PYTHONDONTWRITEBYTECODE="1",
                   BATCHAI_EMULATOR_ENDPOINTS=endpoints["arm"], BATCHAI_EMULATOR_CA_CERT=cert)
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-m", "pytest", "-p", "pytest_batchai", "-p", "no:cacheprovider", "-q",
                                 example], capture_output=True, text=True, env=env, cwd=self.work, timeout=300)
        self.assertEqual(result.returncode, 0, result.stdout[-3000:] + result.stderr[-3000:])
        self.assertRegex(result.stdout, r"\b5 passed\b")
        print(f"the pytest example against the container took {time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
