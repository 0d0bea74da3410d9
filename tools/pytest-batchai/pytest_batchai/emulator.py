"""A batchai-emulator for a test session: one started on ephemeral ports with a fresh data
directory, or one already running that an environment variable names. No pytest here."""
import json
import os
import re
import shlex
import shutil
import signal
import ssl
import subprocess
import tempfile
import time
import urllib.request

# The well-known accounts and sign-in of every emulator (the banner prints them).
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
DEV_BATCH_ACCOUNT = "devbatchaccount1"
DEV_BATCH_KEY = "QmF0Y2hFbXVsYXRvckRldkFjY291bnRLZXktbm90LWEtc2VjcmV0LWxvb3BiYWNrLW9ubHktMDAwMDAwMDAwMA=="
TENANT = "ba1e7e4a-0000-4000-8000-000000000001"
CLIENT_ID = "ba1eca11-0000-4000-8000-000000000001"
CLIENT_SECRET = "batchai-emulator-well-known-secret"
SUBSCRIPTION = "ba1e5ab5-0000-4000-8000-000000000001"  # the sign-in's default subscription

ENDPOINTS_VARIABLE = "BATCHAI_EMULATOR_ENDPOINTS"


def ephemeral_ports(binary):
    """`--NAME-port 0` for every port the emulator's usage names: each endpoint on a free port, so
    that sessions side by side, or a user's emulator on the default ports, do not collide."""
    usage = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30).stdout
    flags = sorted(set(re.findall(r"\[(--[a-z]+(?:-[a-z]+)*-port) P\]", usage)))
    return [arg for flag in flags for arg in (flag, "0")]


def find_binary():
    """$BAI_EMULATOR, else batchai-emulator on PATH, else this checkout's build."""
    named = os.environ.get("BAI_EMULATOR")
    if named:
        return named
    on_path = shutil.which("batchai-emulator")
    if on_path:
        return on_path
    built = os.path.join(os.path.dirname(__file__), "..", "..", "..", "build", "emulator", "batchai-emulator")
    if os.path.isfile(built):
        return os.path.abspath(built)
    raise RuntimeError("no batchai-emulator: set $BAI_EMULATOR, put it on PATH, or build this checkout "
                       "(tools/run)")


class Emulator:
    """Where an emulator listens (`endpoints`: arm, blob, file, batch, ca_cert) and its accounts.
    start() runs a new one; attach() takes one that runs already."""

    def __init__(self, endpoints, process=None, location=None, owns_location=False):
        self.endpoints = endpoints
        self.process = process
        self.location = location
        self._owns_location = owns_location

    @property
    def connection_string(self):
        e = self.endpoints
        return (f"DefaultEndpointsProtocol=http;AccountName={DEV_ACCOUNT};AccountKey={DEV_KEY};"
                f"BlobEndpoint={e['blob']}/{DEV_ACCOUNT};FileEndpoint={e['file']}/{DEV_ACCOUNT};")

    @classmethod
    def start(cls, binary=None, args=(), timeout=60.0):
        binary = binary or find_binary()
        location = tempfile.mkdtemp(prefix="pytest-batchai-")
        argv = [binary, "--location", location, *ephemeral_ports(binary),
                *shlex.split(os.environ.get("BATCHAI_EMULATOR_ARGS", "")), *args]
        # This session's emulator is not the user's: bai's pointer to theirs stays as it is.
        env = dict(os.environ, BATCHAI_EMULATOR_POINTER="off")
        with open(os.path.join(location, "stdout.txt"), "wb") as out, \
                open(os.path.join(location, "stderr.txt"), "wb") as err:
            process = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        emulator = cls(None, process, location, owns_location=True)
        deadline = time.monotonic() + timeout
        path = os.path.join(location, "endpoints.json")
        while emulator.endpoints is None:
            if process.poll() is not None:
                why = emulator._stderr_tail(location)
                emulator._remove_location()
                raise RuntimeError(f"batchai-emulator exited with {process.returncode}: {why}")
            if time.monotonic() > deadline:
                emulator.stop()
                raise RuntimeError(f"batchai-emulator wrote no endpoints.json in {timeout} s")
            try:
                with open(path) as f:
                    doc = json.load(f)
                if doc.get("pid") == process.pid:
                    emulator.endpoints = doc
                    break
            except (FileNotFoundError, json.JSONDecodeError):
                pass
            time.sleep(0.02)
        return emulator

    @classmethod
    def attach(cls, named):
        """An emulator that runs already: `named` is its endpoints.json (or its data directory),
        or the URL of its ARM endpoint (the others are asked of it; $BATCHAI_EMULATOR_CA_CERT is
        the certificate to trust, as for bai)."""
        if "://" not in named:
            path = os.path.join(named, "endpoints.json") if os.path.isdir(named) else named
            with open(path) as f:
                return cls(json.load(f))
        arm = named.rstrip("/")
        ca_cert = os.environ.get("BATCHAI_EMULATOR_CA_CERT", "")
        # Without a certificate to trust, as bai does on loopback: unverified.
        context = ssl.create_default_context(cafile=ca_cert) if ca_cert else ssl._create_unverified_context()
        with urllib.request.urlopen(arm + "/emulator/endpoints", timeout=10, context=context) as r:
            endpoints = json.load(r)
        endpoints["ca_cert"] = ca_cert
        return cls(endpoints)

    def stop(self, timeout=20.0):
        """Stops a started emulator (SIGTERM, then SIGKILL) and removes its data directory;
        returns its exit code. An attached one is left running."""
        code = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            code = self.process.returncode
        self._remove_location()
        return code

    def _remove_location(self):
        if self._owns_location and self.location:
            shutil.rmtree(self.location, ignore_errors=True)

    @staticmethod
    def _stderr_tail(location):
        try:
            with open(os.path.join(location, "stderr.txt"), errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""
