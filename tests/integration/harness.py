"""Starts the built batchai-emulator on ephemeral ports with a fresh data directory.

Binaries come from $BAI_EMULATOR and $BAI_CLI (set by CTest). Processes are stopped by PID.
"""
import json
import re
import os
import shutil
import signal
import subprocess
import tempfile
import time

import az_fork_server

# The tests' emulators leave the user's pointer to a running emulator alone (bai would find them
# from any directory); test_bai_status sets its own, in a home of its own.
os.environ["BATCHAI_EMULATOR_POINTER"] = "off"

EMULATOR = os.environ.get("BAI_EMULATOR", "batchai-emulator")
CLI = os.environ.get("BAI_CLI", "bai")
EPHEMERAL = ["--arm-port", "0", "--blob-port", "0", "--file-port", "0", "--batch-port", "0", "--proxy-port", "0"]


def wait_for(predicate, timeout=20.0, interval=0.02, what="condition"):
    """Polls predicate until it returns a truthy value or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def mounts_under(directory):
    """The mount points (this mount namespace's) inside `directory`, deepest first."""
    prefix = os.path.realpath(directory).rstrip("/") + "/"
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            # (the mount point is the fifth field, with space, tab, newline and backslash octal-escaped)
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split(" ")[4])
            if point.startswith(prefix):
                points.append(point)
    return sorted(points, key=len, reverse=True)


def release_mounts_under(directory):
    """Detaches (lazily, as `umount -l`) every mount inside `directory`: a dead FUSE server's too."""
    for point in mounts_under(directory):
        subprocess.run(["umount", "-l", point], capture_output=True)


class Emulator:
    """One emulator process. Use as a context manager or call start()/stop()."""

    def __init__(self, location=None, args=None, command=None, env=None, ignored_signals=()):
        self.owns_location = location is None
        self.env = env
        # Signals the emulator starts with ignored, as `nohup batchai-emulator &` starts it
        # (SIGHUP by nohup; SIGINT and SIGQUIT by a shell's background job).
        self.ignored_signals = tuple(ignored_signals)
        self.location = location or tempfile.mkdtemp(prefix="bai-it-")
        self.args = list(args or [])
        self.command = command or [EMULATOR]
        self.process = None
        self.endpoints = None
        self.stdout_path = os.path.join(self.location, "stdout.txt")
        self.stderr_path = os.path.join(self.location, "stderr.txt")

    def start(self, wait=True):
        self._stdout = open(self.stdout_path, "wb")
        self._stderr = open(self.stderr_path, "wb")
        argv = self.command + ["--location", self.location] + EPHEMERAL + self.args
        ignored = self.ignored_signals

        def ignore_signals():
            for signum in ignored:
                signal.signal(signum, signal.SIG_IGN)
        self.process = subprocess.Popen(argv, stdout=self._stdout, stderr=self._stderr, env=self.env,
                                        preexec_fn=ignore_signals if ignored else None)
        if wait:
            self.endpoints = wait_for(self._read_endpoints, what="endpoints.json")
        return self

    def _read_endpoints(self):
        if self.process.poll() is not None:
            raise RuntimeError(f"emulator exited with {self.process.returncode}: {self.stderr()}")
        path = os.path.join(self.location, "endpoints.json")
        try:
            with open(path) as f:
                doc = json.load(f)
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return doc if doc.get("pid") == self.process.pid else None

    def stdout(self):
        with open(self.stdout_path, errors="replace") as f:
            return f.read()

    def stderr(self):
        with open(self.stderr_path, errors="replace") as f:
            return f.read()

    def send(self, signum):
        os.kill(self.process.pid, signum)

    def stop(self, signum=signal.SIGTERM, timeout=10):
        """Sends signum to the emulator's PID; returns (exit code, seconds it took)."""
        if self.process is None or self.process.poll() is not None:
            return (self.process.returncode if self.process else None), 0.0
        started = time.monotonic()
        self.send(signum)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            code = self.process.wait()
        return code, time.monotonic() - started

    def close(self):
        code, _ = self.stop()
        for f in (getattr(self, "_stdout", None), getattr(self, "_stderr", None)):
            if f:
                f.close()
        # A crash (a sanitizer's abort, say) leaves its report in stderr, which goes with the
        # directory: show it first. kill -9 is what tests do on purpose.
        if code not in (0, None, -signal.SIGKILL) and os.path.exists(self.stderr_path):
            import sys
            print(f"emulator {self.process.pid} exited with {code}; its stderr ends:\n{self.stderr()[-6000:]}",
                  file=sys.stderr)
        # An emulator killed (or crashed) leaves its FUSE mounts behind, answering "Transport
        # endpoint is not connected" to every other suite that lists the machine's mounts, and
        # keeping the directory from going: released as its next start would.
        release_mounts_under(self.location)
        if self.owns_location and not os.environ.get("BAI_KEEP_DATA"):  # (kept to read its emulator.log)
            shutil.rmtree(self.location, ignore_errors=True)
        # A test whose emulator crashed as it stopped fails (its stderr is printed above).
        if code not in (0, None, -signal.SIGKILL):
            raise AssertionError(f"emulator {self.process.pid} exited with {code}")

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()


def run_cli(*args, env=None, timeout=30, cwd=None):
    """Runs bai; returns the CompletedProcess (text)."""
    full_env = dict(os.environ)
    full_env.pop("BATCHAI_EMULATOR_ENDPOINT", None)
    full_env.pop("BATCHAI_EMULATOR_CA_CERT", None)
    full_env.update(env or {})
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=full_env,
                          timeout=timeout, cwd=cwd)


DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
           "K1SZFPTOtr/KBHBeksoGMGw==")
# The Batch endpoint's well-known account.
DEV_BATCH_ACCOUNT = "devbatchaccount1"
DEV_BATCH_KEY = "QmF0Y2hFbXVsYXRvckRldkFjY291bnRLZXktbm90LWEtc2VjcmV0LWxvb3BiYWNrLW9ubHktMDAwMDAwMDAwMA=="


def processes_named(command_line):
    """The PIDs of the processes whose command line is exactly `command_line` (not a shell or a
    sandbox whose command line merely contains it)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    pids = []
    for line in out.splitlines()[1:]:
        pid, _, args = line.strip().partition(" ")
        if args.strip() == command_line:
            pids.append(int(pid))
    return pids


def sleep_of_this_run(seconds):
    """A sleep's command line that no other run on this machine has, for a test that finds its
    command's processes by their command line (processes_named): other suites, and other passes of
    this one, run beside it. `sleep SECONDS.PID`."""
    return f"sleep {seconds}.{os.getpid()}"


def kill_processes_named(command_line):
    """Kills (by PID) the processes whose command line is exactly `command_line`: what a test's
    job left running when the test killed the emulator under it."""
    for pid in processes_named(command_line):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def connection_string(endpoints, account=DEV_ACCOUNT, key=DEV_KEY):
    return (f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};"
            f"BlobEndpoint={endpoints['blob']}/{account};FileEndpoint={endpoints['file']}/{account};")


def az(args, env, cwd=None, input=None, timeout=300):
    """The real az CLI: `az ARGS` under `env` in `cwd`, answered as subprocess.run(capture_output=True,
    text=True) answers. Each command is a process of its own, forked from a server that has imported
    az's libraries once (az_fork_server.py says why that is still az as a user runs it);
    BAI_AZ_PROCESS=1 runs the `az` program instead."""
    return az_fork_server.run_az(args, env, cwd=cwd, input=input, timeout=timeout)


def print_az_timings(timings, baseline_samples):
    """The wall time of each az command run, `timings` [(command line, seconds)], beside the
    median of `baseline_samples` (az group show's): reported, never asserted."""
    import statistics
    import sys
    baseline = statistics.median(baseline_samples)
    print(f"\n{'az command':<100} {'wall s':>7} {'az group show s':>16}", file=sys.stderr)
    for line, wall in timings:
        print(f"{line[:100]:<100} {wall:7.2f} {baseline:16.2f}", file=sys.stderr)


def run_az(args, connection, cwd=None, timeout=300):
    """Runs `az storage ...` with a connection string; returns the CompletedProcess (text)."""
    config = tempfile.mkdtemp(prefix="bai-az-")
    env = dict(os.environ, AZURE_CONFIG_DIR=config, AZURE_CORE_COLLECT_TELEMETRY="no",
               AZURE_CORE_NO_COLOR="true", AZURE_CORE_ONLY_SHOW_ERRORS="true",
               AZURE_STORAGE_CONNECTION_STRING=connection)
    try:
        return az(args, env=env, cwd=cwd, timeout=timeout)
    finally:
        shutil.rmtree(config, ignore_errors=True)


class StorageTestCase:
    """Mixin: one emulator per test class, its connection string, and a health check that the
    emulator survived every test."""

    @classmethod
    def setUpClass(cls):
        cls.emu = Emulator().start()
        cls.endpoints = cls.emu.endpoints
        cls.conn = connection_string(cls.endpoints)

    @classmethod
    def tearDownClass(cls):
        import urllib.request
        for name in ("blob", "file"):
            with urllib.request.urlopen(cls.endpoints[name] + "/health", timeout=5) as r:
                assert r.status == 200, f"{name} endpoint unhealthy after the tests"
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert code == 0, f"emulator exited with {code}"


class ContainerPerTest(StorageTestCase):
    """Mixin: StorageTestCase with a container of its own for each test (named after the test),
    a BlobServiceClient, a raw client and the SDK's error of a call."""

    def setUp(self):
        from azure.storage.blob import BlobServiceClient
        from raw_storage import RawClient
        self.svc = BlobServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.container = self.svc.create_container(self.name)
        self.addCleanup(self.container.delete_container)
        self.raw = RawClient(self.endpoints["blob"])

    def error_of(self, call):
        """(status, error code) of the HttpResponseError that `call` raises."""
        from azure.core.exceptions import HttpResponseError
        with self.assertRaises(HttpResponseError) as caught:
            call()
        return caught.exception.status_code, caught.exception.error_code

    def path(self, blob=""):
        return f"/{DEV_ACCOUNT}/{self.name}" + (f"/{blob}" if blob else "")


class StaticToken:
    """A TokenCredential whose token never expires; the emulator accepts any bearer token."""

    def get_token(self, *scopes, **kwargs):
        from azure.core.credentials import AccessToken
        return AccessToken("emulator-token", int(time.time()) + 3600)


SUBSCRIPTION = "00000000-1111-2222-3333-444444444444"


def arm_client(client_class, endpoints, **kwargs):
    """An Azure management client (BatchAI, ResourceManagementClient, StorageManagementClient)
    pointed at the emulator's ARM endpoint, trusting its certificate, polling every 0.1 s."""
    return client_class(StaticToken(), SUBSCRIPTION, base_url=endpoints["arm"],
                        connection_verify=endpoints["ca_cert"], polling_interval=0.1, **kwargs)


def arm_call(endpoints, method, path, body=None, api_version="2018-05-01", headers=None, data=None):
    """One raw HTTPS request to the ARM endpoint; returns the requests.Response."""
    import requests
    url = endpoints["arm"] + path
    if api_version is not None:
        url += ("&" if "?" in url else "?") + "api-version=" + api_version
    all_headers = {"Authorization": "Bearer emulator-token"}
    all_headers.update(headers or {})
    return requests.request(method, url, json=body, data=data, headers=all_headers,
                            verify=endpoints["ca_cert"], timeout=30)


def set_delete_retention(test, service, policy, enabled, days=None, api_version="2021-04-01"):
    """Sets a storage account service's delete retention `policy` (`service`: the ARM path of its
    blobServices/default or fileServices/default; `policy`: containerDeleteRetentionPolicy,
    shareDeleteRetentionPolicy, ...) as `az storage account blob-service-properties update` does,
    and turns it off again when `test` ends; the service's properties as answered."""
    setting = {"enabled": enabled} if days is None else {"enabled": enabled, "days": days}
    r = arm_call(test.endpoints, "PATCH", service, {"properties": {policy: setting}}, api_version=api_version)
    test.assertEqual(r.status_code, 200, r.text)
    test.addCleanup(lambda: arm_call(test.endpoints, "PATCH", service, {"properties": {policy: {"enabled": False}}},
                                     api_version=api_version))
    return r.json()


def wait_for_operation(endpoints, response, timeout=20):
    """Polls the Azure-AsyncOperation URL of a 202 until the operation ends; returns the
    document."""
    import requests
    url = response.headers["Azure-AsyncOperation"]

    def done():
        doc = requests.get(url, headers={"Authorization": "Bearer emulator-token"}, verify=endpoints["ca_cert"],
                           timeout=10).json()
        return doc if doc["status"] != "InProgress" else None
    return wait_for(done, timeout=timeout, interval=0.05, what="operation " + url)
