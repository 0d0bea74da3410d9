"""bai --version and bai status, with the emulator running and not."""
import os
import shutil
import signal
import tempfile
import unittest

from harness import Emulator, run_cli


class BaiStatus(unittest.TestCase):
    def test_version(self):
        result = run_cli("--version")
        self.assertEqual(result.returncode, 0)
        self.assertRegex(result.stdout, r"^bai \d+\.\d+\.\d+")

    def test_running_emulator_by_location(self):
        with Emulator() as emu:
            result = run_cli("--data-dir", emu.location, "status")
            self.assertEqual(result.returncode, 0, result.stderr)
            for name in ("arm", "blob", "file", "batch"):
                self.assertRegex(result.stdout, rf"{name}\s+{emu.endpoints[name]}\s+up")

    def test_running_emulator_by_endpoint_finds_the_storage_endpoints(self):
        with Emulator() as emu:
            e = emu.endpoints
            for args, env in ((["--endpoint", e["arm"], "--ca-cert", e["ca_cert"]], {}),
                              ([], {"BATCHAI_EMULATOR_ENDPOINT": e["arm"],
                                    "BATCHAI_EMULATOR_CA_CERT": e["ca_cert"]})):
                result = run_cli(*args, "status", env=env)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertRegex(result.stdout, rf"blob\s+{e['blob']}\s+up")
                self.assertRegex(result.stdout, rf"file\s+{e['file']}\s+up")
                self.assertRegex(result.stdout, rf"batch\s+{e['batch']}\s+up")

    def test_an_untrusted_certificate_is_reported(self):
        with Emulator() as emu, Emulator() as other:
            result = run_cli("--endpoint", emu.endpoints["arm"],
                             "--ca-cert", other.endpoints["ca_cert"], "status")
            self.assertEqual(result.returncode, 1)
            self.assertIn("arm", result.stdout)
            self.assertIn("DOWN", result.stdout)
            self.assertRegex(result.stdout.lower(), "certificate|verif")

    def test_not_running_no_endpoints_file(self):
        location = tempfile.mkdtemp(prefix="bai-it-")
        self.addCleanup(shutil.rmtree, location, True)
        result = run_cli("--data-dir", location, "status")
        self.assertEqual(result.returncode, 1)
        self.assertIn("not running", result.stderr)

    def test_not_running_after_a_clean_stop_or_a_crash(self):
        with Emulator() as emu:
            arm = emu.endpoints["arm"]
            emu.send(signal.SIGKILL)  # endpoints.json is left behind
            emu.process.wait()
            result = run_cli("--data-dir", emu.location, "status")
            self.assertEqual(result.returncode, 1)
            self.assertIn("not running", result.stderr)
            self.assertIn("earlier run", result.stderr)
            result = run_cli("--endpoint", arm, "status")
            self.assertEqual(result.returncode, 1)
            self.assertIn("not running", result.stderr)

    def test_usage_errors_exit_2(self):
        self.assertEqual(run_cli().returncode, 2)
        self.assertEqual(run_cli("frobnicate").returncode, 2)
        self.assertEqual(run_cli("--endpoint").returncode, 2)


if __name__ == "__main__":
    unittest.main()
