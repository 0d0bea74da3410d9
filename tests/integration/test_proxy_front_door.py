"""The proxy front door: programs written for the cloud, unchanged, reach the emulator at Azure's
own host names once `bai env`'s exports are in their environment (HTTPS_PROXY and the trust
bundle). The programs run as their own processes with the real SDKs; what they did is checked in the
emulator through its path-style endpoints. Then each refusal and each bad input of the front door:
other hosts and ports, malformed CONNECT lines, a ClientHello without SNI or naming another host,
idle and trickling tunnels, a thousand tunnels at once; the same checks of keys, SAS and tokens as
on the direct endpoints (--strict-auth included); the CA's name constraints, checked with openssl."""
import json
import os
import resource
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import requests

import harness

TENANT = "ba1e7e4a-0000-4000-8000-000000000001"
CLIENT_ID = "ba1eca11-0000-4000-8000-000000000001"
SECRET = "batchai-emulator-well-known-secret"
SUBSCRIPTION = "ba1e5ab5-0000-4000-8000-000000000001"
BLOB_HOST = f"{harness.DEV_ACCOUNT}.blob.core.windows.net"
FILE_HOST = f"{harness.DEV_ACCOUNT}.file.core.windows.net"
BATCH_URL = f"https://{harness.DEV_BATCH_ACCOUNT}.eastus.batch.azure.com"


def raise_descriptor_limit():
    """A thousand tunnels need a thousand descriptors here, and in the emulator (which inherits it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, 8192) if hard != resource.RLIM_INFINITY else 8192
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def bai_env(location):
    """The exports `bai env` prints, as a dict (what `eval "$(bai env)"` would set)."""
    out = harness.run_cli("--data-dir", location, "env")
    assert out.returncode == 0, out.stderr
    script = f"{out.stdout}\nenv -0"
    dumped = subprocess.run(["bash", "-c", script], capture_output=True, check=True, env={"PATH": os.environ["PATH"]})
    env = dict(item.split("=", 1) for item in dumped.stdout.decode().split("\0") if "=" in item)
    return {k: v for k, v in env.items() if k in (
        "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS")}


def run_program(source, env, timeout=120):
    """Runs `source` as a program of its own, with `env` added to this environment; its JSON output."""
    full = dict(os.environ)
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"):
        full.pop(name, None)
    full.update(env)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=full, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"the program failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def proxy_address(emu):
    host, port = emu.endpoints["proxy"].rsplit("/", 1)[-1].rsplit(":", 1)
    return host, int(port)


def connect(emu, authority, timeout=10):
    """A socket to the proxy that sent CONNECT `authority`; (socket, the answer's head and body so far)."""
    s = socket.create_connection(proxy_address(emu), timeout=timeout)
    s.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    return s, read_answer(s)


def read_answer(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else None
    return status, head.decode(errors="replace"), rest


def read_body(s, rest, head):
    length = next((int(line.split(":", 1)[1]) for line in head.split("\r\n") if line.lower().startswith("content-length:")), 0)
    while len(rest) < length:
        chunk = s.recv(4096)
        if not chunk:
            break
        rest += chunk
    return rest.decode(errors="replace")


STORAGE_PROGRAM = r'''
import json, sys
from datetime import datetime, timedelta
from azure.storage.blob import BlobServiceClient, BlobClient, generate_blob_sas
from azure.storage.fileshare import ShareServiceClient
blobs = BlobServiceClient(account_url="https://@ACCOUNT@.blob.core.windows.net", credential="@KEY@")
container = blobs.create_container("tutorial")
container.upload_blob("data/hello world.txt", b"hello from the cloud's own URL")
listed = [b.name for b in container.list_blobs()]
sas = generate_blob_sas("@ACCOUNT@", "tutorial", "data/hello world.txt", account_key="@KEY@", permission="r",
                        expiry=datetime.utcnow() + timedelta(hours=1))
url = container.get_blob_client("data/hello world.txt").url
by_sas = BlobClient.from_blob_url(url + "?" + sas).download_blob().readall().decode()
shares = ShareServiceClient(account_url="https://@ACCOUNT@.file.core.windows.net", credential="@KEY@")
share = shares.create_share("batchaiquickstart")
share.create_directory("mnistcntksample").upload_file("ConvNet_MNIST.py", b"print('mnist')\n")
files = [f.name for f in share.list_directories_and_files("mnistcntksample")]
print(json.dumps({"listed": listed, "url": url, "by_sas": by_sas, "files": files,
                  "containers": [c.name for c in blobs.list_containers()]}))
'''

MGMT_PROGRAM = r'''
import json
from azure.identity import ClientSecretCredential
from azure.mgmt.batchai import BatchAI
from azure.mgmt.resource import ResourceManagementClient
credential = ClientSecretCredential("@TENANT@", "@CLIENT_ID@", "@SECRET@")
ResourceManagementClient(credential, "@SUBSCRIPTION@").resource_groups.create_or_update("cloudprogram", {"location": "eastus"})
client = BatchAI(credential, "@SUBSCRIPTION@")
ws = client.workspaces.begin_create("cloudprogram", "ws1", {"location": "eastus"}).result()
token = credential.get_token("https://management.azure.com/.default")
print(json.dumps({"workspace": ws.id, "state": ws.provisioning_state,
                  "listed": [w.name for w in client.workspaces.list_by_resource_group("cloudprogram")],
                  "token": bool(token.token)}))
'''

LEGACY_PROGRAM = r'''
import json, requests
from azure.common.credentials import ServicePrincipalCredentials
from azure.batch import BatchServiceClient
credentials = ServicePrincipalCredentials(client_id="@CLIENT_ID@", secret="@SECRET@", tenant="@TENANT@")
session = credentials.signed_session()
subscriptions = session.get("https://management.azure.com/subscriptions?api-version=2020-01-01").json()
batch_credentials = ServicePrincipalCredentials(client_id="@CLIENT_ID@", secret="@SECRET@", tenant="@TENANT@",
                                                resource="https://batch.core.windows.net/")
batch = BatchServiceClient(batch_credentials, batch_url="@BATCH_URL@")
print(json.dumps({"subscriptions": [s["subscriptionId"] for s in subscriptions["value"]],
                  "pools": [p.id for p in batch.pool.list()]}))
'''

BATCH_PROGRAM = r'''
import json, time
from datetime import datetime, timedelta
from azure.batch import BatchServiceClient
from azure.batch import models as bm
from azure.batch.batch_auth import SharedKeyCredentials
from azure.storage.blob import BlobServiceClient, generate_container_sas
blobs = BlobServiceClient(account_url="https://@ACCOUNT@.blob.core.windows.net", credential="@KEY@")
blobs.create_container("output")
sas = generate_container_sas("@ACCOUNT@", "output", account_key="@KEY@", permission="rwl",
                             expiry=datetime.utcnow() + timedelta(hours=1))
container_url = "https://@ACCOUNT@.blob.core.windows.net/output?" + sas
batch = BatchServiceClient(SharedKeyCredentials("@BATCH_ACCOUNT@", "@BATCH_KEY@"), batch_url="@BATCH_URL@")
image = bm.VirtualMachineConfiguration(
    image_reference=bm.ImageReference(publisher="canonical", offer="0001-com-ubuntu-server-focal", sku="20_04-lts"),
    node_agent_sku_id="batch.node.ubuntu 20.04")
batch.pool.add(bm.PoolAddParameter(id="tutorialpool", vm_size="STANDARD_D1_V2", target_dedicated_nodes=1,
                                   virtual_machine_configuration=image))
batch.job.add(bm.JobAddParameter(id="tutorialjob", pool_info=bm.PoolInformation(pool_id="tutorialpool")))
batch.task.add("tutorialjob", bm.TaskAddParameter(
    id="task1", command_line="/bin/sh -c 'echo trained > model.txt'",
    output_files=[bm.OutputFile(file_pattern="model.txt", destination=bm.OutputFileDestination(
        container=bm.OutputFileBlobContainerDestination(container_url=container_url, path="models/model.txt")),
        upload_options=bm.OutputFileUploadOptions(upload_condition=bm.OutputFileUploadCondition.task_success))]))
deadline = time.time() + 90
while batch.task.get("tutorialjob", "task1").state != bm.TaskState.completed:
    if time.time() > deadline:
        raise SystemExit("the task did not complete")
    time.sleep(0.2)
task = batch.task.get("tutorialjob", "task1")
model = blobs.get_blob_client("output", "models/model.txt").download_blob().readall().decode()
print(json.dumps({"exit_code": task.execution_info.exit_code, "failure": str(task.execution_info.failure_info),
                  "model": model, "task_url": task.url}))
'''


MSAL_PROGRAM = r'''
import json, msal
confidential = msal.ConfidentialClientApplication("@CLIENT_ID@", client_credential="@SECRET@",
                                                 authority="https://login.microsoftonline.com/@TENANT@")
app_token = confidential.acquire_token_for_client(scopes=["https://management.azure.com/.default"])
public = msal.PublicClientApplication("04b07795-8ddb-461a-bbee-02f9e1bf7b46",
                                      authority="https://login.microsoftonline.com/organizations")
flow = public.initiate_device_flow(scopes=["https://management.core.windows.net//.default"])
user = public.acquire_token_by_device_flow(flow)
account = public.get_accounts()[0]
# Silently, for another resource and tenant: MSAL's instance discovery, then the refresh token.
silent = public.acquire_token_silent(["https://batch.core.windows.net//.default"], account=account,
                                     authority="https://login.microsoftonline.com/@TENANT@")
print(json.dumps({"app": "access_token" in app_token, "user": account["username"], "message": flow["message"],
                  "user_token": "access_token" in user, "silent": silent is not None and "access_token" in silent,
                  "error": (user.get("error_description") or (silent or {}).get("error_description"))}))
'''


def fill(program, **values):
    for name, value in values.items():
        program = program.replace(f"@{name}@", value)
    return program


class ProxyFrontDoor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise_descriptor_limit()
        cls.emu = harness.Emulator().start()
        cls.env = bai_env(cls.emu.location)

    @classmethod
    def tearDownClass(cls):
        cls.emu.close()

    def test_bai_env_names_the_proxy_and_a_bundle_with_its_ca(self):
        self.assertEqual(self.env["HTTPS_PROXY"], self.emu.endpoints["proxy"])
        self.assertEqual(self.env["https_proxy"], self.emu.endpoints["proxy"])
        self.assertIn("127.0.0.0/8", self.env["NO_PROXY"])
        for name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"):
            self.assertEqual(self.env[name], self.emu.endpoints["ca_bundle"])
        bundle = open(self.emu.endpoints["ca_bundle"]).read()
        self.assertIn(open(self.emu.endpoints["proxy_ca"]).read(), bundle)
        self.assertIn(open(self.emu.endpoints["ca_cert"]).read().strip(), bundle)
        # The CA's key is the emulator's alone.
        self.assertEqual(os.stat(os.path.join(self.emu.location, "proxy", "ca-key.pem")).st_mode & 0o777, 0o600)

    def test_curl_reaches_arm_and_blob_at_their_cloud_names(self):
        env = dict(os.environ, **self.env)
        arm = subprocess.run(["curl", "-sS", "-H", "Authorization: Bearer x",
                              "https://management.azure.com/subscriptions?api-version=2020-01-01"],
                             capture_output=True, text=True, env=env, timeout=30)
        self.assertEqual(arm.returncode, 0, arm.stderr)
        self.assertEqual(json.loads(arm.stdout)["value"][0]["subscriptionId"], SUBSCRIPTION)
        refused = subprocess.run(["curl", "-sS", "-o", "/dev/null", "https://example.com/"], capture_output=True,
                                 text=True, env=env, timeout=30)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("403", refused.stderr)

    def test_a_storage_program_written_for_the_cloud(self):
        out = run_program(fill(STORAGE_PROGRAM, ACCOUNT=harness.DEV_ACCOUNT, KEY=harness.DEV_KEY), self.env)
        self.assertEqual(out["listed"], ["data/hello world.txt"])
        self.assertEqual(out["url"], f"https://{BLOB_HOST}/tutorial/data/hello%20world.txt")
        self.assertEqual(out["by_sas"], "hello from the cloud's own URL")
        self.assertEqual(out["files"], ["ConvNet_MNIST.py"])
        self.assertIn("tutorial", out["containers"])
        # In the emulator, through its own path-style endpoints.
        from azure.storage.blob import BlobServiceClient
        from azure.storage.fileshare import ShareServiceClient
        direct = harness.connection_string(self.emu.endpoints)
        blob = BlobServiceClient.from_connection_string(direct).get_blob_client("tutorial", "data/hello world.txt")
        self.assertEqual(blob.download_blob().readall(), b"hello from the cloud's own URL")
        f = ShareServiceClient.from_connection_string(direct).get_share_client("batchaiquickstart").get_file_client(
            "mnistcntksample/ConvNet_MNIST.py")
        self.assertEqual(f.download_file().readall(), b"print('mnist')\n")

    def test_a_management_program_signs_in_at_the_public_authority(self):
        out = run_program(fill(MGMT_PROGRAM, TENANT=TENANT, CLIENT_ID=CLIENT_ID, SECRET=SECRET, SUBSCRIPTION=SUBSCRIPTION),
                          self.env)
        self.assertEqual(out["state"], "succeeded")  # as 2018-05-01 writes it
        self.assertEqual(out["listed"], ["ws1"])
        self.assertTrue(out["token"])
        ws = requests.get(f"{self.emu.endpoints['arm']}/subscriptions/{SUBSCRIPTION}/resourceGroups/cloudprogram/providers/"
                          "Microsoft.BatchAI/workspaces/ws1?api-version=2018-05-01", verify=self.emu.endpoints["ca_cert"],
                          headers={"Authorization": "Bearer x"}, timeout=10)
        self.assertEqual((ws.status_code, ws.json()["name"]), (200, "ws1"))

    def test_msal_discovers_the_authority_and_signs_in_an_app_and_the_user(self):
        out = run_program(fill(MSAL_PROGRAM, CLIENT_ID=CLIENT_ID, SECRET=SECRET, TENANT=TENANT), self.env)
        self.assertEqual((out["app"], out["user_token"], out["silent"], out["error"]), (True, True, True, None))
        self.assertEqual(out["user"], "user@batchaiemulator.onmicrosoft.com")
        self.assertIn("nothing to do", out["message"])
        self.assertIn("completed a device-code sign-in", self.emu.stdout())
        # The discovery documents as MSAL (v2) and ADAL (v1) read them.
        proxies, bundle = {"https": self.emu.endpoints["proxy"]}, self.emu.endpoints["ca_bundle"]
        instance = requests.get("https://login.microsoftonline.com/common/discovery/instance?api-version=1.1&"
                                "authorization_endpoint=https://login.microsoftonline.com/common/oauth2/authorize",
                                proxies=proxies, verify=bundle, timeout=10).json()
        self.assertIn("login.windows.net", instance["metadata"][0]["aliases"])
        v2 = requests.get(f"https://login.microsoftonline.com/{TENANT}/v2.0/.well-known/openid-configuration",
                          proxies=proxies, verify=bundle, timeout=10).json()
        self.assertEqual(v2["token_endpoint"], f"https://login.microsoftonline.com/{TENANT}/oauth2/v2.0/token")
        v1 = requests.get(f"https://login.microsoftonline.com/{TENANT}/.well-known/openid-configuration",
                          proxies=proxies, verify=bundle, timeout=10).json()
        self.assertEqual(v1["token_endpoint"], f"https://login.microsoftonline.com/{TENANT}/oauth2/token")
        other = requests.get("https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration",
                             proxies=proxies, verify=bundle, timeout=10)
        self.assertEqual((other.status_code, other.json()["error"]), (400, "invalid_tenant"))
        own = requests.get("https://login.microsoftonline.com/batchaiemulator.onmicrosoft.com/v2.0/.well-known/openid-configuration",
                           proxies=proxies, verify=bundle, timeout=10)
        self.assertEqual(own.status_code, 200)

    def test_the_older_service_principal_credentials_and_a_batch_client_with_a_token(self):
        out = run_program(fill(LEGACY_PROGRAM, TENANT=TENANT, CLIENT_ID=CLIENT_ID, SECRET=SECRET, BATCH_URL=BATCH_URL),
                          self.env)
        self.assertEqual(out["subscriptions"], [SUBSCRIPTION])
        self.assertIsInstance(out["pools"], list)

    def test_a_batch_program_whose_task_writes_to_a_cloud_blob_url(self):
        out = run_program(fill(BATCH_PROGRAM, ACCOUNT=harness.DEV_ACCOUNT, KEY=harness.DEV_KEY, BATCH_ACCOUNT=harness.DEV_BATCH_ACCOUNT,
                               BATCH_KEY=harness.DEV_BATCH_KEY, BATCH_URL=BATCH_URL), self.env)
        self.assertEqual((out["exit_code"], out["failure"]), (0, "None"))
        self.assertEqual(out["model"], "trained\n")
        self.assertEqual(out["task_url"], f"{BATCH_URL}/jobs/tutorialjob/tasks/task1")

    def test_a_plain_http_request_for_a_cloud_host_is_served(self):
        proxies = {"http": self.emu.endpoints["proxy"]}
        r = requests.get(f"http://{BLOB_HOST}/?comp=list", proxies=proxies, timeout=10)
        # Anonymous: the service hides the account's existence, as on the direct endpoint.
        direct = requests.get(f"{self.emu.endpoints['blob']}/{harness.DEV_ACCOUNT}/?comp=list", timeout=10)
        self.assertEqual((r.status_code, r.headers.get("x-ms-error-code")),
                         (direct.status_code, direct.headers.get("x-ms-error-code")))
        other = requests.get("http://example.com/", proxies=proxies, timeout=10)
        self.assertEqual(other.status_code, 403)
        self.assertIn("example.com", other.text)

    # Refusals and bad input: each answered at once, never a hang.

    def test_connect_to_another_host_or_port_is_refused_naming_it(self):
        for authority, status, mention in (("example.com:443", 403, "example.com"),
                                           ("management.azure.com:8443", 403, "port 443"),
                                           ("management.azure.com", 400, "HOST:PORT"),
                                           ("management.azure.com:0", 400, "HOST:PORT"),
                                           ("[::1:443", 400, "HOST:PORT")):
            started = time.monotonic()
            s, (code, head, rest) = connect(self.emu, authority)
            body = read_body(s, rest, head)
            s.close()
            self.assertEqual(code, status, (authority, head))
            self.assertIn(mention, body, authority)
            self.assertIn(authority.split(":")[0] if status == 403 else "HOST:PORT", head.split("\r\n")[0])
            self.assertLess(time.monotonic() - started, 5, authority)

    def test_a_storage_service_the_emulator_lacks_is_answered_in_the_tunnel(self):
        # Refused at the CONNECT, SDKs would retry it as a network failure for a minute and more.
        host = f"{harness.DEV_ACCOUNT}.queue.core.windows.net"
        tls = self.tls_through(f"{host}:443", host)
        tls.sendall(f"GET /?comp=list HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        code, head, rest = read_answer(tls)
        body = read_body(tls, rest, head)
        tls.close()
        self.assertEqual(code, 403)
        self.assertIn("x-ms-error-code: ServiceNotServedHere", head)
        self.assertIn(f"does not serve {host}", body)

    def test_malformed_lines_and_requests_to_the_proxy_itself(self):
        for raw, status in ((b"CONNECT\r\n\r\n", 400), (b"CONNECT a b c HTTP/1.1\r\n\r\n", 400),
                            (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 400), (b"GET https://example.com/ HTTP/1.1\r\n\r\n", 400),
                            (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\0" * 64 + b"\r\n\r\n", 400)):
            s = socket.create_connection(proxy_address(self.emu), timeout=10)
            s.sendall(raw)
            code, head, _ = read_answer(s)
            s.close()
            self.assertEqual(code, status, (raw, head))
        self.assertEqual(requests.get(self.emu.endpoints["proxy"] + "/health", timeout=5).json()["service"], "proxy")

    def tls_through(self, authority, server_hostname):
        s, (code, head, _) = connect(self.emu, authority)
        self.assertEqual(code, 200, head)
        context = ssl.create_default_context(cafile=self.emu.endpoints["proxy_ca"])
        context.check_hostname = False
        return context.wrap_socket(s, server_hostname=server_hostname)

    def test_a_client_hello_without_sni_is_served_the_tunnels_name(self):
        tls = self.tls_through(f"{BLOB_HOST}:443", None)
        cert = tls.getpeercert()
        self.assertEqual(cert["subjectAltName"], (("DNS", BLOB_HOST),))
        tls.sendall(f"GET /?comp=list HTTP/1.1\r\nHost: {BLOB_HOST}\r\n\r\n".encode())
        code, _, _ = read_answer(tls)
        self.assertEqual(code, 404)  # anonymous, as on the direct endpoint
        tls.close()

    def test_a_client_hello_naming_another_host_is_refused(self):
        with self.assertRaises(ssl.SSLError) as refused:
            self.tls_through("management.azure.com:443", BLOB_HOST)
        self.assertIn("UNRECOGNIZED_NAME", str(refused.exception).upper())

    def test_idle_and_trickling_tunnels_are_closed(self):
        results = {}

        def idle():
            s, (code, _, _) = connect(self.emu, "management.azure.com:443", timeout=30)
            started = time.monotonic()
            results["idle"] = (code, s.recv(1), time.monotonic() - started)
            s.close()

        def trickle():
            s, (code, _, _) = connect(self.emu, "management.azure.com:443", timeout=30)
            started = time.monotonic()
            hello = b"\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03" + os.urandom(32)
            closed = False
            try:
                for byte in hello:
                    s.sendall(bytes([byte]))
                    time.sleep(0.5)
                    if time.monotonic() - started > 25:
                        break
            except OSError:
                closed = True
            if not closed:
                try:
                    closed = s.recv(1) == b""
                except OSError:
                    closed = True
            results["trickle"] = (code, closed, time.monotonic() - started)
            s.close()

        threads = [threading.Thread(target=idle), threading.Thread(target=trickle)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        code, first_byte, seconds = results["idle"]
        self.assertEqual((code, first_byte), (200, b""))
        self.assertLess(seconds, 25)
        code, closed, seconds = results["trickle"]
        self.assertEqual((code, closed), (200, True))
        self.assertLess(seconds, 25)

    def test_a_thousand_tunnels_at_once(self):
        sockets = []
        try:
            for _ in range(1000):
                s = socket.create_connection(proxy_address(self.emu), timeout=30)
                s.sendall(f"CONNECT {BLOB_HOST}:443 HTTP/1.1\r\n\r\n".encode())
                sockets.append(s)
            answers = [read_answer(s)[0] for s in sockets]
            self.assertEqual(answers.count(200), 1000, {a: answers.count(a) for a in set(answers)})
            # Past the proxy's 1024 connections, one more is refused at once, not left waiting.
            for _ in range(24):
                s = socket.create_connection(proxy_address(self.emu), timeout=30)
                s.sendall(f"CONNECT {BLOB_HOST}:443 HTTP/1.1\r\n\r\n".encode())
                sockets.append(s)
            self.assertEqual([read_answer(s)[0] for s in sockets[1000:]], [200] * 24)
            started = time.monotonic()
            extra = socket.create_connection(proxy_address(self.emu), timeout=10)
            sockets.append(extra)
            extra.sendall(f"CONNECT {BLOB_HOST}:443 HTTP/1.1\r\n\r\n".encode())
            status, head, _ = read_answer(extra)
            self.assertEqual(status, 503, head)
            self.assertLess(time.monotonic() - started, 5)
            # Some of them go on to TLS and a request while all are open.
            context = ssl.create_default_context(cafile=self.emu.endpoints["proxy_ca"])
            for s in sockets[:20]:
                tls = context.wrap_socket(s, server_hostname=BLOB_HOST)
                tls.sendall(f"GET /?comp=list HTTP/1.1\r\nHost: {BLOB_HOST}\r\n\r\n".encode())
                self.assertEqual(read_answer(tls)[0], 404)
        finally:
            for s in sockets:
                s.close()
        self.assertEqual(requests.get(self.emu.endpoints["proxy"] + "/health", timeout=10).status_code, 200)

    def test_the_cas_name_constraints_hold_for_openssl(self):
        tls = self.tls_through("management.azure.com:443", "management.azure.com")
        leaf = ssl.DER_cert_to_PEM_cert(tls.getpeercert(binary_form=True))
        tls.close()
        work = tempfile.mkdtemp(prefix="bai-ca-")
        leaf_path = os.path.join(work, "leaf.pem")
        open(leaf_path, "w").write(leaf)
        ca = self.emu.endpoints["proxy_ca"]
        ok = subprocess.run(["openssl", "verify", "-x509_strict", "-CAfile", ca, "-verify_hostname", "management.azure.com",
                             leaf_path], capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        wrong = subprocess.run(["openssl", "verify", "-CAfile", ca, "-verify_hostname", "example.com", leaf_path],
                               capture_output=True, text=True)
        self.assertNotEqual(wrong.returncode, 0)
        shown = subprocess.run(["openssl", "x509", "-in", ca, "-noout", "-ext", "nameConstraints,basicConstraints"],
                               capture_output=True, text=True, check=True).stdout
        self.assertIn("critical", shown)
        for name in ("DNS:management.azure.com", "DNS:core.windows.net", "DNS:batch.azure.com",
                     "DNS:login.microsoftonline.com", "IP:127.0.0.0/255.0.0.0"):
            self.assertIn(name, shown)
        # Even the CA's own key cannot make a certificate for another name that a client accepts.
        key = os.path.join(self.emu.location, "proxy", "ca-key.pem")
        forged = os.path.join(work, "forged.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", os.path.join(work, "forged-key.pem"), "-out", forged, "-subj", "/CN=example.com",
                        "-addext", "subjectAltName=DNS:example.com", "-CA", ca, "-CAkey", key, "-days", "1"],
                       capture_output=True, check=True)
        violation = subprocess.run(["openssl", "verify", "-CAfile", ca, forged], capture_output=True, text=True)
        self.assertNotEqual(violation.returncode, 0)
        self.assertIn("subtree", (violation.stdout + violation.stderr).lower())


class StrictAuthThroughTheProxy(unittest.TestCase):
    """Keys, SAS and tokens are checked through the proxy exactly as on the direct endpoints."""

    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator(args=["--strict-auth"]).start()
        cls.env = bai_env(cls.emu.location)
        cls.proxies = {"https": cls.emu.endpoints["proxy"]}
        cls.bundle = cls.emu.endpoints["ca_bundle"]

    @classmethod
    def tearDownClass(cls):
        cls.emu.close()

    def both(self, method, direct_url, cloud_url, **kwargs):
        direct = requests.request(method, direct_url, verify=self.bundle, timeout=10, **kwargs)
        proxied = requests.request(method, cloud_url, proxies=self.proxies, verify=self.bundle, timeout=10, **kwargs)
        return direct, proxied

    def test_arm_refuses_the_same_tokens(self):
        path = "/subscriptions?api-version=2020-01-01"
        for token in ("not-a-token", "a.b.c"):
            d, p = self.both("GET", self.emu.endpoints["arm"] + path, "https://management.azure.com" + path,
                             headers={"Authorization": f"Bearer {token}"})
            self.assertEqual(d.status_code, 401)
            self.assertEqual((p.status_code, p.json()["error"]["code"]), (d.status_code, d.json()["error"]["code"]))
        # The well-known user signs in without a secret: not under --strict-auth, at either door.
        for base in (self.emu.endpoints["arm"], "https://login.microsoftonline.com"):
            flow = requests.post(f"{base}/organizations/oauth2/v2.0/devicecode", verify=self.bundle,
                                 proxies=self.proxies if "microsoftonline" in base else {},
                                 timeout=10, data={"client_id": "04b07795-8ddb-461a-bbee-02f9e1bf7b46",
                                                   "scope": "https://management.azure.com/.default"})
            self.assertEqual((flow.status_code, flow.json()["error"]), (400, "unauthorized_client"), base)
        # A token of the public authority's, through the proxy, is one of the emulator's.
        grant = requests.post(f"https://login.microsoftonline.com/{TENANT}/oauth2/v2.0/token", proxies=self.proxies,
                              verify=self.bundle, timeout=10,
                              data={"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": SECRET,
                                    "scope": "https://management.azure.com/.default"})
        self.assertEqual(grant.status_code, 200, grant.text)
        token = grant.json()["access_token"]
        d, p = self.both("GET", self.emu.endpoints["arm"] + path, "https://management.azure.com" + path,
                         headers={"Authorization": f"Bearer {token}"})
        self.assertEqual((d.status_code, p.status_code), (200, 200))
        wrong = requests.post(f"https://login.microsoftonline.com/{TENANT}/oauth2/v2.0/token", proxies=self.proxies,
                              verify=self.bundle, timeout=10,
                              data={"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": "wrong",
                                    "scope": "https://management.azure.com/.default"})
        self.assertEqual((wrong.status_code, wrong.json()["error"]), (401, "invalid_client"))

    def test_storage_takes_the_sign_in_services_tokens_for_storage_only(self):
        from datetime import datetime, timedelta
        now = datetime.utcnow()
        body = (f"<?xml version='1.0' encoding='utf-8'?><KeyInfo><Start>{now:%Y-%m-%dT%H:%M:%SZ}</Start>"
                f"<Expiry>{now + timedelta(days=1):%Y-%m-%dT%H:%M:%SZ}</Expiry></KeyInfo>")
        direct = f"{self.emu.endpoints['blob']}/{harness.DEV_ACCOUNT}/?restype=service&comp=userdelegationkey"
        cloud = f"https://{BLOB_HOST}/?restype=service&comp=userdelegationkey"
        headers = {"x-ms-version": "2021-06-08", "x-ms-date": "Mon, 07 Dec 2026 00:00:00 GMT"}

        def token(scope):
            grant = requests.post(f"https://login.microsoftonline.com/{TENANT}/oauth2/v2.0/token", proxies=self.proxies,
                                  verify=self.bundle, timeout=10,
                                  data={"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": SECRET,
                                        "scope": scope})
            return grant.json()["access_token"]
        for bearer, status in (("not-a-token", 401), (token("https://management.azure.com/.default"), 401),
                               (token("https://storage.azure.com/.default"), 200)):
            d, p = self.both("POST", direct, cloud, data=body, headers=dict(headers, Authorization=f"Bearer {bearer}"))
            self.assertEqual((d.status_code, p.status_code), (status, status), d.text)

    def test_a_tunnels_requests_name_its_host(self):
        s, (code, head, _) = connect(self.emu, "management.azure.com:443")
        self.assertEqual(code, 200, head)
        tls = ssl.create_default_context(cafile=self.emu.endpoints["proxy_ca"]).wrap_socket(
            s, server_hostname="management.azure.com")
        tls.sendall(f"GET /subscriptions?api-version=2020-01-01 HTTP/1.1\r\nHost: {BLOB_HOST}\r\n\r\n".encode())
        code, head, rest = read_answer(tls)
        self.assertEqual(code, 400, head)
        self.assertIn("is not the tunnel's host", read_body(tls, rest, head))
        tls.close()

    def test_storage_refuses_the_same_keys_and_sas(self):
        from datetime import datetime, timedelta
        from azure.storage.blob import BlobServiceClient, generate_container_sas
        BlobServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints)).create_container("cc1")
        sas = generate_container_sas(harness.DEV_ACCOUNT, "cc1", account_key=harness.DEV_KEY, permission="l",
                                     expiry=datetime.utcnow() + timedelta(hours=1))
        direct = f"{self.emu.endpoints['blob']}/{harness.DEV_ACCOUNT}/cc1?restype=container&comp=list"
        cloud = f"https://{BLOB_HOST}/cc1?restype=container&comp=list"
        for query, status in ((sas, 200), (sas.replace("sig=", "sig=A"), 403), ("", 404)):
            d, p = self.both("GET", direct + "&" + query, cloud + "&" + query)
            self.assertEqual(d.status_code, status, d.text)
            self.assertEqual((p.status_code, p.headers.get("x-ms-error-code")),
                             (d.status_code, d.headers.get("x-ms-error-code")))
        # A key signature made for another account's name is refused alike.
        d, p = self.both("GET", direct, cloud, headers={"x-ms-date": "Mon, 07 Dec 2026 00:00:00 GMT",
                                                         "x-ms-version": "2021-06-08",
                                                         "Authorization": "SharedKey devstoreaccount1:AAAA"})
        self.assertEqual((d.status_code, p.status_code), (403, 403))
        self.assertEqual(p.headers.get("x-ms-error-code"), "AuthenticationFailed")


if __name__ == "__main__":
    unittest.main()
