"""The real az CLI's `az batchai` module (azure-cli 2.45, api-version 2018-05-01) against the
emulator after `bai az-login`: the second tutorial's lines verbatim, every command of the module
with az's output formats, --query, --no-wait and configured defaults, and bad input. Each
command is checked by what az prints and by the emulator's state (an ARM GET) after it. The
wall time of every az command is printed next to `az group show`'s at the end (not asserted:
az's own start-up dominates)."""
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

from azure.mgmt.storage import StorageManagementClient
from azure.storage.blob import BlobServiceClient
from azure.storage.fileshare import ShareServiceClient

import harness

SUBSCRIPTION = "ba1e5ab5-0000-4000-8000-000000000001"  # the one az works in after `bai az-login`
ACCOUNT = "recipestore"

HOROVOD_SCRIPT = r'''
import os
rank, size = os.environ["OMPI_COMM_WORLD_RANK"], os.environ["OMPI_COMM_WORLD_SIZE"]
prepared = os.path.exists(os.path.join(os.environ["AZ_BATCHAI_JOB_TEMP"], "prepared"))
print("horovod rank %s of %s prepared=%s" % (rank, size, prepared))
'''


def recipe(*parts):
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared",
                                         "reference", "jobs", "recipes", *parts))


def workspace_path(group, workspace, *rest):
    path = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{group}/providers/Microsoft.BatchAI/workspaces/{workspace}"
    return path + "".join("/" + r for r in rest)


class AzBatchAI(unittest.TestCase):
    timings = []  # (command line, wall seconds), printed at the end
    timings_lock = threading.Lock()

    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="bai-azbatchai-")
        # `python` on the nodes: the system interpreter, as the images' python would be.
        cls.tools = os.path.join(cls.home, "tools")
        os.makedirs(cls.tools)
        os.symlink("/usr/bin/python3", os.path.join(cls.tools, "python"))
        cls.emu = harness.Emulator(args=["--gpus", "fake:8", "--container-runtime", "host", "--autoscale-idle", "300"],
                                   env=dict(os.environ, PATH=cls.tools + ":" + os.environ["PATH"])).start()
        cls.endpoints = cls.emu.endpoints
        cls.env = dict(os.environ, AZURE_CONFIG_DIR=os.path.join(cls.home, "az"), AZURE_CORE_COLLECT_TELEMETRY="no",
                       AZURE_CORE_NO_COLOR="true", BAI_CONFIG_DIR=os.path.join(cls.home, "bai"), HOME=cls.home)
        for name in ("REQUESTS_CA_BUNDLE", "AZURE_BATCHAI_STORAGE_ACCOUNT", "AZURE_BATCHAI_STORAGE_KEY"):
            cls.env.pop(name, None)
        login = subprocess.run([harness.CLI, "--data-dir", cls.emu.location, "az-login"], capture_output=True,
                               text=True, env=cls.env, timeout=300)
        assert login.returncode == 0, login.stderr
        cls.env["REQUESTS_CA_BUNDLE"] = cls.endpoints["ca_cert"]
        # A storage account in az's subscription (the module looks its key up through ARM) with the
        # recipe's shares and a container.
        storage = StorageManagementClient(harness.StaticToken(), SUBSCRIPTION, base_url=cls.endpoints["arm"],
                                          connection_verify=cls.endpoints["ca_cert"], polling_interval=0.1)
        for group in ("batchai.recipes", "commands", "refusals", "myResourceGroup"):
            harness.arm_call(cls.endpoints, "PUT", f"/subscriptions/{SUBSCRIPTION}/resourcegroups/{group}",
                             {"location": "eastus"}, api_version="2021-04-01").raise_for_status()
        storage.storage_accounts.begin_create("batchai.recipes", ACCOUNT, {
            "location": "eastus", "kind": "StorageV2", "sku": {"name": "Standard_LRS"}}).result()
        key = storage.storage_accounts.list_keys("batchai.recipes", ACCOUNT).keys[0].value
        conn = harness.connection_string(cls.endpoints, ACCOUNT, key)
        with ShareServiceClient.from_connection_string(conn) as shares:
            for share in ("logs", "scripts", "data", "batchaiquickstart"):
                shares.create_share(share)
            shares.get_share_client("scripts").create_directory("horovod")
            shares.get_share_client("scripts").get_file_client("horovod/tensorflow_mnist.py").upload_file(HOROVOD_SCRIPT)
        with BlobServiceClient.from_connection_string(conn) as blobs:
            blobs.create_container("datalake")
        storage.close()
        # The baseline: az's start-up and one ARM GET.
        cls.group_show = [cls.timed(["group", "show", "-n", "batchai.recipes"]).returncode == 0 and
                          cls.timings.pop()[1] for _ in range(3)]

    @classmethod
    def tearDownClass(cls):
        harness.print_az_timings(cls.timings, cls.group_show)
        code, _ = cls.emu.stop()
        cls.emu.close()
        shutil.rmtree(cls.home, ignore_errors=True)
        assert code == 0, f"emulator exited with {code}"

    @classmethod
    def timed(cls, args, env=None, timeout=300):
        started = time.monotonic()
        result = harness.az(args, env=env or cls.env, timeout=timeout, cwd=cls.home)
        with cls.timings_lock:
            cls.timings.append(("az " + " ".join(args), time.monotonic() - started))
        return result

    def az(self, *args, ok=True, env=None):
        result = self.timed(list(args), env=env)
        if ok:
            self.assertEqual(result.returncode, 0, f"az {' '.join(args)}\n{result.stdout}\n{result.stderr}")
        self.assertNotIn("Traceback", result.stderr)
        return result

    def az_json(self, *args, env=None):
        return json.loads(self.az(*args, "-o", "json", env=env).stdout)

    def refused(self, *args, env=None):
        """An az command that must fail as az fails: exit 1 or 2, an `ERROR:` line, no traceback."""
        result = self.az(*args, ok=False, env=env)
        self.assertIn(result.returncode, (1, 2, 3), result.stderr)  # 3: az's exit code of a ResourceNotFound
        self.assertIn("ERROR:", result.stderr)
        return result.stderr

    def parallel(self, *calls):
        """Runs independent az commands (each a zero-argument callable) at once; their results in order.
        BAI_AZ_SEQUENTIAL=1 runs them one after another, for wall times not shared with others."""
        if os.environ.get("BAI_AZ_SEQUENTIAL") == "1":
            return [c() for c in calls]
        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            return [f.result() for f in [pool.submit(c) for c in calls]]

    def arm(self, path, status=200):
        r = harness.arm_call(self.endpoints, "GET", path)
        self.assertEqual(r.status_code, status, r.text)
        return r.json() if r.text else None

    def wait_arm(self, path, predicate, what, timeout=60, api_version="2018-05-01"):
        last = []

        def check():
            r = harness.arm_call(self.endpoints, "GET", path, api_version=api_version)
            last[:] = [r.text + " " + harness.arm_call(self.endpoints, "GET", path.rsplit("/jobs/", 1)[0] + "/clusters",
                                                       api_version=api_version).text]
            return predicate(r)  # not r: a 404 Response is falsy
        try:
            harness.wait_for(check, timeout=timeout, interval=0.1, what=what)
        except TimeoutError as e:
            raise AssertionError(f"{e}; the last answer: {last[0]}") from None

    def through_proxy(self):
        """az's environment with the emulator's proxy front door: the module reads a cluster's setup
        files from the share's public URL (ACCOUNT.file.core.windows.net) with the storage SDK."""
        bundle = os.path.join(self.home, "trust.pem")
        with open(bundle, "w") as out:
            for pem in (self.endpoints["ca_cert"], self.endpoints["proxy_ca"]):
                with open(pem) as f:
                    out.write(f.read())
        return dict(self.env, HTTPS_PROXY=self.endpoints["proxy"], NO_PROXY="127.0.0.1,localhost",
                    REQUESTS_CA_BUNDLE=bundle)

    def write(self, name, content):
        path = os.path.join(self.home, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content, indent=2))
        return path

    def test_help_lists_the_module(self):
        top, create = self.parallel(lambda: self.az("batchai", "-h").stdout,
                                    lambda: self.az("batchai", "job", "create", "-h").stdout)
        for group in ("cluster", "experiment", "file-server", "job", "workspace"):
            self.assertRegex(top, rf"\n\s+{group}\s+:")
        for flag in ("--config-file -f", "--cluster -c", "--storage-account-name", "--experiment -e"):
            self.assertIn(flag, create)

    def test_second_tutorial_verbatim(self):
        """The Horovod recipe's az batchai lines as the tutorial writes them (its job preparation made
        harmless: no apt or pip here)."""
        names = ["-g", "batchai.recipes", "-w", "recipe_workspace"]
        created = self.az_json("batchai", "workspace", "create", "-g", "batchai.recipes", "-n", "recipe_workspace",
                               "-l", "eastus")
        self.assertEqual((created["name"], created["location"], created["provisioningState"]),
                         ("recipe_workspace", "eastus", "succeeded"))
        self.assertEqual(self.arm(workspace_path("batchai.recipes", "recipe_workspace"))["location"], "eastus")
        cluster = self.az_json("batchai", "cluster", "create", "-n", "nc24r", *names, "-s", "Standard_NC24R", "-t", "2",
                               "--generate-ssh-keys")
        self.assertEqual((cluster["vmSize"], cluster["scaleSettings"]["manual"]["targetNodeCount"]), ("STANDARD_NC24R", 2))
        self.assertTrue(os.path.exists(os.path.join(self.home, ".ssh", "id_rsa.pub")))
        with open(os.path.join(self.home, ".ssh", "id_rsa.pub")) as f:
            key = f.read().strip()
        stored = self.arm(workspace_path("batchai.recipes", "recipe_workspace", "clusters", "nc24r"))
        self.assertEqual(stored["properties"]["userAccountSettings"]["adminUserSshPublicKey"], key)
        self.az("batchai", "experiment", "create", *names, "-n", "horovod_experiment", "-o", "none")
        with open(recipe("Horovod", "Horovod-Tensorflow", "job.json")) as f:
            job = json.load(f)
        job["properties"]["jobPreparation"]["commandLine"] = "touch $AZ_BATCHAI_JOB_TEMP/prepared"
        job_json = self.write("job.json", job)
        created = self.az_json("batchai", "job", "create", "-n", "horovod", "-c", "nc24r", *names, "-e",
                               "horovod_experiment", "-f", job_json, "--storage-account-name", ACCOUNT)
        self.assertEqual(created["name"], "horovod")
        shares = created["mountVolumes"]["azureFileShares"]
        self.assertEqual([s["azureFileUrl"] for s in shares],
                         [f"https://{ACCOUNT}.file.core.windows.net/logs", f"https://{ACCOUNT}.file.core.windows.net/scripts"])
        job_path = workspace_path("batchai.recipes", "recipe_workspace", "experiments", "horovod_experiment", "jobs",
                                  "horovod")
        self.assertEqual(self.arm(job_path)["properties"]["cluster"]["id"],
                         workspace_path("batchai.recipes", "recipe_workspace", "clusters", "nc24r"))
        job_names = ["-j", "horovod", *names, "-e", "horovod_experiment"]
        streamed = self.az("batchai", "job", "file", "stream", *job_names, "-f", "stdout.txt").stdout
        self.assertEqual(sorted(streamed.splitlines()),
                         ["horovod rank 0 of 2 prepared=True", "horovod rank 1 of 2 prepared=True"])
        self.assertEqual(self.arm(job_path)["properties"]["executionState"], "succeeded")
        listed, nodes = self.parallel(
            lambda: self.az("batchai", "job", "file", "list", *job_names, "-o", "table").stdout,
            lambda: self.az("batchai", "job", "node", "list", *job_names, "-o", "table").stdout)
        self.assertRegex(listed, r"Name\s+Type\s+Size\s+Modified")
        self.assertRegex(listed, r"\nstdout\.txt\s+file\s+\d+")
        self.assertRegex(listed, r"\nstdout-job_prep\.txt\s+file")
        self.assertRegex(nodes, r"ID\s+IP\s+SSH Port")
        rows = [line.split() for line in nodes.splitlines()[2:] if line.strip()]
        self.assertEqual(len(rows), 2)
        login = harness.arm_call(self.endpoints, "POST", job_path + "/listRemoteLoginInformation").json()["value"]
        self.assertEqual(sorted(r[0] for r in rows), sorted(n["nodeId"] for n in login))

    def test_every_command_of_the_module(self):
        g = ["-g", "commands"]
        names = g + ["-w", "ws"]
        created = self.az_json("batchai", "workspace", "create", *g, "-n", "ws")
        self.assertEqual(created["location"], "eastus")  # the group's
        options = ["-s", "Standard_D1", "--min", "0", "--max", "2", "-t", "1", "-i", "UbuntuLTS", "--vm-priority",
                   "lowpriority", "-u", "alice", "-p", "Pass-word1", "--storage-account-name", ACCOUNT, "--afs-name",
                   "data", "--afs-mount-path", "afs", "--bfs-name", "datalake", "--bfs-mount-path", "lake",
                   "--setup-task", "echo set up > $AZ_BATCHAI_MOUNT_ROOT/afs/setup.txt", "--setup-task-output",
                   "$AZ_BATCHAI_MOUNT_ROOT/afs"]
        # auto-scale, file-server create/show/delete and job wait --interval: the extension's (az 2.45's
        # module fails in them), the rest the module's own.
        usages, workspaces, location, _, small, _, _ = self.parallel(
            lambda: self.az("batchai", "list-usages", "-l", "eastus", "-o", "table").stdout,
            lambda: self.az("batchai", "workspace", "list", *g, "-o", "table").stdout,
            lambda: self.az("batchai", "workspace", "show", *g, "-n", "ws", "--query", "location", "-o", "tsv").stdout,
            lambda: self.az("batchai", "experiment", "create", *names, "-n", "exp", "-o", "none"),
            lambda: self.az_json("batchai", "cluster", "create", *names, "-n", "small", "-s", "Standard_D1", "-t", "1",
                                 "-u", "alice", "-p", "Pass-word1"),
            lambda: self.az("batchai", "cluster", "create", *names, "-n", "opts", *options, "-o", "none"),
            lambda: self.az("batchai", "file-server", "create", *names, "-n", "fs", "-s", "Standard_D1", "--disk-count",
                            "2", "--disk-size", "10", "--storage-sku", "Standard_LRS", "-u", "alice", "-p", "Pass-word1",
                            "-o", "none"))
        disks = self.arm(workspace_path("commands", "ws", "fileservers", "fs"))["properties"]["dataDisks"]
        self.assertEqual((disks["diskCount"], disks["diskSizeInGB"]), (2, 10))
        self.assertRegex(usages, r"Value\s+Usage\s+Limit")
        self.assertRegex(workspaces, r"Name\s+Resource Group\s+Location")
        self.assertRegex(workspaces, r"\nws\s+commands\s+eastus")
        self.assertEqual(location, "eastus\n")
        self.assertEqual(small["scaleSettings"]["manual"]["targetNodeCount"], 1)
        self.arm(workspace_path("commands", "ws", "experiments", "exp"))
        opts = self.arm(workspace_path("commands", "ws", "clusters", "opts"))["properties"]
        self.assertEqual(opts["scaleSettings"]["autoScale"],
                         {"minimumNodeCount": 0, "maximumNodeCount": 2, "initialNodeCount": 1})
        self.assertEqual((opts["vmPriority"], opts["userAccountSettings"]["adminUserName"]), ("lowpriority", "alice"))
        self.assertEqual(opts["virtualMachineConfiguration"]["imageReference"]["offer"], "UbuntuServer")
        volumes = opts["nodeSetup"]["mountVolumes"]
        self.assertEqual((volumes["azureFileShares"][0]["azureFileUrl"], volumes["azureFileShares"][0]["relativeMountPath"]),
                         (f"https://{ACCOUNT}.file.core.windows.net/data", "afs"))
        self.assertEqual((volumes["azureBlobFileSystems"][0]["containerName"],
                          volumes["azureBlobFileSystems"][0]["relativeMountPath"]), ("datalake", "lake"))
        self.assertIn("setup.txt", opts["nodeSetup"]["setupTask"]["commandLine"])
        self.wait_arm(workspace_path("commands", "ws", "clusters", "small"),
                      lambda r: r.json()["properties"].get("nodeStateCounts", {}).get("idleNodeCount") == 1,
                      "an idle node in small")
        quick = self.write("quick.json", {"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/afs",
                                                          "customToolkitSettings": {"commandLine": "echo hello"}}})
        long = self.write("long.json", {"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP",
                                                        "customToolkitSettings": {"commandLine": "sleep 300"}}})
        job = ["-g", "commands", "-w", "ws", "-e", "exp"]
        # quick's logs go to a share mounted for the job alone (the module's --afs-name of job create).
        self.parallel(lambda: self.az("batchai", "job", "create", *job, "-n", "quick", "-c", "small", "-f", quick,
                                      "--storage-account-name", ACCOUNT, "--afs-name", "logs", "-o", "none"),
                      lambda: self.az("batchai", "job", "create", *job, "-n", "long", "-c", "opts", "-f", long, "-o",
                                      "none"))
        quick_path = workspace_path("commands", "ws", "experiments", "exp", "jobs", "quick")
        long_path = workspace_path("commands", "ws", "experiments", "exp", "jobs", "long")
        self.wait_arm(quick_path, lambda r: r.json()["properties"]["executionState"] == "succeeded", "quick succeeded")
        self.assertEqual(self.arm(quick_path)["properties"]["mountVolumes"]["azureFileShares"][0]["azureFileUrl"],
                         f"https://{ACCOUNT}.file.core.windows.net/logs")
        # opts scales (auto) from none to a node for `long`, setting it up first.
        self.wait_arm(long_path, lambda r: r.json()["properties"]["executionState"] == "running", "long running")
        (clusters, vm_size, nodes, setup_files, experiments, experiment, jobs, state, _, outputs, streamed,
         long_nodes) = self.parallel(
            lambda: self.az("batchai", "cluster", "list", *names, "-o", "table").stdout,
            lambda: self.az("batchai", "cluster", "show", *names, "-n", "small", "--query", "vmSize", "-o", "tsv").stdout,
            lambda: self.az_json("batchai", "cluster", "node", "list", *names, "-c", "small"),
            lambda: self.az("batchai", "cluster", "file", "list", *names, "-c", "opts", "-o", "table",
                            env=self.through_proxy()).stdout,
            lambda: self.az("batchai", "experiment", "list", *names, "-o", "tsv").stdout,
            lambda: self.az_json("batchai", "experiment", "show", *names, "-n", "exp"),
            lambda: self.az("batchai", "job", "list", *job, "-o", "table").stdout,
            lambda: self.az("batchai", "job", "show", *job, "-n", "quick", "--query", "executionState", "-o", "tsv").stdout,
            lambda: self.az("batchai", "job", "wait", *job, "-n", "quick", "--interval", "1"),
            lambda: self.az("batchai", "job", "file", "list", *job, "-j", "quick", "--query", "[].name", "-o", "tsv").stdout,
            lambda: self.az("batchai", "job", "file", "stream", *job, "-j", "quick", "-f", "stdout.txt").stdout,
            lambda: self.az_json("batchai", "job", "node", "list", *job, "-j", "long"))
        self.assertRegex(clusters, r"\nopts\s+commands\s+ws\s+STANDARD_D1\s+steady")
        self.assertRegex(clusters, r"\nsmall\s+commands\s+ws\s+STANDARD_D1\s+steady\s+1")
        self.assertEqual(vm_size, "STANDARD_D1\n")
        login = harness.arm_call(self.endpoints, "POST", workspace_path("commands", "ws", "clusters", "small") +
                                 "/listRemoteLoginInformation").json()["value"]
        self.assertEqual([n["nodeId"] for n in nodes], [n["nodeId"] for n in login])
        self.assertRegex(setup_files, r"Name\s+Is directory\s+Size")
        self.assertRegex(setup_files, r"\nstdout-tvm-\S+\.txt\s+no\s+0\n")
        self.assertIn("exp", experiments)
        self.assertEqual(experiment["id"], workspace_path("commands", "ws", "experiments", "exp"))
        self.assertRegex(jobs, r"\nlong\s+opts\s+commands\s+ws\s+custom\s+1\s+running")
        self.assertRegex(jobs, r"\nquick\s+small\s+commands\s+ws\s+custom\s+1\s+succeeded\s+0")
        self.assertEqual(state, "succeeded\n")
        self.assertLessEqual({"execution.log", "stderr.txt", "stdout.txt"}, set(outputs.split()))
        self.assertEqual(streamed, "hello\n")
        self.assertEqual(len(long_nodes), 1)
        # Terminate, resize, deletes (one with --no-wait), each seen in the emulator's state.
        self.parallel(lambda: self.az("batchai", "job", "terminate", *job, "-n", "long", "-y"),
                      lambda: self.az("batchai", "cluster", "resize", *names, "-n", "small", "-t", "2", "-o", "none"),
                      lambda: self.az("batchai", "job", "delete", *job, "-n", "quick", "-y", "--no-wait"))
        terminated = self.arm(long_path)["properties"]
        self.assertEqual((terminated["executionState"], terminated["executionInfo"]["errors"][0]["code"]),
                         ("failed", "JobTerminated"))
        self.assertEqual(self.arm(workspace_path("commands", "ws", "clusters", "small"))["properties"]["scaleSettings"]
                         ["manual"]["targetNodeCount"], 2)
        self.wait_arm(quick_path, lambda r: r.status_code == 404, "quick deleted")
        self.az("batchai", "cluster", "auto-scale", *names, "-n", "small", "--min", "0", "--max", "1", "-o", "none")
        self.assertEqual(self.arm(workspace_path("commands", "ws", "clusters", "small"))["properties"]["scaleSettings"],
                         {"autoScale": {"minimumNodeCount": 0, "maximumNodeCount": 1, "initialNodeCount": 0}})
        self.az("batchai", "job", "delete", *job, "-n", "long", "-y")
        self.arm(long_path, status=404)
        _, _, servers, server = self.parallel(
            lambda: self.az("batchai", "experiment", "delete", *names, "-n", "exp", "-y"),
            lambda: self.az("batchai", "cluster", "delete", *names, "-n", "opts", "-y", "--no-wait"),
            lambda: self.az("batchai", "file-server", "list", *names, "-o", "table").stdout,
            lambda: self.az("batchai", "file-server", "show", *names, "-n", "fs", "--query", "mountSettings.mountPoint",
                            "-o", "tsv").stdout)
        self.assertRegex(servers, r"\nfs\s+commands\s+Standard_D1\s+2 x 10 Gb")
        self.assertEqual(server, "/data\n")
        self.az("batchai", "file-server", "delete", *names, "-n", "fs", "-y")
        self.arm(workspace_path("commands", "ws", "fileservers", "fs"), status=404)
        self.arm(workspace_path("commands", "ws", "experiments", "exp"), status=404)
        self.wait_arm(workspace_path("commands", "ws", "clusters", "opts"), lambda r: r.status_code == 404,
                      "opts deleted")
        self.az("batchai", "workspace", "delete", *g, "-n", "ws", "-y")
        self.arm(workspace_path("commands", "ws"), status=404)

    def test_configured_group_and_location(self):
        """`az configure --defaults`: the module takes the group (and the workspace's location from it);
        it has no workspace default (its -w is required everywhere): the extension's commands add it."""
        env = dict(self.env, AZURE_CONFIG_DIR=os.path.join(self.home, "az-defaults"))
        shutil.copytree(self.env["AZURE_CONFIG_DIR"], env["AZURE_CONFIG_DIR"])
        self.az("configure", "--defaults", "group=refusals", "location=westus2", env=env)
        created = self.az_json("batchai", "workspace", "create", "-n", "defaulted", env=env)
        self.assertEqual((created["resourceGroup"], created["location"]), ("refusals", "westus2"))
        self.assertEqual(self.arm(workspace_path("refusals", "defaulted"))["location"], "westus2")
        listed = self.az("batchai", "workspace", "list", "--query", "[].name", "-o", "tsv", env=env).stdout
        self.assertIn("defaulted", listed.split())
        # The module has no workspace default; with the extension, a line without -w goes to bai,
        # which takes az's.
        self.az("configure", "--defaults", "workspace=defaulted", env=env)
        self.az("batchai", "cluster", "create", "-n", "viadefault", "-s", "Standard_D1", "-t", "0", "-u", "alice", "-p",
                "Pass-word1", "-o", "none", env=env)
        self.arm(workspace_path("refusals", "defaulted", "clusters", "viadefault"))
        self.assertEqual(self.az("batchai", "cluster", "list", "--query", "[].name", "-o", "tsv", env=env).stdout,
                         "viadefault\n")

    def test_bad_input(self):
        """Each refusal is az's `ERROR:` naming what is wrong, and leaves nothing behind."""
        names = ["-g", "refusals", "-w", "rws"]
        self.az("batchai", "workspace", "create", "-g", "refusals", "-n", "rws", "-o", "none")
        self.parallel(lambda: self.az("batchai", "cluster", "create", *names, "-n", "zero", "-s", "Standard_D1", "-t",
                                      "0", "-u", "alice", "-p", "Pass-word1", "-o", "none"),
                      lambda: self.az("batchai", "experiment", "create", *names, "-n", "exp", "-o", "none"))
        invalid = self.write("invalid.json", {"properties": {"nodeCount": 0, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP",
                                                             "customToolkitSettings": {"commandLine": "true"}}})
        workspace, vm_size, job, node, flag = self.parallel(
            lambda: self.refused("batchai", "cluster", "create", "-g", "refusals", "-w", "nowhere", "-n", "c", "-s",
                                 "Standard_D1", "-t", "1", "-u", "alice", "-p", "Pass-word1"),
            lambda: self.refused("batchai", "cluster", "create", *names, "-n", "c", "-s", "Standard_NOPE", "-t", "1",
                                 "-u", "alice", "-p", "Pass-word1"),
            lambda: self.refused("batchai", "job", "create", *names, "-e", "exp", "-n", "j", "-c", "zero", "-f", invalid),
            lambda: self.refused("batchai", "cluster", "node", "exec", *names, "-c", "zero", "-n", "tvm-gone", "--exec",
                                 "hostname"),
            lambda: self.refused("batchai", "cluster", "create", *names, "-n", "c", "-s", "Standard_D1", "-t", "1",
                                 "--vm-priority", "cheap"))
        self.assertIn("(WorkspaceNotFound) The specified workspace nowhere is not found", workspace)
        self.assertIn("properties.vmSize Standard_NOPE", vm_size)
        self.assertIn("properties.nodeCount must be at least 1", job)
        self.assertIn("Cannot find a node with id=tvm-gone", node)
        self.assertIn("--vm-priority", flag)
        self.arm(workspace_path("refusals", "nowhere"), status=404)
        self.arm(workspace_path("refusals", "rws", "clusters", "c"), status=404)
        self.arm(workspace_path("refusals", "rws", "experiments", "exp", "jobs", "j"), status=404)

    def test_first_tutorial_flat_lines_through_the_extension(self):
        """The first releases' lines (no workspace: the 2017-09-01-preview API) as the quickstart
        writes them, through the extension `bai az-login` installed."""
        installed = os.path.join(self.env["AZURE_CONFIG_DIR"], "cliextensions", "batchai-flat")
        self.assertTrue(os.path.isfile(os.path.join(installed, "azext_batchai_flat", "__init__.py")))
        flat = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/myResourceGroup/providers/Microsoft.BatchAI"
        preview = "2017-09-01-preview"
        rg = ["--resource-group", "myResourceGroup"]
        cluster = self.az_json("batchai", "cluster", "create", "--name", "mycluster", "--vm-size", "STANDARD_NC6",
                               "--image", "UbuntuLTS", "--min", "1", "--max", "1", "--storage-account-name", ACCOUNT,
                               "--afs-name", "batchaiquickstart", "--afs-mount-path", "azurefileshare",
                               "--user-name", "azureuser", "--password", "Pass-word1", *rg, "--location", "eastus")
        self.assertEqual((cluster["id"], cluster["vmSize"]), (flat + "/clusters/mycluster", "STANDARD_NC6"))
        stored = harness.arm_call(self.endpoints, "GET", flat + "/clusters/mycluster", api_version=preview).json()
        self.assertEqual(stored["properties"]["scaleSettings"]["manual"]["targetNodeCount"], 1)
        self.assertEqual(stored["properties"]["nodeSetup"]["mountVolumes"]["azureFileShares"][0]["relativeMountPath"],
                         "azurefileshare")
        job_json = self.write("flat/job.json", {"properties": {
            "nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/azurefileshare",
            "customToolkitSettings": {"commandLine": "echo Finished Epoch 1 >&2; echo trained"}}})
        self.az("batchai", "job", "create", "--name", "myjob", "--cluster-name", "mycluster", *rg, "--config",
                job_json, "-o", "none")
        job_path = flat + "/jobs/myjob"

        self.wait_arm(job_path, lambda r: r.json()["properties"]["executionState"].lower() in ("succeeded", "failed"),
                      "myjob ends", api_version=preview)
        files, streamed, clusters, jobs = self.parallel(
            lambda: self.az("batchai", "job", "list-files", "--name", "myjob", "--output-directory-id", "stdouterr",
                            *rg, "--query", "[].name", "-o", "tsv").stdout,
            lambda: self.az("batchai", "job", "stream-file", "--job-name", "myjob", "--output-directory-id",
                            "stdouterr", "--name", "stderr.txt", *rg).stdout,
            lambda: self.az("batchai", "cluster", "list", *rg, "-o", "table").stdout,
            lambda: self.az("batchai", "job", "list", *rg, "-o", "table").stdout)
        self.assertLessEqual({"stderr.txt", "stdout.txt"}, set(files.split()))
        self.assertEqual(streamed, "Finished Epoch 1\n")
        self.assertRegex(clusters, r"\nmycluster\s+myResourceGroup\s+STANDARD_NC6\s+steady")
        self.assertRegex(jobs, r"\nmyjob\s+myResourceGroup\s+mycluster\s+.*\s+succeeded\s+0")
        self.az("batchai", "job", "delete", "--name", "myjob", *rg, "-y")
        self.az("batchai", "cluster", "delete", "--name", "mycluster", *rg, "-y")
        for path in (job_path, flat + "/clusters/mycluster"):
            self.assertEqual(harness.arm_call(self.endpoints, "GET", path, api_version=preview).status_code, 404)


if __name__ == "__main__":
    unittest.main()
