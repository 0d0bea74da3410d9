"""bai against a running emulator: every command group in the 2018-05-01 spelling, the output
formats (-o json|table|tsv, --query), defaults, and the errors a user meets."""
import json
import os
import re
import shutil
import tempfile
import unittest

from azure.storage.blob import BlobServiceClient
from azure.storage.fileshare import ShareServiceClient

import harness
from bai_fixture import BaiTestCase

JOB = {"properties": {
    "nodeCount": 1,
    "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
    "outputDirectories": [{"id": "MODEL", "pathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs"}],
    "customToolkitSettings": {"commandLine":
        "echo hello from bai; echo model > $AZ_BATCHAI_OUTPUT_MODEL/model.txt; echo oops >&2; exit 3"}}}


class BaiCommands(BaiTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with ShareServiceClient.from_connection_string(harness.connection_string(cls.endpoints)) as shares:
            shares.create_share("jobs")

    def test_workspace_and_experiment_round_trip_in_every_output_format(self):
        self.bai("group", "create", "-n", "rg-ws", "-l", "westus2")
        ws = self.bai_json("workspace", "create", "-g", "rg-ws", "-n", "ws1")
        self.assertEqual(ws["location"], "westus2")  # the group's
        self.assertEqual(ws["resourceGroup"], "rg-ws")
        self.assertEqual(ws["provisioningState"], "succeeded")  # properties flattened, as az showed them
        self.assertNotIn("properties", ws)
        shown = self.bai("workspace", "show", "-g", "rg-ws", "-n", "ws1").stdout
        keys = re.findall(r'^  "(\w+)":', shown, re.M)
        self.assertEqual(keys, sorted(keys))  # az's json: keys sorted, indent 2

        table = self.bai("workspace", "list", "-g", "rg-ws", "-o", "table").stdout.splitlines()
        self.assertEqual(table[0].split(), ["Name", "Resource", "Group", "Location", "State"])
        self.assertTrue(set(table[1]) <= {"-", " "})
        self.assertEqual(table[2].split(), ["ws1", "rg-ws", "westus2", "succeeded"])

        tsv = self.bai("workspace", "show", "-g", "rg-ws", "-n", "ws1", "--query", "{n: name, l: location}", "-o", "tsv")
        self.assertEqual(tsv.stdout, "ws1\twestus2\n")  # an object's values in the query's order
        tsv = self.bai("workspace", "show", "-g", "rg-ws", "-n", "ws1", "--query", "[name, location]", "-o", "tsv")
        self.assertEqual(tsv.stdout, "ws1\nwestus2\n")  # a list is rows, as knack prints it
        self.bai("experiment", "create", "-g", "rg-ws", "-w", "ws1", "-n", "e1")
        names = self.bai_json("experiment", "list", "-g", "rg-ws", "-w", "ws1", "--query", "[].name")
        self.assertEqual(names, ["e1"])
        self.bai("experiment", "delete", "-g", "rg-ws", "-w", "ws1", "-n", "e1", "-y")
        gone = self.bai("experiment", "show", "-g", "rg-ws", "-w", "ws1", "-n", "e1", ok=False)
        self.assertEqual(gone.returncode, 3, gone.stderr)  # az's exit status for a missing resource
        self.assertIn("NotFound", gone.stderr)
        self.bai("workspace", "delete", "-g", "rg-ws", "-n", "ws1", "--yes")
        self.assertEqual(self.bai_json("workspace", "list", "-g", "rg-ws"), [])

    def test_defaults_fill_group_workspace_and_experiment(self):
        self.bai("group", "create", "-n", "rg-def", "-l", "eastus")
        self.bai("configure", "--defaults", "group=rg-def", "workspace=wsd")
        self.addCleanup(self.bai, "configure", "--defaults", "group=", "workspace=", "experiment=")
        self.bai("workspace", "create", "-n", "wsd")
        self.bai("experiment", "create", "-n", "ed")
        listed = self.bai_json("configure", "--list-defaults")
        self.assertIn({"name": "group", "value": "rg-def", "source": os.path.join(self.home, ".bai", "config")}, listed)
        self.assertEqual(self.bai_json("experiment", "show", "-n", "ed")["resourceGroup"], "rg-def")
        bad = self.bai("configure", "--defaults", "colour=blue", ok=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("colour=blue", bad.stderr)

    def test_cluster_job_files_and_nodes(self):
        g, w, e = ["-g", "rg-c"], ["-w", "wsc"], ["-e", "exc"]
        self.bai("group", "create", "-n", "rg-c", "-l", "eastus")
        self.bai("workspace", "create", *g, "-n", "wsc")
        self.bai("experiment", "create", *g, *w, "-n", "exc")
        cluster = self.bai_json("cluster", "create", *g, *w, "-n", "c1", "-s", "STANDARD_NC6", "-t", "1",
                                "--afs-name", "jobs", "--storage-account-name", harness.DEV_ACCOUNT,
                                "-u", "alice", "-p", "Secret-Pass1", "--image", "UbuntuLTS")
        self.assertEqual(cluster["vmSize"], "STANDARD_NC6")
        share = cluster["nodeSetup"]["mountVolumes"]["azureFileShares"][0]
        self.assertEqual(share["azureFileUrl"], f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/jobs")
        self.assertEqual(share["relativeMountPath"], "afs")
        self.assertNotIn("accountKey", json.dumps(cluster))  # secrets are never returned
        self.assertEqual(cluster["virtualMachineConfiguration"]["imageReference"]["offer"], "UbuntuServer")  # --image UbuntuLTS
        harness.wait_for(lambda: self.bai("cluster", "show", *g, *w, "-n", "c1", "--query", "allocationState",
                                          "-o", "tsv").stdout == "steady\n", timeout=60, what="cluster steady")
        nodes = self.bai("cluster", "node", "list", *g, *w, "-c", "c1", "-o", "table").stdout.splitlines()
        self.assertEqual(nodes[0].split(), ["ID", "IP", "SSH", "Port"])
        self.assertEqual(len(nodes), 3)

        job_file = self.write("job.json", JOB)
        self.bai("job", "create", *g, *w, *e, "-n", "j1", "-c", "c1", "-f", job_file)
        waited = self.bai("job", "wait", *g, *w, *e, "-n", "j1", ok=False)
        self.assertEqual(waited.returncode, 3, waited.stderr)  # the job's exit code
        self.assertIn("exit code: 3", waited.stderr)
        self.assertIn("Job state: ", waited.stderr)  # the progress line
        segment = self.bai("job", "show", *g, *w, *e, "-n", "j1", "--query", "jobOutputDirectoryPathSegment",
                           "-o", "tsv").stdout.strip()
        self.assertRegex(segment, r"^[0-9a-f-]+/rg-c/workspaces/wsc/experiments/exc/jobs/j1/[0-9a-f-]+$")
        files = self.bai("job", "file", "list", *g, *w, *e, "-j", "j1", "-d", "stdouterr", "-o", "table").stdout
        self.assertRegex(files, r"stdout\.txt\s+file\s+\d+")
        self.assertRegex(files, r"stderr\.txt\s+file\s+5\s")
        streamed = self.bai("job", "file", "stream", *g, *w, *e, "-j", "j1", "-f", "stdout.txt").stdout
        self.assertEqual(streamed, "hello from bai\n")
        model = self.bai_json("job", "file", "list", *g, *w, *e, "-j", "j1", "-d", "MODEL")
        self.assertEqual([(f["name"], f["fileType"], f["contentLength"]) for f in model], [("model.txt", "file", 6)])
        table = self.bai("job", "list", *g, *w, *e, "-o", "table").stdout.splitlines()
        self.assertEqual(table[2].split(), ["j1", "rg-c", "c1", "rg-c", "wsc", "custom", "1", "failed", "3"])
        self.assertEqual(self.bai("job", "show", *g, *w, *e, "-n", "j1", "--query", "cluster.resourceGroup",
                                  "-o", "tsv").stdout, "rg-c\n")  # az added resourceGroup to nested ids too
        self.assertEqual(len(self.bai_json("job", "node", "list", *g, *w, *e, "-j", "j1")), 1)

        # -c also takes a cluster's ARM id; a file in a subdirectory streams with -p.
        nested = {"properties": dict(JOB["properties"], customToolkitSettings={"commandLine":
                  "mkdir -p $AZ_BATCHAI_OUTPUT_MODEL/sub && echo deep > $AZ_BATCHAI_OUTPUT_MODEL/sub/deep.txt"})}
        self.bai("job", "create", *g, *w, *e, "-n", "j2", "-c", cluster["id"], "-f", self.write("j2.json", nested))
        self.assertEqual(self.bai("job", "wait", *g, *w, *e, "-n", "j2").returncode, 0)
        self.assertEqual(self.bai("job", "file", "stream", *g, *w, *e, "-j", "j2", "-d", "MODEL", "-p", "sub",
                                  "-f", "deep.txt").stdout, "deep\n")
        listing = self.bai("job", "file", "list", *g, *w, *e, "-j", "j2", "-d", "MODEL", "-o", "table").stdout
        self.assertRegex(listing, r"\nsub\s+directory\s*\n")  # no size for a directory, as az
        self.bai("job", "delete", *g, *w, *e, "-n", "j2", "-y")

        self.bai("cluster", "resize", *g, *w, "-n", "c1", "-t", "0")
        scaled = self.bai_json("cluster", "auto-scale", *g, *w, "-n", "c1", "--min", "0", "--max", "2")
        self.assertEqual(scaled["scaleSettings"]["autoScale"], {"minimumNodeCount": 0, "maximumNodeCount": 2,
                                                                "initialNodeCount": 0})
        self.bai("job", "delete", *g, *w, *e, "-n", "j1", "-y")
        self.bai("cluster", "delete", *g, *w, "-n", "c1", "-y")
        self.assertEqual(self.bai_json("cluster", "list", *g, *w), [])

    def test_terminate_a_running_job(self):
        g, w, e = ["-g", "rg-t"], ["-w", "wst"], ["-e", "ext"]
        self.bai("group", "create", "-n", "rg-t", "-l", "eastus")
        self.bai("workspace", "create", *g, "-n", "wst")
        self.bai("experiment", "create", *g, *w, "-n", "ext")
        self.bai("cluster", "create", *g, *w, "-n", "ct", "-s", "STANDARD_D1", "-t", "1", "-u", "bob", "-p", "Pw-12345")
        body = {"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP",
                               "customToolkitSettings": {"commandLine": "sleep 600"}}}
        self.bai("job", "create", *g, *w, *e, "-n", "long", "-c", "ct", "-f", self.write("long.json", body))
        harness.wait_for(lambda: self.bai_json("job", "show", *g, *w, *e, "-n", "long")["executionState"] == "running",
                         timeout=60, what="job running")
        self.bai("job", "terminate", *g, *w, *e, "-n", "long", "-y")
        self.assertEqual(self.bai_json("job", "show", *g, *w, *e, "-n", "long")["executionState"], "failed")

    def test_cluster_from_a_file_with_setup_task_every_mount_kind_and_low_priority(self):
        g, w = ["-g", "rg-f"], ["-w", "wsf2"]
        self.bai("group", "create", "-n", "rg-f", "-l", "eastus")
        self.bai("workspace", "create", *g, "-n", "wsf2")
        with BlobServiceClient.from_connection_string(harness.connection_string(self.endpoints)) as blobs:
            blobs.create_container("lake").upload_blob("data.txt", b"lake data")
        self.bai("file-server", "create", *g, *w, "-n", "fs", "-s", "STANDARD_D2_V2", "--disk-count", "1",
                 "--disk-size", "10", "-p", "Pw-12345")
        cluster_file = self.write("cluster.json", {"properties": {
            "vmSize": "STANDARD_D1", "scaleSettings": {"manual": {"targetNodeCount": 1}},
            "nodeSetup": {"mountVolumes": {"azureFileShares": [{
                "azureFileUrl": "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/jobs",
                "relativeMountPath": "fromfile"}]}}}})
        # The account and key from the environment, as the az CLI read them.
        env = {"AZURE_BATCHAI_STORAGE_ACCOUNT": harness.DEV_ACCOUNT, "AZURE_BATCHAI_STORAGE_KEY": harness.DEV_KEY}
        c = self.bai_json("cluster", "create", *g, *w, "-n", "cf", "-f", cluster_file, "--vm-priority", "lowpriority",
                          "--bfs-name", "lake", "--nfs", "fs", "-p", "Pw-12345",
                          "--setup-task", "cat $AZ_BATCHAI_MOUNT_ROOT/bfs/data.txt; echo; ls $AZ_BATCHAI_MOUNT_ROOT",
                          "--setup-task-output", "$AZ_BATCHAI_MOUNT_ROOT/fromfile", env=env)
        self.assertEqual(c["vmPriority"], "lowpriority")
        volumes = c["nodeSetup"]["mountVolumes"]
        self.assertEqual(volumes["azureFileShares"][0]["azureFileUrl"],
                         f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/jobs")
        self.assertEqual(volumes["azureBlobFileSystems"][0]["containerName"], "lake")
        self.assertTrue(volumes["fileServers"][0]["fileServer"]["id"].endswith("/fileServers/fs"))
        shown = harness.wait_for(lambda: (lambda c: c if c.get("nodeStateCounts", {}).get("idleNodeCount") == 1 else None)(
            self.bai_json("cluster", "show", *g, *w, "-n", "cf")), timeout=60, what="node idle")
        suffix = shown["nodeSetup"]["setupTask"]["stdOutErrPathSuffix"]  # where the service put the logs
        with ShareServiceClient.from_connection_string(harness.connection_string(self.endpoints)) as shares:
            share = shares.get_share_client("jobs")
            logs = [f["name"] for f in share.get_directory_client(suffix).list_directories_and_files()
                    if f["name"].startswith("stdout-")]
            self.assertEqual(len(logs), 1, logs)
            text = share.get_file_client(suffix + "/" + logs[0]).download_file().readall().decode()
        self.assertIn("lake data", text)  # the setup task read the container through its mount
        self.assertEqual(sorted(text.split()[2:]), ["bfs", "fromfile", "nfs"])
        self.bai("cluster", "delete", *g, *w, "-n", "cf", "-y")

    def test_scale_flags_follow_the_az_rule(self):
        g, w = ["-g", "rg-s"], ["-w", "wss"]
        self.bai("group", "create", "-n", "rg-s", "-l", "eastus")
        self.bai("workspace", "create", *g, "-n", "wss")
        cases = [(["-t", "2"], {"manual": {"targetNodeCount": 2}}),
                 (["--min", "1", "--max", "1"], {"manual": {"targetNodeCount": 1}}),
                 (["--min", "0", "--max", "3"], {"autoScale": {"minimumNodeCount": 0, "maximumNodeCount": 3,
                                                               "initialNodeCount": 0}}),
                 (["--min", "2", "--max", "2", "-t", "1"], {"autoScale": {"minimumNodeCount": 2, "maximumNodeCount": 2,
                                                                          "initialNodeCount": 1}})]
        for i, (flags, expected) in enumerate(cases):
            with self.subTest(flags=flags):
                c = self.bai_json("cluster", "create", *g, *w, "-n", f"s{i}", "-s", "STANDARD_D1", *flags, "-p", "Pw-12345")
                kind = next(iter(expected))
                self.assertEqual({k: c["scaleSettings"][kind][k] for k in expected[kind]}, expected[kind])
                self.bai("cluster", "delete", *g, *w, "-n", f"s{i}", "-y")

    def test_file_server_and_generated_ssh_keys(self):
        g, w = ["-g", "rg-fs"], ["-w", "wsf"]
        self.bai("group", "create", "-n", "rg-fs", "-l", "eastus")
        self.bai("workspace", "create", *g, "-n", "wsf")
        fs = self.bai_json("file-server", "create", *g, *w, "-n", "nfs1", "-s", "STANDARD_D2_V2", "--disk-count", "2",
                           "--disk-size", "10", "--generate-ssh-keys", "-u", "carol")
        self.assertEqual({k: fs["dataDisks"][k] for k in ("diskCount", "diskSizeInGB", "storageAccountType")},
                         {"diskCount": 2, "diskSizeInGB": 10, "storageAccountType": "Premium_LRS"})
        with open(os.path.join(self.home, ".ssh", "id_rsa.pub")) as f:
            public = f.read()
        self.assertRegex(public, r"^ssh-rsa AAAAB3NzaC1yc2E[A-Za-z0-9+/=]+ \S+@\S+\n$")
        with open(os.path.join(self.home, ".ssh", "id_rsa")) as f:
            self.assertIn("PRIVATE KEY-----", f.read())
        self.assertEqual(os.stat(os.path.join(self.home, ".ssh", "id_rsa")).st_mode & 0o777, 0o600)
        rows = self.bai("file-server", "list", *g, *w, "-o", "table").stdout.splitlines()
        self.assertEqual(rows[2].split()[:4], ["nfs1", "rg-fs", "STANDARD_D2_V2", "2"])
        self.bai("file-server", "delete", *g, *w, "-n", "nfs1", "-y")

    def test_bad_input_names_the_flag_or_field(self):
        cases = [
            (["cluster", "create", "-n", "x", "-w", "w"], 2, "--resource-group/-g"),
            (["workspace", "create", "-g", "rg"], 2, "--name"),
            (["job", "show", "-g", "rg", "-w", "w", "-n", "j"], 2, "--experiment/-e"),
            (["workspace", "list", "--bogus"], 2, "--bogus"),
            (["workspace", "list", "--query", "[?name=="], 2, "--query"),
            (["workspace", "list", "-o", "xml"], 2, "'xml'"),
            (["cluster", "create", "-g", "rg", "-w", "w", "-n", "c", "-s", "STANDARD_NC6", "--min", "3", "--max", "1",
              "-p", "x"], 2, "--min"),
            (["cluster", "create", "-g", "rg", "-w", "w", "-n", "c", "-s", "STANDARD_NC6", "-t", "1", "-p", "x",
              "--image", "Windows"], 2, "--image"),
            (["workspace", "delete", "-g", "rg", "-n", "w"], 1, "Use --yes"),  # az: no tty, exit 1
            (["workspace", "delete", "-g", "rg", "-n", "w", "-y", "-o", "yaml"], 2, "'yaml'"),  # checked first
        ]
        for args, code, needle in cases:
            with self.subTest(args=args):
                result = self.bai(*args, ok=False)
                self.assertEqual(result.returncode, code, result.stderr)
                self.assertIn(needle, result.stderr)

    def test_the_service_refusal_names_the_json_path(self):
        self.bai("group", "create", "-n", "rg-bad", "-l", "eastus")
        self.bai("workspace", "create", "-g", "rg-bad", "-n", "wsb")
        result = self.bai("cluster", "create", "-g", "rg-bad", "-w", "wsb", "-n", "cb", "-s", "STANDARD_XYZ", "-t", "1",
                          "-p", "Pw-12345", ok=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("properties.vmSize", result.stderr)
        broken = self.write("broken.json", "{\"properties\": ")
        result = self.bai("job", "create", "-g", "rg-bad", "-w", "wsb", "-e", "x", "-n", "j", "-c", "cb",
                          "-f", broken, ok=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("broken.json", result.stderr)
        self.assertIn("not valid JSON", result.stderr)


class BaiWithoutEmulator(unittest.TestCase):
    def test_a_clear_message_when_the_emulator_is_not_running(self):
        location = tempfile.mkdtemp(prefix="bai-it-")
        self.addCleanup(shutil.rmtree, location, True)
        result = harness.run_cli("--data-dir", location, "workspace", "list", "-g", "rg",
                                 env={"BAI_CONFIG_DIR": location})
        self.assertEqual(result.returncode, 1)
        self.assertIn("not running", result.stderr)
        with harness.Emulator() as emu:
            arm = emu.endpoints["arm"]
        result = harness.run_cli("--endpoint", arm, "workspace", "list", env={"BAI_CONFIG_DIR": location})
        self.assertEqual(result.returncode, 1)
        self.assertIn("cannot reach the emulator", result.stderr)


if __name__ == "__main__":
    unittest.main()
