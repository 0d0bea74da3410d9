"""The pytest plugin (tools/pytest-batchai): its README's example run as a CI job runs it, a
failing scenario's report, an emulator named by the environment, the session's emulator stopped."""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import harness

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLUGIN = os.path.join(ROOT, "tools", "pytest-batchai")
EXAMPLE = os.path.join(PLUGIN, "example")

FAILING = """name a workspace that is not what it expects
request PUT arm /subscriptions/${subscription}/resourceGroups/rg?api-version=2021-04-01
{"location": "eastus"}
request PUT arm /subscriptions/${subscription}/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws?api-version=2018-05-01
{"location": "eastus"}
advance 1h
request GET arm /subscriptions/${subscription}/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws?api-version=2018-05-01
expect json /properties/provisioningState == "Failed"
"""


@unittest.skipIf(importlib.util.find_spec("pytest") is None,
                 "SKIPPED: python3-pytest is not installed (tools/setup --test installs it)")
class PytestPlugin(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="bai-pytest-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def pytest(self, *args, env=None):
        """`python3 -m pytest` with the plugin on PYTHONPATH, as the README shows."""
        full_env = dict(os.environ, PYTHONPATH=PLUGIN, BAI_EMULATOR=harness.EMULATOR, PYTHONDONTWRITEBYTECODE="1")
        full_env.pop("BATCHAI_EMULATOR_ENDPOINTS", None)
        full_env.update(env or {})
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "pytest_batchai", "-p", "no:cacheprovider",
                               "-q", *args], capture_output=True, text=True, env=full_env, cwd=self.dir, timeout=300)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_the_readme_example_passes(self):
        started = time.monotonic()
        result = self.pytest(EXAMPLE)
        took = time.monotonic() - started
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertRegex(result.stdout, r"\b5 passed\b")
        print(f"the example's pytest run took {took:.1f} s")

    def test_a_failing_scenario_shows_its_file_line_and_the_trace(self):
        path = self.write("fails.scenario", FAILING)
        self.write("passes.scenario", "name nothing but time\nadvance 1d\n")
        result = self.pytest(self.dir, "--batchai-seed", "4")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertRegex(result.stdout, r"\b1 failed, 1 passed\b")
        self.assertIn(f"FAIL {path}:8: expected /properties/provisioningState == \"Failed\", got \"succeeded\"",
                      result.stdout)
        self.assertIn("the trace's last lines:", result.stdout)
        self.assertIn(f"replay it with: batchai-emulator replay {path} --seed 4", result.stdout)

    def test_an_emulator_named_by_the_environment_is_used_and_left_running(self):
        self.write("test_named.py", """
import os

def test_the_named_emulator(batchai_endpoints, batchai_blob_client):
    assert batchai_endpoints["blob"] == os.environ["EXPECTED_BLOB"]
    batchai_blob_client.create_container("named")
""")
        with harness.Emulator() as emu:
            for named in (os.path.join(emu.location, "endpoints.json"), emu.location, emu.endpoints["arm"]):
                with self.subTest(named=named):
                    env = {"BATCHAI_EMULATOR_ENDPOINTS": named, "EXPECTED_BLOB": emu.endpoints["blob"],
                           "BATCHAI_EMULATOR_CA_CERT": emu.endpoints["ca_cert"]}
                    result = self.pytest("test_named.py", env=env)
                    self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                    self.assertIsNone(emu.process.poll(), "the named emulator was stopped")
                    # The container is in the named emulator (and is made again next round).
                    from azure.storage.blob import BlobServiceClient
                    with BlobServiceClient.from_connection_string(harness.connection_string(emu.endpoints)) as svc:
                        svc.delete_container("named")

    def test_the_session_emulator_is_stopped_and_its_data_removed(self):
        record = os.path.join(self.dir, "record.txt")
        self.write("test_record.py", f"""
def test_record(batchai_emulator):
    with open({record!r}, "w") as f:
        f.write(f"{{batchai_emulator.process.pid}} {{batchai_emulator.location}}")
""")
        result = self.pytest("test_record.py")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        with open(record) as f:
            pid, location = f.read().split(" ", 1)
        try:
            with open(f"/proc/{pid}/cmdline") as f:
                command = f.read()
        except FileNotFoundError:
            command = ""
        self.assertNotIn("batchai-emulator", command, "the session's emulator still runs")
        self.assertFalse(os.path.exists(location))


if __name__ == "__main__":
    unittest.main()
