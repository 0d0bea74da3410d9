"""bai --version and bai status, with the emulator running and not; bai finding the emulator from
any directory (the user's pointer, the default endpoints)."""
import os
import shutil
import signal
import socket
import tempfile
import time
import unittest

from harness import Emulator, run_cli, wait_for

DEFAULT_PORTS = (10443, 10000, 10004, 10447)


def port_taken(port):
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def private_home(test, runtime_dir=True):
    """The environment of a user whose home (and runtime directory) is the test's own: the
    pointer goes there, never into the real home."""
    root = tempfile.mkdtemp(prefix="bai-home-")
    test.addCleanup(shutil.rmtree, root, True)
    env = {"HOME": os.path.join(root, "home"), "BATCHAI_EMULATOR_POINTER": ""}
    os.mkdir(env["HOME"])
    if runtime_dir:
        env["XDG_RUNTIME_DIR"] = os.path.join(root, "run")
        os.mkdir(env["XDG_RUNTIME_DIR"], 0o700)
    elsewhere = os.path.join(root, "elsewhere")  # a directory without batchai-data
    os.mkdir(elsewhere)
    return env, elsewhere


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


class FromAnyDirectory(unittest.TestCase):
    def start(self, env):
        full = dict(os.environ, **env)
        if "XDG_RUNTIME_DIR" not in env:
            full.pop("XDG_RUNTIME_DIR", None)
        emu = Emulator(env=full)
        self.addCleanup(emu.close)
        return emu.start()

    def test_through_the_pointer_in_the_runtime_directory_or_the_home(self):
        for runtime_dir, pointer in ((True, os.path.join("run", "batchai-emulator", "endpoints.json")),
                                     (False, os.path.join("home", ".batchai", "endpoints.json"))):
            with self.subTest(runtime_dir=runtime_dir):
                env, elsewhere = private_home(self, runtime_dir)
                pointer = os.path.join(os.path.dirname(env["HOME"]), pointer)
                emu = self.start(env)
                endpoints_file = os.path.join(emu.location, "endpoints.json")
                wait_for(lambda: os.path.islink(pointer), what="the pointer")
                self.assertEqual(os.readlink(pointer), endpoints_file)
                cli_env = dict(env, XDG_RUNTIME_DIR=env.get("XDG_RUNTIME_DIR", ""))
                result = run_cli("status", env=cli_env, cwd=elsewhere)
                self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                self.assertIn(f"endpoints from {endpoints_file} (through {pointer})", result.stdout)
                for name in ("arm", "blob", "file", "batch"):
                    self.assertRegex(result.stdout, rf"{name}\s+{emu.endpoints[name]}\s+up")
                # Another command finds it too.
                result = run_cli("workspace", "list", "-o", "json", env=cli_env, cwd=elsewhere)
                self.assertEqual(result.returncode, 0, result.stderr)
                code, _ = emu.stop()
                self.assertEqual(code, 0)
                self.assertFalse(os.path.lexists(pointer), "a clean stop removes the pointer")

    def test_stale_pointer_is_passed_over_and_nothing_running_is_said_quickly(self):
        if port_taken(10443):
            self.skipTest("SKIPPED: something listens on 127.0.0.1:10443, the default ARM endpoint")
        env, elsewhere = private_home(self)
        emu = self.start(env)
        pointer = os.path.join(env["XDG_RUNTIME_DIR"], "batchai-emulator", "endpoints.json")
        wait_for(lambda: os.path.islink(pointer), what="the pointer")
        emu.send(signal.SIGKILL)  # the pointer and endpoints.json are left behind
        emu.process.wait()
        started = time.monotonic()
        result = run_cli("status", env=env, cwd=elsewhere)
        took = time.monotonic() - started
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("not running", result.stderr)
        self.assertIn("earlier run", result.stderr)
        self.assertIn("tools/run", result.stderr)
        self.assertIn("https://127.0.0.1:10443", result.stderr)
        print(f"bai status with no emulator running answered in {took:.2f} s")

    def test_default_endpoints_without_a_pointer(self):
        taken = [p for p in DEFAULT_PORTS if port_taken(p)]
        if taken:
            self.skipTest(f"SKIPPED: the default ports {taken} are taken on 127.0.0.1")
        env, elsewhere = private_home(self)
        # Pointers off: bai has nothing to go by but the default endpoint.
        location = tempfile.mkdtemp(prefix="bai-it-")
        self.addCleanup(shutil.rmtree, location, True)
        emu = Emulator(location=location, env=dict(os.environ, **dict(env, BATCHAI_EMULATOR_POINTER="off")),
                       args=["--arm-port", "10443", "--blob-port", "10000", "--file-port", "10004",
                             "--batch-port", "10447"])
        self.addCleanup(emu.close)
        try:
            emu.start()
        except RuntimeError as e:
            if "in use" in str(e):
                self.skipTest(f"SKIPPED: a default port was taken as the emulator started: {e}")
            raise
        result = run_cli("status", env=env, cwd=elsewhere)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("endpoints from the default endpoint https://127.0.0.1:10443", result.stdout)
        for name in ("arm", "blob", "file", "batch"):
            self.assertRegex(result.stdout, rf"{name}\s+{emu.endpoints[name]}\s+up")


if __name__ == "__main__":
    unittest.main()
