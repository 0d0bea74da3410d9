"""`az batch` (Debian's azure-cli) against the emulator's Batch endpoint, unchanged, with
--account-endpoint --account-name --account-key: one test per command group (pool, node, job,
task, job-schedule, certificate, application)."""
import json
import os
import shutil
import tempfile
import time
import unittest

import harness
from test_batch_certificates import make_certificate


class AzBatch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="bai-az-batch-")
        package = os.path.join(cls.home, "package")
        os.makedirs(package)
        with open(os.path.join(package, "tool.sh"), "w") as f:
            f.write("echo tool\n")
        cls.emu = harness.Emulator(args=["--batch-application", f"tools:1.0={package}"]).start()
        # az batch speaks HTTPS to the endpoint (the port serves both), trusting the emulator's CA.
        cls.endpoint = cls.emu.endpoints["batch"].replace("http://", "https://")
        cls.env = dict(os.environ, AZURE_CONFIG_DIR=os.path.join(cls.home, "az"), AZURE_CORE_COLLECT_TELEMETRY="no",
                       AZURE_CORE_NO_COLOR="true", AZURE_CORE_ONLY_SHOW_ERRORS="true", HOME=cls.home,
                       REQUESTS_CA_BUNDLE=cls.emu.endpoints["ca_cert"])
        cls.pool_ready = False

    @classmethod
    def tearDownClass(cls):
        cls.emu.close()
        shutil.rmtree(cls.home, ignore_errors=True)

    def az(self, *args, ok=True):
        account = ["--account-endpoint", self.endpoint, "--account-name", harness.DEV_BATCH_ACCOUNT,
                   "--account-key", harness.DEV_BATCH_KEY]
        result = harness.az(["batch", *args, *account, "-o", "json"], env=self.env, cwd=self.home)
        if ok:
            self.assertEqual(result.returncode, 0, f"az batch {' '.join(args)}\n{result.stdout}\n{result.stderr}")
            return json.loads(result.stdout) if result.stdout.strip() else None
        return result

    def until(self, predicate, what, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.3)
        self.fail(f"timed out waiting for {what}")

    def ensure_pool(self, pool_id="azp"):
        if not self.pool_ready:
            self.az("pool", "create", "--id", pool_id, "--vm-size", "STANDARD_D1", "--target-dedicated-nodes", "1",
                    "--image", "canonical:ubuntuserver:18.04-lts", "--node-agent-sku-id", "batch.node.ubuntu 18.04")
            type(self).pool_ready = True
        return self.until(lambda: [n for n in self.az("node", "list", "--pool-id", pool_id) if n["state"] == "idle"],
                          "an idle node")[0]

    def test_pool(self):
        self.az("pool", "create", "--id", "pool-group", "--vm-size", "STANDARD_D1", "--target-dedicated-nodes", "0",
                "--image", "canonical:ubuntuserver:18.04-lts", "--node-agent-sku-id", "batch.node.ubuntu 18.04")
        shown = self.az("pool", "show", "--pool-id", "pool-group")
        self.assertEqual((shown["id"], shown["vmSize"]), ("pool-group", "standard_d1"))
        self.assertIn("pool-group", [p["id"] for p in self.az("pool", "list")])
        self.until(lambda: self.az("pool", "show", "--pool-id", "pool-group")["allocationState"] == "steady", "steady")
        self.az("pool", "resize", "--pool-id", "pool-group", "--target-dedicated-nodes", "1")
        self.until(lambda: self.az("pool", "show", "--pool-id", "pool-group")["currentDedicatedNodes"] == 1, "one node")
        self.az("pool", "autoscale", "enable", "--pool-id", "pool-group", "--auto-scale-formula", "$TargetDedicatedNodes=0;")
        run = self.az("pool", "autoscale", "evaluate", "--pool-id", "pool-group", "--auto-scale-formula", "$TargetDedicatedNodes=2;")
        self.assertTrue(run["results"].startswith("$TargetDedicatedNodes=2;"), run)
        self.az("pool", "autoscale", "disable", "--pool-id", "pool-group")
        counts = self.az("pool", "node-counts", "list")
        self.assertIn("pool-group", [c["poolId"] for c in counts])
        self.assertTrue(self.az("pool", "supported-images", "list"))
        self.assertIn("usageStats", self.az("pool", "all-statistics", "show"))
        self.az("pool", "delete", "--pool-id", "pool-group", "--yes")
        self.until(lambda: "pool-group" not in [p["id"] for p in self.az("pool", "list")], "the pool to go")

    def test_node(self):
        node = self.ensure_pool()
        self.assertEqual(self.az("node", "show", "--pool-id", "azp", "--node-id", node["id"])["id"], node["id"])
        self.az("node", "user", "create", "--pool-id", "azp", "--node-id", node["id"], "--name", "ops", "--password", "Pa55word!x")
        self.az("node", "user", "reset", "--pool-id", "azp", "--node-id", node["id"], "--user-name", "ops", "--password", "N3w!pass")
        settings = self.az("node", "remote-login-settings", "show", "--pool-id", "azp", "--node-id", node["id"])
        self.assertEqual(settings["remoteLoginIpAddress"], "127.0.0.1")
        files = [f["name"] for f in self.az("node", "file", "list", "--pool-id", "azp", "--node-id", node["id"], "--recursive", "true")]
        self.assertIn("users/passwd", files)
        self.az("node", "user", "delete", "--pool-id", "azp", "--node-id", node["id"], "--user-name", "ops", "--yes")
        self.az("node", "scheduling", "disable", "--pool-id", "azp", "--node-id", node["id"])
        self.assertEqual(self.az("node", "show", "--pool-id", "azp", "--node-id", node["id"])["schedulingState"], "disabled")
        self.az("node", "scheduling", "enable", "--pool-id", "azp", "--node-id", node["id"])

    def test_job_and_task(self):
        self.ensure_pool()
        self.az("job", "create", "--id", "azj", "--pool-id", "azp")
        self.assertEqual(self.az("job", "show", "--job-id", "azj")["state"], "active")
        self.assertIn("azj", [j["id"] for j in self.az("job", "list")])
        self.az("task", "create", "--job-id", "azj", "--task-id", "hello", "--command-line", "/bin/sh -c 'echo hello'")
        self.until(lambda: self.az("task", "show", "--job-id", "azj", "--task-id", "hello")["state"] == "completed", "the task")
        self.assertEqual([t["id"] for t in self.az("task", "list", "--job-id", "azj")], ["hello"])
        names = [f["name"] for f in self.az("task", "file", "list", "--job-id", "azj", "--task-id", "hello")]
        self.assertIn("stdout.txt", names)
        out = os.path.join(self.home, "stdout.txt")
        self.az("task", "file", "download", "--job-id", "azj", "--task-id", "hello", "--file-path", "stdout.txt",
                "--destination", out)
        with open(out) as f:
            self.assertEqual(f.read(), "hello\n")
        failed = self.az("task", "reactivate", "--job-id", "azj", "--task-id", "hello", ok=False)
        self.assertNotEqual(failed.returncode, 0)
        self.assertIn("completed successfully: it cannot be reactivated", failed.stderr)
        counts = self.az("job", "task-counts", "show", "--job-id", "azj")
        self.assertEqual(counts["taskCounts"]["succeeded"], 1)
        self.assertEqual(self.az("job", "prep-release-status", "list", "--job-id", "azj"), [])
        # (az 2.45's `job disable --disable-tasks` accepts no value at all: its enum is empty.)
        refused = self.az("job", "enable", "--job-id", "azj", ok=False)  # not disabled: the service's refusal
        self.assertIn("The specified job is not in a disabled state", refused.stderr)
        self.az("job", "stop", "--job-id", "azj")
        self.until(lambda: self.az("job", "show", "--job-id", "azj")["state"] == "completed", "the job to complete")
        self.az("task", "delete", "--job-id", "azj", "--task-id", "hello", "--yes")
        self.az("job", "delete", "--job-id", "azj", "--yes")

    def test_job_schedule(self):
        self.ensure_pool()
        self.az("job-schedule", "create", "--id", "azs", "--pool-id", "azp", "--recurrence-interval", "P1D")
        shown = self.until(lambda: (lambda s: s if s.get("executionInfo", {}).get("recentJob") else None)(
            self.az("job-schedule", "show", "--job-schedule-id", "azs")), "the first job")
        self.assertEqual(shown["executionInfo"]["recentJob"]["id"], "azs:job-1")
        self.assertIn("azs", [s["id"] for s in self.az("job-schedule", "list")])
        self.assertEqual([j["id"] for j in self.az("job", "list", "--job-schedule-id", "azs")], ["azs:job-1"])
        self.az("job-schedule", "disable", "--job-schedule-id", "azs")
        self.assertEqual(self.az("job-schedule", "show", "--job-schedule-id", "azs")["state"], "disabled")
        self.az("job-schedule", "enable", "--job-schedule-id", "azs")
        self.az("job-schedule", "stop", "--job-schedule-id", "azs")
        self.until(lambda: self.az("job-schedule", "show", "--job-schedule-id", "azs")["state"] == "completed", "completed")
        self.az("job-schedule", "delete", "--job-schedule-id", "azs", "--yes")
        self.until(lambda: "azs" not in [s["id"] for s in self.az("job-schedule", "list")], "the schedule to go")

    def test_certificate(self):
        thumbprint, _, der = make_certificate(self.home, "azcert", "pw")
        cer = os.path.join(self.home, "azcert.cer")
        with open(cer, "wb") as f:
            f.write(der)
        self.az("certificate", "create", "--certificate-file", cer, "--thumbprint", thumbprint)
        shown = self.az("certificate", "show", "--thumbprint", thumbprint)
        self.assertEqual((shown["thumbprint"], shown["state"]), (thumbprint, "active"))
        self.assertIn(thumbprint, [c["thumbprint"] for c in self.az("certificate", "list")])
        self.az("certificate", "delete", "--thumbprint", thumbprint, "--yes")
        gone = self.az("certificate", "show", "--thumbprint", thumbprint, ok=False)
        self.assertNotEqual(gone.returncode, 0)
        self.assertIn("The specified certificate does not exist", gone.stderr)  # az prints the service's message

    def test_application(self):
        self.assertEqual([(a["id"], a["versions"]) for a in self.az("application", "summary", "list")], [("tools", ["1.0"])])
        self.assertEqual(self.az("application", "summary", "show", "--application-id", "tools")["versions"], ["1.0"])


if __name__ == "__main__":
    unittest.main()
