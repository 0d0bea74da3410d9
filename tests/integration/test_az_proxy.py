"""The real az CLI (Debian's azure-cli 2.45) through the emulator's proxy front door, as a user runs
it after `eval "$(bai env)"`: az's own AzureCloud, no custom cloud, the cloud's host names. The
environment is what `bai --data-dir DIR env` prints, parsed. Sign-in four ways, the first Batch AI
tutorial's storage steps verbatim, --account-name without a key, az batch account login and pools,
bai exec, and a host the emulator does not serve. Each line is checked by what az prints and by the
emulator's state read on its direct path-style endpoints or ARM. The wall time of every az command
is printed (nothing asserts on it)."""
import base64
import json
import os
import re
import shlex
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import harness

SUBSCRIPTION = "ba1e5ab5-0000-4000-8000-000000000001"
TENANT = "ba1e7e4a-0000-4000-8000-000000000001"
WELL_KNOWN_ID = "ba1eca11-0000-4000-8000-000000000001"
WELL_KNOWN_SECRET = "batchai-emulator-well-known-secret"
WELL_KNOWN_USER = "user@batchaiemulator.onmicrosoft.com"
CERT_ID = "c1c1c1c1-2222-4333-8444-555555555555"
MANAGEMENT = "https://management.core.windows.net/"
BATCH_RESOURCE = "https://batch.core.windows.net/"

# What `bai env` exports; the tests take their values from its output only.
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE",
                   "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
# An az command's own time is a few seconds; one that waits out retries or a dead connection takes
# a minute or more, and fails the test here.
AZ_TIMEOUT = 120
REFUSAL_TIMEOUT = 60

_print_lock = threading.Lock()


def report_time(args, seconds, returncode):
    with _print_lock:
        print(f"  {seconds:6.2f} s  rc={returncode}  az {' '.join(args)}", flush=True)


def parse_bai_env(data_dir):
    """Runs `bai --data-dir DIR env` and parses its `export NAME='VALUE'` lines into a dict."""
    done = subprocess.run([harness.CLI, "--data-dir", data_dir, "env"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"bai env failed ({done.returncode}): {done.stderr}"
    exports = {}
    for line in done.stdout.splitlines():
        words = shlex.split(line)
        assert len(words) == 2 and words[0] == "export" and "=" in words[1], f"bai env printed {line!r}"
        name, _, value = words[1].partition("=")
        exports[name] = value
    missing = [name for name in PROXY_VARIABLES if not exports.get(name)]
    assert not missing, f"bai env exports no {missing}: {done.stdout}"
    return exports


def base_environment(home, config_dir):
    """The test process's environment without anything that would route, trust, sign in or pick a
    browser for az: what is left is what bai env adds."""
    env = {k: v for k, v in os.environ.items()
           if k not in PROXY_VARIABLES and not k.startswith("AZURE_") and k not in ("DISPLAY", "WAYLAND_DISPLAY",
                                                                                    "BROWSER", "ALL_PROXY", "all_proxy",
                                                                                    "HTTP_PROXY", "http_proxy")}
    env.update(HOME=home, AZURE_CONFIG_DIR=config_dir, AZURE_CORE_COLLECT_TELEMETRY="no", AZURE_CORE_NO_COLOR="true",
               AZURE_CORE_ONLY_SHOW_ERRORS="true")
    return env


def json_documents(text):
    """The JSON documents az printed one after another (a shell script's several commands)."""
    decoder, documents, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return documents
        document, at = decoder.raw_decode(text, at)
        documents.append(document)


def jwt_claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class ProxyTestCase(unittest.TestCase):
    """One emulator per class, its proxy environment from bai env, a config directory of az's own."""

    emulator_args = []

    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="bai-az-proxy-")
        cls.prepare()
        cls.emu = harness.Emulator(args=cls.emulator_args).start()
        cls.endpoints = cls.emu.endpoints
        cls.exports = parse_bai_env(cls.emu.location)
        cls.plain_env = base_environment(cls.home, os.path.join(cls.home, "az"))
        cls.env = dict(cls.plain_env, **cls.exports)
        cls.arm_context = ssl.create_default_context(cafile=cls.endpoints["ca_cert"])
        cls.arm_token = None

    @classmethod
    def prepare(cls):
        """What a class makes before its emulator starts."""

    @classmethod
    def tearDownClass(cls):
        for name in ("blob", "file"):
            with urllib.request.urlopen(cls.endpoints[name] + "/health", timeout=5) as r:
                assert r.status == 200, f"{name} endpoint unhealthy after the tests"
        code, _ = cls.emu.stop()
        cls.emu.close()
        shutil.rmtree(cls.home, ignore_errors=True)
        assert code == 0, f"emulator exited with {code}"

    @classmethod
    def run_az(cls, *args, env=None, timeout=AZ_TIMEOUT):
        """az ARGS with the class's environment (or env); prints its wall time."""
        started = time.monotonic()
        try:
            result = harness.az(args, env=env or cls.env, timeout=timeout, cwd=cls.home)
        except subprocess.TimeoutExpired:
            report_time(args, time.monotonic() - started, "timeout")
            raise
        report_time(args, time.monotonic() - started, result.returncode)
        return result

    @classmethod
    def must_az(cls, *args, env=None):
        result = cls.run_az(*args, env=env)
        assert result.returncode == 0, f"az {' '.join(args)}\n{result.stdout}\n{result.stderr}"
        return result

    def az_json(self, *args, env=None):
        return json.loads(self.must_az(*args, "-o", "json", env=env).stdout)

    # The emulator's state, read without the proxy.

    def arm(self, method, path, api_version):
        if self.arm_token is None:
            fields = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": WELL_KNOWN_ID,
                                             "client_secret": WELL_KNOWN_SECRET, "scope": MANAGEMENT + ".default"})
            request = urllib.request.Request(f"{self.endpoints['arm']}/{TENANT}/oauth2/token",
                                             data=fields.encode(), method="POST")
            with urllib.request.urlopen(request, context=self.arm_context, timeout=10) as r:
                type(self).arm_token = json.loads(r.read())["access_token"]
        request = urllib.request.Request(f"{self.endpoints['arm']}{path}?api-version={api_version}", method=method,
                                         data=b"" if method == "POST" else None,
                                         headers={"Authorization": f"Bearer {self.arm_token}"})
        try:
            with urllib.request.urlopen(request, context=self.arm_context, timeout=10) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def group_path(self, group):
        return f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{group}"

    def storage_key(self, group, account):
        status, body = self.arm("POST", f"{self.group_path(group)}/providers/Microsoft.Storage/storageAccounts/"
                                        f"{account}/listKeys", "2022-09-01")
        self.assertEqual(status, 200, body)
        return body["keys"][0]["value"]

    def direct_connection(self, group, account):
        """A connection string for the emulator's path-style Blob and File endpoints."""
        return harness.connection_string(self.endpoints, account, self.storage_key(group, account))


class PublicCloudSignIn(ProxyTestCase):
    """az login against az's own AzureCloud: the device code (plain `az login` falls back to it with no
    browser), a secret, a certificate made with openssl as a user makes one."""

    @classmethod
    def prepare(cls):
        key, certificate = (os.path.join(cls.home, name) for name in ("key.pem", "cert.pem"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
                        "-days", "2", "-subj", "/CN=batch-tutorial"], check=True, capture_output=True)
        # az takes the key and the certificate in one PEM file; the emulator is given the certificate.
        cls.principal_pem = os.path.join(cls.home, "principal.pem")
        with open(cls.principal_pem, "w") as both, open(key) as k, open(certificate) as c:
            both.write(k.read() + c.read())
        cls.emulator_args = ["--service-principal-cert", f"{CERT_ID}:{certificate}"]

    def sign_in(self, name, login):
        """az LOGIN in a config directory of its own, then az account show, a group created and
        az group list: (login, account show, group list) CompletedProcesses."""
        env = dict(self.env, AZURE_CONFIG_DIR=os.path.join(self.home, "az-" + name))
        signed = self.run_az(*login, env=env)
        if signed.returncode != 0:
            return signed, None, None
        shown = self.run_az("account", "show", "-o", "json", env=env)
        self.run_az("group", "create", "-n", f"by-{name}", "-l", "eastus", "-o", "none", env=env)
        listed = self.run_az("group", "list", "-o", "json", env=env)
        return signed, shown, listed

    def test_each_sign_in_then_account_show_and_group_list(self):
        flows = {
            "az-login": (["login"], (WELL_KNOWN_USER, "user")),
            "device-code": (["login", "--use-device-code"], (WELL_KNOWN_USER, "user")),
            "secret": (["login", "--service-principal", "-u", WELL_KNOWN_ID, "-p", WELL_KNOWN_SECRET, "--tenant", TENANT],
                       (WELL_KNOWN_ID, "servicePrincipal")),
            "certificate": (["login", "--service-principal", "-u", CERT_ID, "-p", self.principal_pem, "--tenant", TENANT],
                            (CERT_ID, "servicePrincipal")),
        }
        with ThreadPoolExecutor(len(flows)) as pool:
            futures = {name: pool.submit(self.sign_in, name, login) for name, (login, _) in flows.items()}
            results = {name: future.result() for name, future in futures.items()}
        for name, (login, (user, kind)) in flows.items():
            with self.subTest(name):
                signed, shown, listed = results[name]
                self.assertEqual(signed.returncode, 0, f"az {' '.join(login)}\n{signed.stdout}\n{signed.stderr}")
                subscriptions = json.loads(signed.stdout)
                self.assertEqual([(s["id"], s["cloudName"], s["tenantId"], s["user"]) for s in subscriptions],
                                 [(SUBSCRIPTION, "AzureCloud", TENANT, {"name": user, "type": kind})])
                self.assertEqual(shown.returncode, 0, shown.stderr)
                account = json.loads(shown.stdout)
                self.assertEqual((account["id"], account["environmentName"], account["user"]),
                                 (SUBSCRIPTION, "AzureCloud", {"name": user, "type": kind}))
                self.assertEqual(listed.returncode, 0, listed.stderr)
                self.assertIn(f"by-{name}", [g["name"] for g in json.loads(listed.stdout)])
                # The group az made through management.azure.com is in the emulator's ARM.
                status, group = self.arm("GET", self.group_path(f"by-{name}"), "2021-04-01")
                self.assertEqual((status, group["location"]), (200, "eastus"), group)
                if kind == "user":
                    # az printed the device-code prompt (no browser here), which the emulator completed itself.
                    self.assertIn("microsoft.com/devicelogin", signed.stderr)
        # The emulator printed, once for each of the two device-code sign-ins, that it completed it.
        completed = [line for line in self.emu.stdout().splitlines()
                     if WELL_KNOWN_USER in line and re.search("device.code", line, re.I)]
        self.assertEqual(len(completed), 2, self.emu.stdout())

    def test_a_wrong_secret_is_refused_by_the_public_authority(self):
        env = dict(self.env, AZURE_CONFIG_DIR=os.path.join(self.home, "az-wrong"))
        wrong = self.run_az("login", "--service-principal", "-u", WELL_KNOWN_ID, "-p", "not-the-secret", "--tenant",
                            TENANT, env=env)
        self.assertNotEqual(wrong.returncode, 0)
        self.assertIn("AADSTS7000215", wrong.stderr)


class TutorialsThroughTheProxy(ProxyTestCase):
    """The tutorials' az lines unchanged, after a plain `az login` as the tutorial has it."""

    GROUP = "recipes"
    ACCOUNT = "recipesstore"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        login = cls.must_az("login")
        assert json.loads(login.stdout)[0]["user"]["name"] == WELL_KNOWN_USER, login.stdout
        cls.must_az("group", "create", "-n", cls.GROUP, "-l", "eastus", "-o", "none")
        cls.must_az("storage", "account", "create", "-n", cls.ACCOUNT, "-g", cls.GROUP, "-l", "eastus", "--sku",
                    "Standard_LRS", "-o", "none")

    def write(self, relative, data):
        path = os.path.join(self.home, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_first_tutorial_storage_steps_verbatim(self):
        account = "azbootcampbatchstore"
        script = os.urandom(3000) + b"\nprint('ConvNet_MNIST')\n"
        self.write("ConvNet_MNIST.py", script)
        times = os.path.join(self.home, "tutorial-times.tsv")
        # The tutorial's lines as written; the function before them only times each az command.
        tutorial = f"""
set -e
az() {{ local start=$EPOCHREALTIME rc=0; command az "$@" || rc=$?
        printf '%s\\t%s\\t%s\\n' "$(( ${{EPOCHREALTIME/./}} - ${{start/./}} ))" "$rc" "$*" >> {shlex.quote(times)}
        return $rc; }}
az group create --name batchai.recipes --location eastus
az storage account create -n {account} --sku Standard_LRS -g batchai.recipes -l eastus
export AZURE_STORAGE_ACCOUNT={account}
export AZURE_STORAGE_KEY=$(az storage account keys list --account-name {account} -o tsv --query [0].value)
az storage share create --name batchaiquickstart
az storage directory create --share-name batchaiquickstart --name mnistcntksample
az storage file upload --share-name batchaiquickstart --source ConvNet_MNIST.py --path mnistcntksample
"""
        done = subprocess.run(["bash", "-c", tutorial], capture_output=True, text=True, env=self.env, cwd=self.home,
                              timeout=6 * AZ_TIMEOUT, stdin=subprocess.DEVNULL)
        with open(times) as f:
            ran = [line.rstrip("\n").split("\t", 2) for line in f]
        for micros, rc, args in ran:
            report_time(args.split(" "), int(micros) / 1e6, rc)
        self.assertEqual(done.returncode, 0, f"{done.stdout}\n{done.stderr}")
        self.assertEqual([(rc, args.split(" ")[:3]) for _, rc, args in ran],
                         [("0", ["group", "create", "--name"]), ("0", ["storage", "account", "create"]),
                          ("0", ["storage", "account", "keys"]), ("0", ["storage", "share", "create"]),
                          ("0", ["storage", "directory", "create"]), ("0", ["storage", "file", "upload"])])
        # What az printed: the group, the account, then the share's, the directory's and the file's answers.
        group, created, share, directory, uploaded = json_documents(done.stdout)
        self.assertEqual((group["name"], group["location"]), ("batchai.recipes", "eastus"))
        self.assertEqual(created["primaryEndpoints"]["file"], f"https://{account}.file.core.windows.net/")
        self.assertEqual((share, directory), ({"created": True}, {"created": True}))
        self.assertIn("etag", uploaded)
        # The emulator's state: the bytes are in the share, read on the direct File endpoint with
        # the key ARM gives.
        from azure.storage.fileshare import ShareFileClient
        connection = self.direct_connection("batchai.recipes", account)
        with ShareFileClient.from_connection_string(connection, "batchaiquickstart",
                                                    "mnistcntksample/ConvNet_MNIST.py") as stored:
            self.assertEqual(stored.download_file().readall(), script)

    def test_account_name_without_a_key(self):
        """az fetches the key through ARM; share/directory/file and container/blob/upload-batch."""
        name = ["--account-name", self.ACCOUNT]
        train = self.write("train.py", b"print('train')\n" + os.urandom(512))
        batch = {"a.txt": b"a\n", "sub/b.txt": os.urandom(2048)}
        for relative, data in batch.items():
            self.write(os.path.join("upload", relative), data)

        def files():
            return [self.az_json("storage", "share", "create", "-n", "scripts", *name),
                    self.az_json("storage", "directory", "create", "-s", "scripts", "-n", "cntk", *name),
                    self.az_json("storage", "file", "upload", "-s", "scripts", "--source", train, "-p", "cntk", *name),
                    self.az_json("storage", "file", "list", "-s", "scripts", "-p", "cntk", *name)]

        def blobs():
            return [self.az_json("storage", "container", "create", "-n", "data", *name),
                    self.az_json("storage", "blob", "upload", "-c", "data", "-f", train, "-n", "train.py", *name),
                    self.must_az("storage", "blob", "upload-batch", "-s", os.path.join(self.home, "upload"), "-d",
                                 "data", *name).stdout,
                    self.az_json("storage", "blob", "list", "-c", "data", *name)]

        with ThreadPoolExecutor(2) as pool:
            file_answers, blob_answers = pool.submit(files), pool.submit(blobs)
            share, directory, uploaded, listed = file_answers.result()
            container, blob, _, blobs_listed = blob_answers.result()
        self.assertEqual((share, directory, container), ({"created": True},) * 3)
        self.assertIn("etag", uploaded)
        self.assertEqual([f["name"] for f in listed], ["train.py"])
        self.assertIn("etag", blob)
        self.assertEqual(sorted(b["name"] for b in blobs_listed), ["a.txt", "sub/b.txt", "train.py"])
        from azure.storage.blob import ContainerClient
        from azure.storage.fileshare import ShareFileClient
        connection = self.direct_connection(self.GROUP, self.ACCOUNT)
        with open(train, "rb") as f:
            expected = f.read()
        with ShareFileClient.from_connection_string(connection, "scripts", "cntk/train.py") as stored:
            self.assertEqual(stored.download_file().readall(), expected)
        with ContainerClient.from_connection_string(connection, "data") as container:
            self.assertEqual(container.download_blob("train.py").readall(), expected)
            for relative, data in batch.items():
                self.assertEqual(container.download_blob(relative).readall(), data)

    def test_batch_account_login_then_pools(self):
        group, account = "batch.recipes", "tutorialbatch"
        self.must_az("group", "create", "-n", group, "-l", "eastus", "-o", "none")
        created = self.az_json("batch", "account", "create", "-n", account, "-g", group, "-l", "eastus")
        self.assertEqual(created["accountEndpoint"], f"{account}.eastus.batch.azure.com")
        status, keys = self.arm("POST", f"{self.group_path(group)}/providers/Microsoft.Batch/batchAccounts/{account}/"
                                        "listKeys", "2022-10-01")
        self.assertEqual(status, 200, keys)
        from azure.batch import BatchServiceClient
        from azure.batch.batch_auth import SharedKeyCredentials
        direct = BatchServiceClient(SharedKeyCredentials(account, keys["primary"]),
                                    batch_url=f"{self.endpoints['batch']}/{account}")
        pool_args = ["--vm-size", "STANDARD_D1_V2", "--target-dedicated-nodes", "0", "--image",
                     "canonical:ubuntuserver:18.04-lts", "--node-agent-sku-id", "batch.node.ubuntu 18.04"]

        # Shared key: az keeps the account's endpoint and key.
        shown = self.az_json("batch", "account", "login", "-n", account, "-g", group, "--shared-key-auth", "--show")
        self.assertEqual((shown["endpoint"], shown["primaryKey"]),
                         (f"https://{account}.eastus.batch.azure.com/", keys["primary"]))
        self.must_az("batch", "account", "login", "-n", account, "-g", group, "--shared-key-auth")
        self.assertEqual(self.az_json("batch", "pool", "list"), [])
        self.must_az("batch", "pool", "create", "--id", "p1", *pool_args)
        pool = self.az_json("batch", "pool", "show", "--pool-id", "p1")
        self.assertEqual((pool["id"], pool["url"], pool["vmSize"]),
                         ("p1", f"https://{account}.eastus.batch.azure.com/pools/p1", "standard_d1_v2"))
        self.assertEqual(direct.pool.get("p1").vm_size, "standard_d1_v2")

        # Microsoft Entra ID: the sign-in's token for Batch, from the public authority.
        token = self.az_json("batch", "account", "login", "-n", account, "-g", group, "--show")
        self.assertEqual((token["tokenType"], jwt_claims(token["accessToken"])["aud"]), ("Bearer", BATCH_RESOURCE))
        self.must_az("batch", "account", "login", "-n", account, "-g", group)
        self.assertEqual([p["id"] for p in self.az_json("batch", "pool", "list")], ["p1"])
        self.must_az("batch", "pool", "create", "--id", "p2", *pool_args)
        self.assertEqual(self.az_json("batch", "pool", "show", "--pool-id", "p2")["id"], "p2")
        self.assertEqual(sorted(p.id for p in direct.pool.list()), ["p1", "p2"])

    def test_bai_exec_routes_one_command(self):
        from azure.storage.fileshare import ShareServiceClient
        with ShareServiceClient.from_connection_string(self.direct_connection(self.GROUP, self.ACCOUNT)) as service:
            service.create_share("byexec")
        self.assertFalse(set(PROXY_VARIABLES) & set(self.plain_env))
        args = ["storage", "share", "list", "--account-name", self.ACCOUNT, "-o", "tsv"]
        started = time.monotonic()
        done = subprocess.run([harness.CLI, "--data-dir", self.emu.location, "exec", "--", "az", *args],
                              capture_output=True, text=True, env=self.plain_env, cwd=self.home, timeout=AZ_TIMEOUT,
                              stdin=subprocess.DEVNULL)
        report_time(["(bai exec)", *args], time.monotonic() - started, done.returncode)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(any("byexec" in line.split("\t") for line in done.stdout.splitlines()), done.stdout)

    def test_a_host_the_emulator_does_not_serve_fails_at_once(self):
        """Microsoft Graph is not served: az's request is refused at the CONNECT and az says so."""
        refused = self.run_az("ad", "signed-in-user", "show", timeout=REFUSAL_TIMEOUT)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("graph.microsoft.com", refused.stderr)
        self.assertIn("403", refused.stderr)

    def test_a_storage_service_the_emulator_does_not_serve_fails_at_once(self):
        """Queue is not served. Its names are Azure's, so the proxy answers inside the tunnel, as a
        Storage service refuses (403 ServiceNotServedHere, naming the host): az shows it at once
        (refused at the CONNECT, az's storage client would retry for a minute and more)."""
        started = time.monotonic()
        try:
            refused = self.run_az("storage", "queue", "list", "--account-name", self.ACCOUNT, timeout=REFUSAL_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail(f"az storage queue list was still running after {REFUSAL_TIMEOUT} s")
        print(f"  az storage queue list (refused): {time.monotonic() - started:.2f} s", flush=True)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("ServiceNotServedHere", refused.stderr)
        self.assertIn(f"{self.ACCOUNT}.queue.core.windows.net", refused.stderr)


if __name__ == "__main__":
    unittest.main()
