"""The README's quick start: tools/run starts the emulator (setup and build are no-ops once
tools/test has built), then bai status finds it."""
import os
import unittest

from harness import Emulator, run_cli, wait_for

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class QuickStart(unittest.TestCase):
    def test_tools_run_then_bai_status(self):
        emu = Emulator(command=[os.path.join(ROOT, "tools", "run")])
        self.addCleanup(emu.close)
        emu.start(wait=False)
        # tools/run checks packages and the build before it execs the emulator (same PID).
        emu.endpoints = wait_for(emu._read_endpoints, timeout=300, what="tools/run to start")
        result = run_cli("--data-dir", emu.location, "status")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertRegex(result.stdout, r"arm\s+https://127\.0\.0\.1:\d+\s+up")
        code, _ = emu.stop()
        self.assertEqual(code, 0)
        result = run_cli("--data-dir", emu.location, "status")
        self.assertEqual(result.returncode, 1)
        self.assertIn("not running", result.stderr)


if __name__ == "__main__":
    unittest.main()
