"""batchai-emulator: start, endpoints.json, TLS, health, lock and port refusals, clean stop."""
import json
import os
import resource
import signal
import socket
import ssl
import subprocess
import tempfile
import shutil
import unittest
import urllib.request

import requests

from harness import EMULATOR, EPHEMERAL, Emulator, wait_for

DEV_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
           "K1SZFPTOtr/KBHBeksoGMGw==")


def run_emulator(location, *args, timeout=20):
    return subprocess.run([EMULATOR, "--location", location, *EPHEMERAL, *args],
                          capture_output=True, text=True, timeout=timeout)


class StartedEmulator(unittest.TestCase):
    def setUp(self):
        self.emu = Emulator().start()
        self.addCleanup(self.emu.close)
        self.e = self.emu.endpoints

    def test_endpoints_json_has_the_documented_keys(self):
        self.assertEqual(set(self.e), {"arm", "blob", "file", "batch", "ca_cert", "pid", "proxy", "proxy_ca", "ca_bundle"})
        self.assertRegex(self.e["arm"], r"^https://127\.0\.0\.1:\d+$")
        self.assertRegex(self.e["blob"], r"^http://127\.0\.0\.1:\d+$")
        self.assertRegex(self.e["file"], r"^http://127\.0\.0\.1:\d+$")
        self.assertRegex(self.e["batch"], r"^http://127\.0\.0\.1:\d+$")
        self.assertRegex(self.e["proxy"], r"^http://127\.0\.0\.1:\d+$")
        ports = {int(self.e[k].rsplit(":", 1)[1]) for k in ("arm", "blob", "file", "batch", "proxy")}
        self.assertEqual(len(ports), 5)
        for pem in ("ca_cert", "proxy_ca", "ca_bundle"):
            self.assertTrue(os.path.isabs(self.e[pem]), pem)
            self.assertTrue(os.path.isfile(self.e[pem]), pem)
        self.assertEqual(self.e["pid"], self.emu.process.pid)

    def test_banner_prints_endpoints_and_a_connection_string(self):
        out = wait_for(lambda: "ready" in self.emu.stdout() and self.emu.stdout(), what="banner")
        for key in ("arm", "blob", "file", "ca_cert"):
            self.assertIn(self.e[key], out)
        expected = (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={DEV_KEY};"
                    f"BlobEndpoint={self.e['blob']}/devstoreaccount1;"
                    f"FileEndpoint={self.e['file']}/devstoreaccount1;")
        self.assertIn(expected, out)

    def test_health_answers_on_every_endpoint(self):
        for name in ("arm", "blob", "file", "batch"):
            r = requests.get(self.e[name] + "/health", verify=self.e["ca_cert"], timeout=5)
            self.assertEqual(r.status_code, 200, name)
            self.assertEqual(r.json()["service"], name)

    def test_arm_is_https_trusted_only_with_the_ca_cert(self):
        url = self.e["arm"] + "/health"
        with self.assertRaises(requests.exceptions.SSLError):
            requests.get(url, timeout=5)
        with self.assertRaises(urllib.error.URLError) as caught:
            urllib.request.urlopen(url, timeout=5)
        self.assertIsInstance(caught.exception.reason, ssl.SSLCertVerificationError)
        context = ssl.create_default_context(cafile=self.e["ca_cert"])
        with urllib.request.urlopen(url, context=context, timeout=5) as r:
            self.assertEqual(r.status, 200)
        # The certificate also names localhost.
        port = self.e["arm"].rsplit(":", 1)[1]
        r = requests.get(f"https://localhost:{port}/health", verify=self.e["ca_cert"], timeout=5)
        self.assertEqual(r.status_code, 200)

    def test_arm_tells_where_the_storage_endpoints_are(self):
        r = requests.get(self.e["arm"] + "/emulator/endpoints", verify=self.e["ca_cert"], timeout=5)
        self.assertEqual(r.json(), {"arm": self.e["arm"], "blob": self.e["blob"], "file": self.e["file"],
                                    "batch": self.e["batch"], "proxy": self.e["proxy"], "proxy_ca": self.e["proxy_ca"],
                                    "ca_bundle": self.e["ca_bundle"]})

    def test_a_second_instance_on_the_same_directory_is_refused(self):
        result = run_emulator(self.emu.location)
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn("in use", lines[0])
        self.assertIn(str(self.emu.process.pid), lines[0])
        # The running instance is untouched.
        r = requests.get(self.e["blob"] + "/health", timeout=5)
        self.assertEqual(r.status_code, 200)

    def test_sigterm_with_an_idle_keep_alive_connection_exits_0_within_a_second(self):
        session = requests.Session()
        self.assertEqual(session.get(self.e["arm"] + "/health", verify=self.e["ca_cert"]).status_code, 200)
        self.assertEqual(session.get(self.e["blob"] + "/health").status_code, 200)
        code, seconds = self.emu.stop(signal.SIGTERM)
        self.assertEqual(code, 0, self.emu.stderr())
        self.assertLess(seconds, 1.0)
        self.assertFalse(os.path.exists(os.path.join(self.emu.location, "endpoints.json")))
        with open(os.path.join(self.emu.location, "emulator.log")) as f:
            self.assertIn("stopped cleanly", f.read())
        with self.assertRaises(requests.exceptions.ConnectionError):
            requests.get(self.e["blob"] + "/health", timeout=2)


class Lifecycle(unittest.TestCase):
    def setUp(self):
        self.location = tempfile.mkdtemp(prefix="bai-it-")
        self.addCleanup(shutil.rmtree, self.location, True)

    def test_sigint_also_stops_cleanly(self):
        with Emulator(self.location) as emu:
            code, seconds = emu.stop(signal.SIGINT)
            self.assertEqual(code, 0)
            self.assertLess(seconds, 1.0)

    def test_certificate_is_generated_once_and_reused(self):
        with Emulator(self.location) as emu:
            with open(emu.endpoints["ca_cert"], "rb") as f:
                first = f.read()
        with Emulator(self.location) as emu:
            with open(emu.endpoints["ca_cert"], "rb") as f:
                self.assertEqual(f.read(), first)
            r = requests.get(emu.endpoints["arm"] + "/health", verify=emu.endpoints["ca_cert"])
            self.assertEqual(r.status_code, 200)

    def test_a_taken_port_is_refused_with_exit_2_and_frees_the_directory(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            result = run_emulator(self.location, "--file-port", str(port))
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
            self.assertIn(f"127.0.0.1:{port}", result.stderr)
            self.assertIn("file", result.stderr)
        with Emulator(self.location) as emu:
            self.assertEqual(requests.get(emu.endpoints["file"] + "/health").status_code, 200)

    def test_bad_flags_exit_2_with_a_one_line_reason(self):
        for args, mention in ((["--arm-port", "99999"], "--arm-port"),
                              (["--host", "0.0.0.0"], "loopback"),
                              (["--account", "Bad_Name:a2V5"], "--account"),
                              (["--no-such-flag"], "--no-such-flag")):
            result = run_emulator(self.location, *args)
            self.assertEqual(result.returncode, 2, args)
            self.assertIn(mention, result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)

    def test_version(self):
        result = subprocess.run([EMULATOR, "--version"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0)
        self.assertRegex(result.stdout, r"^batchai-emulator \d+\.\d+\.\d+")

    def test_debug_log_has_one_line_per_request(self):
        log = os.path.join(self.location, "requests.log")
        with Emulator(self.location, args=["--debug", log]) as emu:
            requests.get(emu.endpoints["blob"] + "/health")
            requests.get(emu.endpoints["file"] + "/nothing-here?x=1")
            requests.get(emu.endpoints["arm"] + "/health", verify=emu.endpoints["ca_cert"])
            lines = wait_for(lambda: (open(log).read().splitlines() or [None])[2:] and
                             open(log).read().splitlines(), what="3 log lines")
        self.assertEqual(len(lines), 3, lines)
        # A line is written once its response is sent: requests on different connections may
        # be logged in either order.
        file_line = next(line for line in lines if line.startswith("file "))
        service, method, path, status, ms = file_line.split(" ")
        self.assertEqual((service, method, path, status), ("file", "GET", "/nothing-here?x=1", "404"))
        self.assertGreaterEqual(float(ms), 0.0)
        self.assertTrue(any(line.startswith("blob GET /health 200 ") for line in lines), lines)
        self.assertTrue(any(line.startswith("arm GET /health 200 ") for line in lines), lines)

    def test_a_killed_run_is_noticed_at_the_next_start(self):
        with Emulator(self.location) as emu:
            emu.send(signal.SIGKILL)
            emu.process.wait()
        with Emulator(self.location) as emu:
            with open(os.path.join(self.location, "emulator.log")) as f:
                self.assertIn("did not stop cleanly", f.read())
            self.assertIn("did not stop cleanly", emu.stderr())

    def test_extra_accounts_are_accepted(self):
        with Emulator(self.location, args=["--account", "mydata:a2V5a2V5"]) as emu:
            self.assertEqual(requests.get(emu.endpoints["blob"] + "/health").status_code, 200)



class OpenFileLimit(unittest.TestCase):
    def test_a_low_soft_limit_is_raised_toward_the_hard_one(self):
        # Readers of a composed blob hold a descriptor per part: 1024 is too few for a server.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard != resource.RLIM_INFINITY and hard <= 1024:
            self.skipTest(f"SKIPPED: the hard limit of open files is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
        try:
            emu = Emulator().start()
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        self.addCleanup(emu.close)
        with open(f"/proc/{emu.process.pid}/limits") as f:
            line = next(l for l in f if l.startswith("Max open files"))
        self.assertEqual(int(line.split()[3]), 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536))


class StagedBlocksAtStart(unittest.TestCase):
    def test_the_log_says_what_uncommitted_blocks_hold_per_account(self):
        from raw_storage import RawClient
        location = tempfile.mkdtemp(prefix="bai-it-staged-")
        self.addCleanup(shutil.rmtree, location, True)
        with Emulator(location=location) as emu:
            blob = RawClient(emu.endpoints["blob"])
            self.assertEqual(blob.request("PUT", "/devstoreaccount1/uploads", [("restype", "container")]).status, 201)
            for block in ("YQ==", "Yg=="):
                r = blob.request("PUT", "/devstoreaccount1/uploads/never-committed",
                                 [("comp", "block"), ("blockid", block)], body=b"12345")
                self.assertEqual(r.status, 201)
        with Emulator(location=location):
            with open(os.path.join(location, "emulator.log")) as f:
                log = f.read()
        self.assertIn("uncommitted blocks of devstoreaccount1: 10 bytes in 2 blocks of 1 blobs", log)


class DataDirectoryAccess(unittest.TestCase):
    """The data directory holds every account key, admin password and job secret (state.db), the
    TLS key and all blobs and files: only its owner may read any of it."""

    def mode(self, path):
        return os.stat(path).st_mode & 0o7777

    def as_nobody_can_read(self, path):
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", path],
                           capture_output=True, timeout=10)
        return r.returncode == 0

    def store_a_blob_and_a_file(self, e):
        from raw_storage import RawClient
        blob, files = RawClient(e["blob"]), RawClient(e["file"])
        self.assertEqual(blob.request("PUT", "/devstoreaccount1/cont1", [("restype", "container")]).status, 201)
        # Large enough to live in a content file of its own rather than in the database.
        self.assertEqual(blob.request("PUT", "/devstoreaccount1/cont1/b", body=b"s" * 300000,
                                      headers={"x-ms-blob-type": "BlockBlob"}).status, 201)
        self.assertEqual(files.request("PUT", "/devstoreaccount1/share1", [("restype", "share")]).status, 201)
        self.assertEqual(files.request("PUT", "/devstoreaccount1/share1/f",
                                       headers={"x-ms-type": "file", "x-ms-content-length": "5"}).status, 201)

    def check_private(self, location):
        self.assertEqual(self.mode(location), 0o700)
        for sub in ("storage", "tls", "ssh"):
            self.assertEqual(self.mode(os.path.join(location, sub)), 0o700, sub)
        for name in ("state.db", "tls/key.pem", "ssh/host_ed25519_key", "emulator.log", "emulator.lock"):
            self.assertEqual(self.mode(os.path.join(location, name)), 0o600, name)
        for name in ("state.db-wal", "state.db-shm"):
            path = os.path.join(location, name)
            if os.path.exists(path):
                self.assertEqual(self.mode(path) & 0o077, 0, name)
        blob_files = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(location, "storage", "devstoreaccount1", "blobs"))
                      for f in fs]
        self.assertTrue(blob_files)
        for path in blob_files:
            self.assertEqual(self.mode(path) & 0o077, 0, path)
        # What matters: another local user reads none of it.
        share_file = os.path.join(location, "storage", "devstoreaccount1", "shares", "share1", "f")
        self.assertTrue(os.path.exists(share_file))
        for path in (os.path.join(location, "state.db"), os.path.join(location, "tls", "key.pem"), share_file,
                     blob_files[0], os.path.join(location, "ssh", "host_ed25519_key")):
            self.assertFalse(self.as_nobody_can_read(path), path)

    def test_a_data_directory_is_its_owners_alone(self):
        parent = tempfile.mkdtemp(prefix="bai-it-access-")
        self.addCleanup(shutil.rmtree, parent, True)
        os.chmod(parent, 0o755)
        location = os.path.join(parent, "data")
        os.mkdir(location, 0o755)  # as `mkdir data` leaves it
        with Emulator(location=location) as emu:
            self.store_a_blob_and_a_file(emu.endpoints)
            self.check_private(location)
        # Control: the same file made readable is readable by that user (the check can fail).
        os.chmod(location, 0o755)
        os.chmod(os.path.join(location, "state.db"), 0o644)
        self.assertTrue(self.as_nobody_can_read(os.path.join(location, "state.db")))

    def test_an_older_open_data_directory_is_tightened_at_start_and_the_log_says_so(self):
        parent = tempfile.mkdtemp(prefix="bai-it-access-")
        self.addCleanup(shutil.rmtree, parent, True)
        os.chmod(parent, 0o755)
        location = os.path.join(parent, "data")
        os.mkdir(location, 0o755)
        with Emulator(location=location) as emu:
            self.store_a_blob_and_a_file(emu.endpoints)
        # What earlier versions left: directories 0755, files 0644.
        for path in (location, os.path.join(location, "storage"), os.path.join(location, "tls"),
                     os.path.join(location, "ssh")):
            os.chmod(path, 0o755)
        for name in ("state.db", "tls/key.pem", "ssh/host_ed25519_key", "emulator.log"):
            os.chmod(os.path.join(location, name), 0o644)
        self.assertTrue(self.as_nobody_can_read(os.path.join(location, "state.db")))
        with Emulator(location=location) as emu:
            self.check_private(location)
            with open(os.path.join(location, "emulator.log")) as f:
                log = f.read()
            for name in ("state.db", "key.pem", "storage"):
                self.assertRegex(log, r"readable by its owner only now: \S*" + name + r" 0[67][45][45] -> 0[67]00")


if __name__ == "__main__":
    unittest.main()
