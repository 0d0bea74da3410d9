"""The real az CLI against the emulator after `bai az-login`: sign-in, subscriptions, locations,
providers, groups, storage accounts and their connection strings, as the Batch AI tutorials run
them; the sign-in service's refusals; azure-identity's ClientSecretCredential against the
emulator's authority, and the tokens' signatures checked with the published keys."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import ssl

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

import harness

DEFAULT_SUBSCRIPTION = "ba1e5ab5-0000-4000-8000-000000000001"
TENANT = "ba1e7e4a-0000-4000-8000-000000000001"
WELL_KNOWN_ID = "ba1eca11-0000-4000-8000-000000000001"
WELL_KNOWN_SECRET = "batchai-emulator-well-known-secret"
OTHER_ID = "0f0f0f0f-1111-4222-8333-444444444444"
OTHER_SECRET = "another~secret.for-the-tests"
CERT_ID = "c1c1c1c1-2222-4333-8444-555555555555"
MANAGEMENT = "https://management.core.windows.net/"


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_parts(token):
    header, payload, signature = token.split(".")
    return json.loads(b64url_decode(header)), json.loads(b64url_decode(payload)), header, payload, signature


class AzCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="bai-az-home-")
        # A principal that signs in with a certificate: az takes the key and the certificate in one file.
        cls.cert_pem = os.path.join(cls.home, "principal.pem")
        cls.stranger_pem = os.path.join(cls.home, "stranger.pem")
        for path in (cls.cert_pem, cls.stranger_pem):
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=emulator-test",
                            "-days", "2", "-keyout", path + ".key", "-out", path + ".crt"], check=True,
                           capture_output=True)
            with open(path, "w") as both, open(path + ".key") as key, open(path + ".crt") as certificate:
                both.write(key.read() + certificate.read())
        cls.emu = harness.Emulator(args=["--service-principal", f"{OTHER_ID}:{OTHER_SECRET}",
                                         "--service-principal-cert", f"{CERT_ID}:{cls.cert_pem}.crt"]).start()
        cls.arm = cls.emu.endpoints["arm"]
        cls.ca = cls.emu.endpoints["ca_cert"]
        cls.env = dict(os.environ, AZURE_CONFIG_DIR=os.path.join(cls.home, "az"), AZURE_CORE_COLLECT_TELEMETRY="no",
                       AZURE_CORE_NO_COLOR="true", BAI_CONFIG_DIR=os.path.join(cls.home, "bai"), HOME=cls.home)
        cls.env.pop("REQUESTS_CA_BUNDLE", None)
        login = cls.bai("az-login")
        assert login.returncode == 0, login.stderr
        cls.login_stdout = login.stdout
        cls.env["REQUESTS_CA_BUNDLE"] = cls.ca

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        shutil.rmtree(cls.home, ignore_errors=True)
        assert code == 0, f"emulator exited with {code}"

    @classmethod
    def bai(cls, *args, env=None):
        return subprocess.run([harness.CLI, "--data-dir", cls.emu.location, *args], capture_output=True, text=True,
                              env=env or cls.env, timeout=300)

    def az(self, *args, ok=True, env=None):
        result = harness.az(args, env=env or self.env, cwd=self.home)
        if ok:
            self.assertEqual(result.returncode, 0, f"az {' '.join(args)}\n{result.stdout}\n{result.stderr}")
        return result

    def az_json(self, *args):
        return json.loads(self.az(*args, "-o", "json").stdout)

    def separate_config(self):
        """An environment with a config directory of its own (a sign-in there leaves the class's alone)."""
        env = dict(self.env, AZURE_CONFIG_DIR=tempfile.mkdtemp(prefix="bai-az-other-", dir=self.home))
        return env

    def test_the_fork_server_answers_as_the_az_program_does(self):
        """harness.az (az_fork_server) against `az` itself: the same exit status, output and errors,
        for a success, a table, a query, a refusal and an unknown command."""
        for args in (["group", "list", "-o", "json"], ["account", "show", "-o", "table"],
                     ["account", "show", "--query", "user.name", "-o", "tsv"], ["group", "show", "-n", "missing-group"],
                     ["no-such-command"]):
            program = subprocess.run(["az", *args], capture_output=True, text=True, env=self.env, cwd=self.home,
                                     timeout=300, stdin=subprocess.DEVNULL)
            forked = harness.az(args, env=self.env, cwd=self.home)
            self.assertEqual((forked.returncode, forked.stdout, forked.stderr),
                             (program.returncode, program.stdout, program.stderr), " ".join(args))

    def test_az_login_prints_the_trust_line_and_signs_in(self):
        # The emulator's trust bundle: the system's CAs, the proxy's and the ARM endpoint's certificate.
        bundle = self.emu.endpoints["ca_bundle"]
        self.assertEqual(self.login_stdout.strip(), f"export REQUESTS_CA_BUNDLE={bundle}")
        self.assertIn(open(self.ca).read().strip(), open(bundle).read())
        account = self.az_json("account", "show")
        self.assertEqual((account["id"], account["environmentName"], account["user"]),
                         (DEFAULT_SUBSCRIPTION, "BatchAIEmulator", {"name": WELL_KNOWN_ID, "type": "servicePrincipal"}))
        self.assertEqual(account["homeTenantId"], TENANT)
        listed = self.az_json("account", "list")
        self.assertEqual([s["id"] for s in listed], [DEFAULT_SUBSCRIPTION])
        self.az("account", "set", "-s", DEFAULT_SUBSCRIPTION)
        locations = {l["name"]: l for l in self.az_json("account", "list-locations")}
        self.assertEqual(locations["eastus"]["displayName"], "East US")
        self.assertIn("westeurope", locations)
        # Run again it updates the cloud instead of failing on it.
        self.assertEqual(self.bai("az-login").returncode, 0)

    def test_tutorial_prelude(self):
        """The first Batch AI tutorial's az steps, verbatim but for names."""
        self.az("provider", "register", "-n", "Microsoft.BatchAI")
        state = None
        for _ in range(50):
            state = self.az("provider", "show", "-n", "Microsoft.BatchAI", "--query", "registrationState", "-o",
                            "tsv").stdout.strip()
            if state == "Registered":
                break
            self.assertEqual(state, "Registering")
            time.sleep(0.1)
        self.assertEqual(state, "Registered")
        table = self.az("provider", "show", "-n", "Microsoft.BatchAI", "-o", "table").stdout
        self.assertIn("Microsoft.BatchAI", table)
        types = {t["resourceType"]: t for t in self.az_json("provider", "show", "-n", "Microsoft.BatchAI")["resourceTypes"]}
        self.assertIn("2018-05-01", types["workspaces"]["apiVersions"])
        self.assertEqual(self.az_json("group", "create", "-n", "batchai.recipes", "-l", "eastus")["properties"],
                         {"provisioningState": "Succeeded"})
        self.az("configure", "--defaults", "group=batchai.recipes", "location=eastus")
        account = self.az_json("storage", "account", "create", "--name", "tutorialstore", "--sku", "Standard_LRS")
        self.assertEqual((account["name"], account["resourceGroup"], account["location"]),
                         ("tutorialstore", "batchai.recipes", "eastus"))
        self.assertTrue(account["primaryEndpoints"]["file"].startswith(self.emu.endpoints["file"]))
        key = self.az("storage", "account", "keys", "list", "--account-name", "tutorialstore", "-o", "tsv", "--query",
                      "[0].value").stdout.strip()
        self.assertEqual(len(base64.b64decode(key)), 64)
        connection = self.az("storage", "account", "show-connection-string", "-n", "tutorialstore", "-o",
                             "tsv").stdout.strip()
        self.assertIn(f"AccountKey={key}", connection)
        self.assertIn(f"FileEndpoint={self.emu.endpoints['file']}/tutorialstore", connection)
        # az storage with that connection string reaches the emulator's File service.
        local = os.path.join(self.home, "train.py")
        with open(local, "w") as f:
            f.write("print('training')\n")
        self.az("storage", "share", "create", "-n", "logs", "--connection-string", connection)
        self.az("storage", "directory", "create", "-s", "logs", "-n", "scripts", "--connection-string", connection)
        self.az("storage", "file", "upload", "-s", "logs", "--source", local, "-p", "scripts/train.py",
                "--connection-string", connection)
        back = os.path.join(self.home, "back.py")
        self.az("storage", "file", "download", "-s", "logs", "-p", "scripts/train.py", "--dest", back,
                "--connection-string", connection)
        with open(back) as f:
            self.assertEqual(f.read(), "print('training')\n")
        # bai (the az batchai commands) takes az's defaults and shares its subscription.
        created = self.bai("workspace", "create", "-n", "ws")
        self.assertEqual(created.returncode, 0, created.stderr)
        self.assertEqual(json.loads(created.stdout)["id"],
                         f"/subscriptions/{DEFAULT_SUBSCRIPTION}/resourceGroups/batchai.recipes/providers/"
                         "Microsoft.BatchAI/workspaces/ws")
        self.assertEqual(self.az("group", "exists", "-n", "batchai.recipes").stdout.strip(), "true")
        self.az("group", "delete", "-n", "batchai.recipes", "-y")
        self.assertEqual(self.az("group", "exists", "-n", "batchai.recipes").stdout.strip(), "false")
        gone = self.az("storage", "account", "show", "-n", "tutorialstore", "-g", "batchai.recipes", ok=False)
        self.assertNotEqual(gone.returncode, 0)

    def test_groups_and_storage_accounts(self):
        self.az("group", "create", "-n", "tagged", "-l", "westus2", "--tags", "env=dev", "-o", "none")
        self.az("group", "create", "-n", "plain", "-l", "westus2", "-o", "none")
        self.assertEqual([g["name"] for g in self.az_json("group", "list", "--tag", "env=dev")], ["tagged"])
        self.assertEqual(self.az_json("group", "update", "-n", "tagged", "--set", "tags.owner=me")["tags"],
                         {"env": "dev", "owner": "me"})
        self.az("group", "wait", "--created", "-n", "plain")
        account = self.az_json("storage", "account", "create", "-n", "lifecycle", "-g", "plain", "--sku",
                               "Standard_LRS")
        self.assertEqual(account["sku"]["name"], "Standard_LRS")
        updated = self.az_json("storage", "account", "update", "-n", "lifecycle", "-g", "plain", "--tags", "a=1",
                               "--sku", "Standard_GRS", "--min-tls-version", "TLS1_2")
        self.assertEqual((updated["tags"], updated["sku"]["name"], updated["minimumTlsVersion"]),
                         ({"a": "1"}, "Standard_GRS", "TLS1_2"))
        self.assertEqual(self.az_json("storage", "account", "show", "-n", "lifecycle", "-g", "plain")["tags"], {"a": "1"})
        bad = self.az("storage", "account", "update", "-n", "lifecycle", "-g", "plain", "--sku", "Nope_LRS", ok=False)
        self.assertNotEqual(bad.returncode, 0)
        # A renewed key works at once and the old one stops, on the File service.
        old = self.az("storage", "account", "show-connection-string", "-n", "lifecycle", "-g", "plain", "-o",
                      "tsv").stdout.strip()
        self.az("storage", "share", "create", "-n", "before", "--connection-string", old)
        self.az("storage", "account", "keys", "renew", "-n", "lifecycle", "-g", "plain", "--key", "key1", "-o", "none")
        new = self.az("storage", "account", "show-connection-string", "-n", "lifecycle", "-g", "plain", "-o",
                      "tsv").stdout.strip()
        self.assertNotEqual(old, new)
        refused = self.az("storage", "share", "list", "--connection-string", old, ok=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertEqual([s["name"] for s in json.loads(self.az("storage", "share", "list", "--connection-string", new,
                                                                "-o", "json").stdout)], ["before"])
        self.assertFalse(self.az_json("storage", "account", "check-name", "-n", "lifecycle")["nameAvailable"])
        self.az("storage", "account", "delete", "-n", "lifecycle", "-g", "plain", "-y")
        self.assertTrue(self.az_json("storage", "account", "check-name", "-n", "lifecycle")["nameAvailable"])
        self.az("group", "delete", "-n", "tagged", "-y", "--no-wait")
        self.az("group", "wait", "--deleted", "-n", "tagged")
        self.assertEqual(self.az("group", "exists", "-n", "tagged").stdout.strip(), "false")

    def test_blob_versioning_through_blob_service_properties(self):
        """az storage account blob-service-properties: versioning off by default, turned on with
        soft delete; then the account's blobs keep their versions (az storage blob list
        --include v)."""
        self.az("group", "create", "-n", "versioned", "-l", "westus2", "-o", "none")
        self.az("storage", "account", "create", "-n", "versionstore", "-g", "versioned", "-o", "none")
        shown = self.az_json("storage", "account", "blob-service-properties", "show", "-n", "versionstore",
                             "-g", "versioned")
        self.assertIn(shown["isVersioningEnabled"], (None, False))
        self.assertFalse(shown["deleteRetentionPolicy"]["enabled"])
        updated = self.az_json("storage", "account", "blob-service-properties", "update", "-n", "versionstore",
                               "-g", "versioned", "--enable-versioning", "true", "--enable-delete-retention", "true",
                               "--delete-retention-days", "5", "--enable-container-delete-retention", "true",
                               "--container-delete-retention-days", "3")
        self.assertTrue(updated["isVersioningEnabled"])
        self.assertEqual((updated["deleteRetentionPolicy"]["days"], updated["containerDeleteRetentionPolicy"]["days"]),
                         (5, 3))
        self.assertEqual(self.az("storage", "account", "blob-service-properties", "show", "-n", "versionstore", "-g",
                                 "versioned", "--query", "isVersioningEnabled", "-o", "tsv").stdout.strip(), "true")
        bad = self.az("storage", "account", "blob-service-properties", "update", "-n", "versionstore", "-g",
                      "versioned", "--enable-delete-retention", "true", "--delete-retention-days", "0", ok=False)
        self.assertNotEqual(bad.returncode, 0)
        connection = self.az("storage", "account", "show-connection-string", "-n", "versionstore", "-g", "versioned",
                             "-o", "tsv").stdout.strip()
        path = os.path.join(self.home, "versioned.txt")
        for text in ("one", "two"):
            with open(path, "w") as f:
                f.write(text)
            self.az("storage", "container", "create", "-n", "docs", "--connection-string", connection, "-o", "none")
            self.az("storage", "blob", "upload", "-c", "docs", "-n", "a.txt", "-f", path, "--overwrite",
                    "--connection-string", connection, "-o", "none")
        listed = json.loads(self.az("storage", "blob", "list", "-c", "docs", "--include", "v", "--connection-string",
                                    connection, "-o", "json").stdout)
        self.assertEqual([(b["name"], b.get("isCurrentVersion")) for b in listed],
                         [("a.txt", None), ("a.txt", True)])
        # Container soft delete (on above, 3 days): az storage container delete keeps it, list
        # --include-deleted shows it, az storage container restore brings it back with its blobs.
        self.az("storage", "container", "delete", "-n", "docs", "--connection-string", connection, "-o", "none")
        deleted = [c for c in json.loads(self.az("storage", "container", "list", "--include-deleted",
                                                 "--connection-string", connection, "-o", "json").stdout)
                   if c["name"] == "docs"]
        self.assertEqual([(c["deleted"], len(c["version"])) for c in deleted], [(True, 16)])
        self.az("storage", "container", "restore", "-n", "docs", "--deleted-version", deleted[0]["version"],
                "--connection-string", connection, "-o", "none")
        restored = json.loads(self.az("storage", "blob", "list", "-c", "docs", "--connection-string", connection,
                                      "-o", "json").stdout)
        self.assertEqual([b["name"] for b in restored], ["a.txt"])
        self.az("storage", "account", "delete", "-n", "versionstore", "-g", "versioned", "-y")

    def test_batch_accounts(self):
        batch = self.emu.endpoints["batch"]
        self.az("group", "create", "-n", "batchgroup", "-l", "eastus", "-o", "none")
        self.az("storage", "account", "create", "-n", "batchstore", "-g", "batchgroup", "--sku", "Standard_LRS", "-o",
                "none")
        account = self.az_json("batch", "account", "create", "-n", "mybatch", "-g", "batchgroup", "-l", "eastus",
                               "--storage-account", "batchstore")
        # The cloud's accountEndpoint is the account's own host; here the shared endpoint and the account.
        self.assertEqual(account["accountEndpoint"], batch.split("://", 1)[1] + "/mybatch")
        self.assertTrue(account["autoStorage"]["storageAccountId"].endswith("/storageAccounts/batchstore"))
        self.assertEqual(self.az_json("batch", "account", "show", "-n", "mybatch", "-g", "batchgroup")["provisioningState"],
                         "Succeeded")
        self.assertEqual([a["name"] for a in self.az_json("batch", "account", "list")], ["mybatch"])
        # A PUT of the same account updates it; the name of another account is taken.
        self.az("batch", "account", "create", "-n", "mybatch", "-g", "batchgroup", "-l", "eastus", "-o", "none")
        taken = self.az("batch", "account", "create", "-n", "devbatchaccount1", "-g", "batchgroup", "-l", "eastus",
                        ok=False)
        self.assertIn("AccountNameAlreadyExists", taken.stderr)
        self.assertEqual(self.az_json("batch", "location", "quotas", "show", "-l", "eastus"), {"accountQuota": 1000})
        keys = self.az_json("batch", "account", "keys", "list", "-n", "mybatch", "-g", "batchgroup")
        self.assertEqual(keys["accountName"], "mybatch")
        # az batch account login with the key: later commands need no account flags, and go over
        # HTTPS to https://HOST:PORT/mybatch/ (the endpoint takes the account off the path).
        shown = self.az_json("batch", "account", "login", "-n", "mybatch", "-g", "batchgroup", "--shared-key-auth",
                             "--show")
        self.assertEqual((shown["endpoint"], shown["primaryKey"]),
                         ("https://" + account["accountEndpoint"] + "/", keys["primary"]))
        self.az("batch", "pool", "create", "--id", "p1", "--vm-size", "standard_d2s_v3", "--image",
                "canonical:0001-com-ubuntu-server-focal:20_04-lts", "--node-agent-sku-id", "batch.node.ubuntu 20.04",
                "--target-dedicated-nodes", "0")
        pools = self.az_json("batch", "pool", "list")
        self.assertEqual([p["id"] for p in pools], ["p1"])
        self.assertEqual(pools[0]["url"], "https://" + account["accountEndpoint"] + "/pools/p1")
        # The pool is the account's: the plain endpoint signed with the account's key lists it too.
        endpoint = ["--account-name", "mybatch", "--account-endpoint", batch]
        self.assertEqual([p["id"] for p in self.az_json("batch", "pool", "list", *endpoint, "--account-key",
                                                        keys["primary"])], ["p1"])
        # A renewed key works at once, the old one (kept by the login) stops, the other one keeps working.
        self.az("batch", "account", "keys", "renew", "-n", "mybatch", "-g", "batchgroup", "--key-name", "Primary",
                "-o", "none")
        refused = self.az("batch", "pool", "list", ok=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("Server failed to authenticate the request", refused.stderr)
        for key in (self.az_json("batch", "account", "keys", "list", "-n", "mybatch", "-g", "batchgroup")["primary"],
                    keys["secondary"]):
            self.assertEqual([p["id"] for p in self.az_json("batch", "pool", "list", *endpoint, "--account-key", key)],
                             ["p1"])
        # az batch account login with the sign-in's token (Microsoft Entra ID mode): the token is for
        # Batch, and the account comes from the endpoint's path.
        token = self.az_json("batch", "account", "login", "-n", "mybatch", "-g", "batchgroup", "--show")
        self.assertEqual((token["tokenType"], token["resource"]), ("Bearer", "https://batch.core.windows.net/"))
        self.assertEqual(jwt_parts(token["accessToken"])[1]["aud"], "https://batch.core.windows.net/")
        self.az("batch", "job", "create", "--id", "j1", "--pool-id", "p1")
        self.assertEqual([j["id"] for j in self.az_json("batch", "job", "list")], ["j1"])
        self.assertEqual([p["id"] for p in self.az_json("batch", "pool", "list")], ["p1"])
        self.az("batch", "account", "delete", "-n", "mybatch", "-g", "batchgroup", "-y")
        self.assertNotEqual(self.az("batch", "pool", "list", ok=False).returncode, 0)
        # devbatchaccount1 is the endpoint's own, not an ARM resource: there is nothing to log in to.
        self.assertNotEqual(self.az("batch", "account", "login", "-n", "devbatchaccount1", "-g", "batchgroup",
                                    ok=False).returncode, 0)
        gone = self.az("batch", "pool", "list", *endpoint, "--account-key", keys["secondary"], ok=False)
        self.assertIn("Server failed to authenticate the request", gone.stderr)
        # An account goes with its group too.
        self.az("batch", "account", "create", "-n", "groupedbatch", "-g", "batchgroup", "-l", "eastus", "-o", "none")
        grouped = self.az_json("batch", "account", "keys", "list", "-n", "groupedbatch", "-g", "batchgroup")["primary"]
        self.az("group", "delete", "-n", "batchgroup", "-y")
        gone = self.az("batch", "pool", "list", "--account-name", "groupedbatch", "--account-endpoint", batch,
                       "--account-key", grouped, ok=False)
        self.assertIn("Server failed to authenticate the request", gone.stderr)

    def test_providers_register_and_unregister(self):
        listed = {p["namespace"]: p["registrationState"] for p in self.az_json("provider", "list")}
        self.assertEqual(set(listed), {"Microsoft.BatchAI", "Microsoft.Batch", "Microsoft.Storage", "Microsoft.Network",
                                       "Microsoft.Resources"})
        self.assertEqual(listed["Microsoft.Resources"], "Registered")
        self.az("provider", "register", "-n", "Microsoft.Batch", "--wait")
        self.assertEqual(self.az_json("provider", "show", "-n", "Microsoft.Batch")["registrationState"], "Registered")
        self.az("provider", "unregister", "-n", "Microsoft.Batch", "--wait")
        self.assertEqual(self.az_json("provider", "show", "-n", "Microsoft.Batch")["registrationState"], "Unregistered")
        unknown = self.az("provider", "show", "-n", "Microsoft.Nothing", ok=False)
        self.assertNotEqual(unknown.returncode, 0)
        self.assertIn("InvalidResourceNamespace", unknown.stderr)

    def test_sign_in_refusals_are_the_sign_in_services(self):
        env = self.separate_config()
        self.az("cloud", "register", "-n", "Emu", "--endpoint-resource-manager", self.arm + "/",
                "--endpoint-active-directory", self.arm, "--endpoint-active-directory-resource-id", MANAGEMENT,
                "--endpoint-active-directory-graph-resource-id", "https://graph.windows.net/", env=env)
        self.az("cloud", "set", "-n", "Emu", env=env)
        wrong = self.az("login", "--service-principal", "-u", WELL_KNOWN_ID, "-p", "wrong", "--tenant", "adfs",
                        ok=False, env=env)
        self.assertNotEqual(wrong.returncode, 0)
        self.assertIn("AADSTS7000215: Invalid client secret provided", wrong.stderr)
        unknown = self.az("login", "--service-principal", "-u", "12345678-1234-4234-8234-123456789012", "-p", "x",
                          "--tenant", "adfs", ok=False, env=env)
        self.assertIn("AADSTS700016", unknown.stderr)
        # A principal given with --service-principal signs in with its own secret.
        self.az("login", "--service-principal", "-u", OTHER_ID, "-p", OTHER_SECRET, "--tenant", "adfs", env=env)
        self.assertEqual(json.loads(self.az("account", "show", "-o", "json", env=env).stdout)["user"]["name"], OTHER_ID)

    def test_a_certificate_signs_in(self):
        """az login -p CERT.pem and azure-identity's CertificateCredential: MSAL's client assertion."""
        from azure.core.exceptions import ClientAuthenticationError
        from azure.identity import CertificateCredential
        env = self.separate_config()
        self.assertEqual(self.bai("az-login", env=env).returncode, 0)
        self.az("login", "--service-principal", "-u", CERT_ID, "-p", self.cert_pem, "--tenant", "adfs", env=env)
        self.assertEqual(json.loads(self.az("account", "show", "-o", "json", env=env).stdout)["user"]["name"], CERT_ID)
        self.az("group", "create", "-n", "by-certificate", "-l", "eastus", "-o", "none", env=env)
        # Another certificate's key does not sign for the principal.
        wrong = self.az("login", "--service-principal", "-u", CERT_ID, "-p", self.stranger_pem, "--tenant", "adfs",
                        ok=False, env=env)
        self.assertNotEqual(wrong.returncode, 0)
        self.assertIn("AADSTS700027", wrong.stderr)
        credential = CertificateCredential("adfs", CERT_ID, certificate_path=self.cert_pem, authority=self.arm,
                                           connection_verify=self.ca)
        claims = jwt_parts(credential.get_token(MANAGEMENT + "/.default").token)[1]
        self.assertEqual((claims["appid"], claims["aud"]), (CERT_ID, MANAGEMENT))
        stranger = CertificateCredential("adfs", CERT_ID, certificate_path=self.stranger_pem, authority=self.arm,
                                         connection_verify=self.ca)
        with self.assertRaises(ClientAuthenticationError) as caught:
            stranger.get_token(MANAGEMENT + "/.default")
        self.assertIn("AADSTS700027", str(caught.exception))

    def post_token(self, tenant, fields):
        context = ssl.create_default_context(cafile=self.ca)
        request = urllib.request.Request(f"{self.arm}/{tenant}/oauth2/token",
                                         data=urllib.parse.urlencode(fields).encode(), method="POST",
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def get_json(self, path):
        context = ssl.create_default_context(cafile=self.ca)
        with urllib.request.urlopen(self.arm + path, context=context, timeout=10) as r:
            return json.loads(r.read())

    def test_token_endpoint_bad_requests(self):
        good = {"grant_type": "client_credentials", "client_id": WELL_KNOWN_ID, "client_secret": WELL_KNOWN_SECRET,
                "scope": MANAGEMENT + "/.default"}
        for tenant, change, status, error, code in (
                ("adfs", {"grant_type": "password"}, 400, "unsupported_grant_type", 70003),
                ("adfs", {"client_id": ""}, 400, "invalid_request", 900144),
                ("adfs", {"scope": MANAGEMENT}, 400, "invalid_scope", 1002012),
                ("adfs", {"client_secret": ""}, 401, "invalid_client", 7000218),
                ("no-such-tenant", {}, 400, "invalid_tenant", 90002)):
            got_status, body = self.post_token(tenant, {**good, **change})
            self.assertEqual((got_status, body["error"], body["error_codes"]), (status, error, [code]), (change, body))
            self.assertTrue(body["error_description"].startswith(f"AADSTS{code}: "), body)
        self.assertIn("'client_id'", self.post_token("adfs", {**good, "client_id": ""})[1]["error_description"])
        # A v1 client names the resource instead of a scope.
        v1 = dict(good)
        del v1["scope"]
        status, body = self.post_token(TENANT, {**v1, "resource": "https://batch.core.windows.net/"})
        self.assertEqual(status, 200, body)
        self.assertEqual(jwt_parts(body["access_token"])[1]["aud"], "https://batch.core.windows.net/")

    def test_client_secret_credential_gets_a_signed_token(self):
        from azure.core.exceptions import ClientAuthenticationError
        from azure.identity import ClientSecretCredential
        credential = ClientSecretCredential("adfs", WELL_KNOWN_ID, WELL_KNOWN_SECRET, authority=self.arm,
                                            connection_verify=self.ca)
        token = credential.get_token(MANAGEMENT + "/.default")
        self.assertGreater(token.expires_on, time.time() + 3000)
        header, claims, head64, body64, signature = jwt_parts(token.token)
        self.assertEqual(header["alg"], "RS256")
        self.assertEqual((claims["aud"], claims["appid"], claims["tid"], claims["idtyp"]),
                         (MANAGEMENT, WELL_KNOWN_ID, TENANT, "app"))
        self.assertEqual(claims["sub"], claims["oid"])
        self.assertLessEqual(claims["nbf"], time.time() + 5)
        # The signature checks out with the key the configuration's jwks_uri publishes (and with no other).
        configuration = self.get_json("/adfs/.well-known/openid-configuration")
        self.assertEqual(configuration["token_endpoint"], f"{self.arm}/adfs/oauth2/token")
        keys = self.get_json(urllib.parse.urlparse(configuration["jwks_uri"]).path)["keys"]
        key = next(k for k in keys if k["kid"] == header["kid"])
        public = rsa.RSAPublicNumbers(int.from_bytes(b64url_decode(key["e"]), "big"),
                                      int.from_bytes(b64url_decode(key["n"]), "big")).public_key()
        public.verify(b64url_decode(signature), f"{head64}.{body64}".encode(), padding.PKCS1v15(), hashes.SHA256())
        with self.assertRaises(Exception):
            public.verify(b64url_decode(signature), f"{head64}.{body64}x".encode(), padding.PKCS1v15(), hashes.SHA256())
        bad = ClientSecretCredential("adfs", WELL_KNOWN_ID, "wrong", authority=self.arm, connection_verify=self.ca)
        with self.assertRaises(ClientAuthenticationError) as caught:
            bad.get_token(MANAGEMENT + "/.default")
        self.assertIn("AADSTS7000215", str(caught.exception))

    def test_az_logout_makes_azure_cloud_active_again(self):
        env = self.separate_config()
        self.assertEqual(self.bai("az-login", env=env).returncode, 0)
        self.assertEqual(self.az("cloud", "show", "--query", "name", "-o", "tsv", env=env).stdout.strip(),
                         "BatchAIEmulator")
        logout = self.bai("az-logout", env=env)
        self.assertEqual(logout.returncode, 0, logout.stderr)
        self.assertEqual(self.az("cloud", "show", "--query", "name", "-o", "tsv", env=env).stdout.strip(), "AzureCloud")
        bad = self.bai("az-login", "--service-principal", "not-a-guid:x", env=env)
        self.assertEqual(bad.returncode, 2, bad.stderr)



def sign_rs256(private_pem_path, header, claims):
    """A JWT signed with the PEM key at `private_pem_path` (the test owns the emulator's data directory)."""
    from cryptography.hazmat.primitives import serialization
    with open(private_pem_path, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    encode = lambda part: base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()
    signing_input = f"{encode(header)}.{encode(claims)}"
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


class StrictAuth(unittest.TestCase):
    """--strict-auth: ARM and Batch take only the sign-in service's unexpired tokens for themselves."""

    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator(args=["--strict-auth"]).start()
        cls.arm = cls.emu.endpoints["arm"]
        cls.context = ssl.create_default_context(cafile=cls.emu.endpoints["ca_cert"])

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert code == 0, f"emulator exited with {code}"

    def token(self, audience):
        from azure.identity import ClientSecretCredential
        credential = ClientSecretCredential("adfs", WELL_KNOWN_ID, WELL_KNOWN_SECRET, authority=self.arm,
                                            connection_verify=self.emu.endpoints["ca_cert"])
        return credential.get_token(audience + "/.default").token

    def get(self, token):
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        request = urllib.request.Request(f"{self.arm}/subscriptions?api-version=2020-01-01", headers=headers)
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=10) as r:
                return r.status, json.loads(r.read()), r.headers
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read()), e.headers

    def assert_refused(self, token, code):
        status, body, headers = self.get(token)
        self.assertEqual((status, body["error"]["code"]), (401, code), body)
        self.assertIn('error="invalid_token"', headers["WWW-Authenticate"])
        return body["error"]["message"]

    def test_only_the_emulators_unexpired_management_tokens_pass(self):
        status, body, _ = self.get(self.token(MANAGEMENT))
        self.assertEqual((status, [s["subscriptionId"] for s in body["value"]]), (200, [DEFAULT_SUBSCRIPTION]))
        self.assertEqual(self.get("https://management.azure.com/")[0], 401)  # not a token68 string
        self.assert_refused("anything-at-all", "InvalidAuthenticationToken")
        message = self.assert_refused(self.token("https://batch.core.windows.net"), "InvalidAuthenticationTokenAudience")
        self.assertIn("'https://batch.core.windows.net'", message)
        key_path = os.path.join(self.emu.location, "identity", "signing-key.pem")
        now = int(time.time())
        claims = {"aud": MANAGEMENT, "iss": f"{self.arm}/adfs", "appid": WELL_KNOWN_ID, "tid": TENANT,
                  "iat": now - 7200, "nbf": now - 7200, "exp": now - 3600}
        message = self.assert_refused(sign_rs256(key_path, {"alg": "RS256", "typ": "JWT"}, claims),
                                      "ExpiredAuthenticationToken")
        self.assertRegex(message, r"^The access token expiry UTC time '\d+/\d+/\d{4} \d+:\d\d:\d\d [AP]M' is earlier")
        # The same claims, unexpired, pass; signed by another key, or with no signature, they do not.
        fresh = dict(claims, exp=now + 600)
        self.assertEqual(self.get(sign_rs256(key_path, {"alg": "RS256", "typ": "JWT"}, fresh))[0], 200)
        other_key = os.path.join(tempfile.mkdtemp(prefix="bai-other-key-"), "key.pem")
        subprocess.run(["openssl", "genrsa", "-out", other_key, "2048"], check=True, capture_output=True)
        self.assert_refused(sign_rs256(other_key, {"alg": "RS256", "typ": "JWT"}, fresh), "InvalidAuthenticationToken")
        unsigned = ".".join(base64.urlsafe_b64encode(json.dumps(p).encode()).rstrip(b"=").decode()
                            for p in ({"alg": "none", "typ": "JWT"}, fresh)) + ".x"
        self.assert_refused(unsigned, "InvalidAuthenticationToken")
        status, body, _ = self.get(None)
        self.assertEqual((status, body["error"]["code"]), (401, "AuthenticationFailed"))

    def batch_get(self, token, account="devbatchaccount1"):
        """GET /pools on the Batch endpoint over HTTPS, the account in the path, with a bearer token."""
        base = self.emu.endpoints["batch"].replace("http://", "https://", 1)
        path = f"/{account}/pools" if account else "/pools"
        request = urllib.request.Request(f"{base}{path}?api-version=2022-10-01.16.0",
                                         headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def assert_batch_refused(self, token, detail, account="devbatchaccount1"):
        status, body = self.batch_get(token, account)
        self.assertEqual((status, body["code"]), (401, "AuthenticationFailed"), body)
        values = {v["key"]: v["value"] for v in body["values"]}
        self.assertIn(detail, values["AuthenticationErrorDetail"])

    def test_batch_takes_only_the_emulators_unexpired_batch_tokens(self):
        from azure.batch import BatchServiceClient
        from azure.batch.batch_auth import SharedKeyCredentials
        status, body = self.batch_get(self.token("https://batch.core.windows.net/"))
        self.assertEqual((status, body["value"]), (200, []), body)
        self.assert_batch_refused(self.token(MANAGEMENT), "obtained from wrong audience or resource "
                                                          f"'{MANAGEMENT}'")
        self.assert_batch_refused("anything-at-all", "Signature validation failed")
        key_path = os.path.join(self.emu.location, "identity", "signing-key.pem")
        now = int(time.time())
        expired = {"aud": "https://batch.core.windows.net/", "iss": f"{self.arm}/adfs", "appid": WELL_KNOWN_ID,
                   "tid": TENANT, "iat": now - 7200, "nbf": now - 7200, "exp": now - 3600}
        self.assert_batch_refused(sign_rs256(key_path, {"alg": "RS256", "typ": "JWT"}, expired), "token is expired")
        # A valid token still needs the account in the path: the endpoint serves every account.
        self.assert_batch_refused(self.token("https://batch.core.windows.net/"), "does not name the Batch account",
                                  account=None)
        # SharedKey is unchanged by --strict-auth, over HTTPS with the account in the path too.
        client = BatchServiceClient(SharedKeyCredentials("devbatchaccount1", harness.DEV_BATCH_KEY),
                                    batch_url=self.emu.endpoints["batch"].replace("http://", "https://", 1) +
                                    "/devbatchaccount1")
        client.config.connection.verify = self.emu.endpoints["ca_cert"]
        self.assertEqual(list(client.pool.list()), [])

    def test_az_works_under_strict_auth(self):
        home = tempfile.mkdtemp(prefix="bai-az-strict-")
        env = dict(os.environ, AZURE_CONFIG_DIR=os.path.join(home, "az"), AZURE_CORE_COLLECT_TELEMETRY="no",
                   BAI_CONFIG_DIR=os.path.join(home, "bai"), HOME=home)
        env.pop("REQUESTS_CA_BUNDLE", None)
        login = subprocess.run([harness.CLI, "--data-dir", self.emu.location, "az-login"], capture_output=True,
                               text=True, env=env, timeout=300)
        self.assertEqual(login.returncode, 0, login.stderr)
        env["REQUESTS_CA_BUNDLE"] = self.emu.endpoints["ca_cert"]
        group = harness.az(["group", "create", "-n", "strict", "-l", "eastus", "-o", "json"], env=env)
        self.assertEqual(group.returncode, 0, group.stderr)
        self.assertEqual(json.loads(group.stdout)["name"], "strict")
        # The Batch endpoint checks az's token for Batch too.
        for args in (["batch", "account", "create", "-n", "strictbatch", "-g", "strict", "-l", "eastus", "-o", "none"],
                     ["batch", "account", "login", "-n", "strictbatch", "-g", "strict"],
                     ["batch", "job", "create", "--id", "strict-job", "--pool-id", "nowhere"]):
            done = harness.az(args, env=env)
            self.assertEqual(done.returncode, 0, f"az {' '.join(args)}: {done.stderr}")
        jobs = harness.az(["batch", "job", "list", "-o", "json"], env=env)
        self.assertEqual([j["id"] for j in json.loads(jobs.stdout)], ["strict-job"], jobs.stderr)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
