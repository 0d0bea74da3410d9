"""SAS rules beside the permission matrix (test_sas_matrix.py): Copy Blob and the From URL
operations authorize their source on their own, a SAS with a parameter twice or for HTTPS only over
HTTP is refused, a refused upload stores nothing. Small enough for the sanitizer run, which leaves
the matrix's tens of thousands of requests to the Release run."""
import datetime
import unittest
import urllib.parse

from azure.storage.blob import generate_account_sas as blob_account_sas
from azure.storage.blob import generate_blob_sas
from azure.storage.fileshare import generate_file_sas

import harness
from raw_storage import RawClient
from test_sas_matrix import ACCOUNT, EXPIRY, SMB, KeepAlive

OTHER_ACCOUNT = "otheraccount"
OTHER_KEY = "b3RoZXIta2V5LWZvci10aGUtY29weS1zb3VyY2UtdGVzdHM="


class SasTokenRulesTest(unittest.TestCase):
    """Copy Blob authorizes its source on its own; a SAS with a parameter twice, or for HTTPS only
    over HTTP, is refused; a refused upload stores nothing."""

    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator(args=["--account", f"{OTHER_ACCOUNT}:{OTHER_KEY}"]).start()
        cls.blob = KeepAlive(cls.emu.endpoints["blob"])
        cls.file = KeepAlive(cls.emu.endpoints["file"])
        cls.blob.ok("PUT", "/src", {"restype": "container"})
        cls.blob.ok("PUT", "/src/secret", {}, {"x-ms-blob-type": "BlockBlob"}, b"private bytes")
        cls.blob.ok("PUT", "/pub", {"restype": "container"}, {"x-ms-blob-public-access": "blob"})
        cls.blob.ok("PUT", "/pub/open", {}, {"x-ms-blob-type": "BlockBlob"}, b"public bytes")
        cls.blob.ok("PUT", "/dst", {"restype": "container"})
        cls.file.ok("PUT", "/share", {"restype": "share"})
        cls.file.ok("PUT", "/share/f", {}, {"x-ms-type": "file", "x-ms-content-length": "1", **SMB})

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert code == 0, f"emulator exited with {code}"

    def source_url(self, container, blob, sas=None, account=ACCOUNT):
        return f"{self.emu.endpoints['blob']}/{account}/{container}/{blob}" + (f"?{sas}" if sas else "")

    def copy(self, dest, source, sas=None):
        return self.blob.send("PUT", "/dst/" + dest, {}, {"x-ms-copy-source": source}, sas=sas)

    def dest_sas(self, dest):
        return generate_blob_sas(ACCOUNT, "dst", dest, account_key=harness.DEV_KEY, permission="cw", expiry=EXPIRY)

    def assert_absent(self, dest):
        self.assertEqual(self.blob.send("GET", "/dst/" + dest).status, 404)

    def test_a_destination_sas_does_not_read_a_private_source_of_the_same_account(self):
        r = self.copy("stolen", self.source_url("src", "secret"), sas=self.dest_sas("stolen"))
        self.assertEqual((r.status, r.code), (404, "CannotVerifyCopySource"), r.body)
        self.assert_absent("stolen")
        # An account SAS that can write the destination cannot read the source through it either.
        account_sas = blob_account_sas(ACCOUNT, harness.DEV_KEY, "sco", "racwdl", EXPIRY)
        r = self.copy("stolen", self.source_url("src", "secret"), sas=account_sas)
        self.assertEqual((r.status, r.code), (404, "CannotVerifyCopySource"), r.body)
        self.assert_absent("stolen")

    def test_a_source_sas_must_allow_reading_the_source(self):
        no_read = generate_blob_sas(ACCOUNT, "src", "secret", account_key=harness.DEV_KEY, permission="cwd", expiry=EXPIRY)
        r = self.copy("copied", self.source_url("src", "secret", no_read), sas=self.dest_sas("copied"))
        self.assertEqual((r.status, r.code), (403, "CannotVerifyCopySource"), r.body)
        self.assertIn("permission", r.message)
        self.assert_absent("copied")
        other_blob = generate_blob_sas(ACCOUNT, "src", "other", account_key=harness.DEV_KEY, permission="r", expiry=EXPIRY)
        r = self.copy("copied", self.source_url("src", "secret", other_blob), sas=self.dest_sas("copied"))
        self.assertEqual((r.status, r.code), (403, "CannotVerifyCopySource"), r.body)
        self.assert_absent("copied")
        read = generate_blob_sas(ACCOUNT, "src", "secret", account_key=harness.DEV_KEY, permission="r", expiry=EXPIRY)
        r = self.copy("copied", self.source_url("src", "secret", read), sas=self.dest_sas("copied"))
        self.assertEqual(r.status, 202, r.body)
        self.assertEqual(self.blob.ok("GET", "/dst/copied").body, b"private bytes")

    def test_a_public_source_and_the_account_key_need_nothing_more(self):
        r = self.copy("from-public", self.source_url("pub", "open"), sas=self.dest_sas("from-public"))
        self.assertEqual(r.status, 202, r.body)
        self.assertEqual(self.blob.ok("GET", "/dst/from-public").body, b"public bytes")
        r = self.blob.send("PUT", "/dst/by-key", {}, {"x-ms-copy-source": self.source_url("src", "secret")})
        self.assertEqual(r.status, 202, r.body)

    def test_a_source_sas_is_checked_even_when_the_key_signed_the_request(self):
        # The key would cover the source, but the SAS in its URL says what may be read: nothing.
        no_read = generate_blob_sas(ACCOUNT, "src", "secret", account_key=harness.DEV_KEY, permission="w", expiry=EXPIRY)
        r = self.blob.send("PUT", "/dst/by-key-sas", {}, {"x-ms-copy-source": self.source_url("src", "secret", no_read)})
        self.assertEqual((r.status, r.code), (403, "CannotVerifyCopySource"), r.body)
        self.assert_absent("by-key-sas")
        # A source on another host: the emulator reaches no other server.
        r = self.blob.send("PUT", "/dst/elsewhere", {}, {"x-ms-copy-source": "http://somewhere.invalid/devstoreaccount1/src/secret"})
        self.assertEqual((r.status, r.code), (404, "CannotVerifyCopySource"), r.body)
        # A loopback name of the same port is this emulator; a name that only starts like one is not.
        port = self.emu.endpoints["blob"].rsplit(":", 1)[1]
        r = self.blob.send("PUT", "/dst/elsewhere", {}, {"x-ms-copy-source": f"http://127.evil.invalid:{port}/devstoreaccount1/src/secret"})
        self.assertEqual((r.status, r.code), (404, "CannotVerifyCopySource"), r.body)
        r = self.blob.send("PUT", "/dst/here", {}, {"x-ms-copy-source": f"http://localhost:{port}/devstoreaccount1/src/secret"})
        self.assertEqual(r.status, 202, r.body)

    def test_another_accounts_private_source_needs_its_own_sas(self):
        other = RawClient(self.emu.endpoints["blob"], account=OTHER_ACCOUNT, key=OTHER_KEY)
        self.assertEqual(other.request("PUT", f"/{OTHER_ACCOUNT}/theirs", [("restype", "container")]).status, 201)
        self.assertEqual(other.request("PUT", f"/{OTHER_ACCOUNT}/theirs/b", body=b"theirs",
                                       headers={"x-ms-blob-type": "BlockBlob"}).status, 201)
        # The account key of this account is not a key of the other one.
        r = self.blob.send("PUT", "/dst/cross", {}, {"x-ms-copy-source": self.source_url("theirs", "b", account=OTHER_ACCOUNT)})
        self.assertEqual((r.status, r.code), (404, "CannotVerifyCopySource"), r.body)
        self.assert_absent("cross")
        sas = generate_blob_sas(OTHER_ACCOUNT, "theirs", "b", account_key=OTHER_KEY, permission="r", expiry=EXPIRY)
        r = self.blob.send("PUT", "/dst/cross", {},
                           {"x-ms-copy-source": self.source_url("theirs", "b", sas, account=OTHER_ACCOUNT)})
        self.assertEqual(r.status, 202, r.body)
        self.assertEqual(self.blob.ok("GET", "/dst/cross").body, b"theirs")

    def test_put_block_from_url_reads_a_source_authorized_on_its_own(self):
        from azure.storage.blob import BlobClient
        dest = BlobClient.from_connection_string(harness.connection_string(self.emu.endpoints), "dst", "staged")
        # Signed with the account's key, but the source of a From URL operation needs its own SAS.
        r = self.blob.send("PUT", "/dst/staged", {"comp": "block", "blockid": "YQ=="},
                           {"x-ms-copy-source": self.source_url("src", "secret")})
        self.assertEqual((r.status, r.code), (404, "CannotVerifyCopySource"), r.body)
        read = generate_blob_sas(ACCOUNT, "src", "secret", account_key=harness.DEV_KEY, permission="r", expiry=EXPIRY)
        source = self.source_url("src", "secret", read)
        dest.stage_block_from_url("YmxvY2sx", source, source_offset=0, source_length=7)     # "private"
        dest.stage_block_from_url("YmxvY2sy", source, source_offset=7, source_length=6)     # " bytes"
        dest.stage_block_from_url("YmxvY2sz", self.source_url("pub", "open"))               # public, whole
        dest.commit_block_list(["YmxvY2sy", "YmxvY2sx", "YmxvY2sz"])
        self.assertEqual(dest.download_blob().readall(), b" bytesprivatepublic bytes")
        r = self.blob.send("PUT", "/dst/staged", {"comp": "block", "blockid": "YmxvY2s0"},
                           {"x-ms-copy-source": source, "x-ms-source-range": "bytes=100-200"})
        self.assertEqual((r.status, r.code), (416, "InvalidRange"), r.body)
        r = self.blob.send("PUT", "/dst/staged", {"comp": "block", "blockid": "YmxvY2s0"},
                           {"x-ms-copy-source": self.source_url("src", "missing", read)})
        self.assertEqual(r.status, 403, r.body)  # the SAS names another blob
        self.assertEqual(r.code, "CannotVerifyCopySource")

    def test_put_blob_from_url_and_a_synchronous_copy_need_the_sources_own_authorization(self):
        from azure.storage.blob import BlobClient
        conn = harness.connection_string(self.emu.endpoints)
        dest = BlobClient.from_connection_string(conn, "dst", "from-url")
        # The account key signed the request, the source is in the same account: not enough here.
        for extra in ({"x-ms-blob-type": "BlockBlob"}, {"x-ms-requires-sync": "true"}):
            r = self.blob.send("PUT", "/dst/from-url", {}, {"x-ms-copy-source": self.source_url("src", "secret"), **extra})
            self.assertEqual((r.status, r.code), (404, "CannotVerifyCopySource"), (extra, r.body))
            self.assert_absent("from-url")
        read = generate_blob_sas(ACCOUNT, "src", "secret", account_key=harness.DEV_KEY, permission="r", expiry=EXPIRY)
        dest.upload_blob_from_url(self.source_url("src", "secret", read))
        self.assertEqual(dest.download_blob().readall(), b"private bytes")
        # The SDK sends no metadata with it; a request that does sets the blob's, as Put Blob.
        r = self.blob.send("PUT", "/dst/from-url", {}, {"x-ms-copy-source": self.source_url("src", "secret", read),
                                                         "x-ms-blob-type": "BlockBlob", "x-ms-meta-set": "here"})
        self.assertEqual(r.status, 201, r.body)
        self.assertEqual(dest.get_blob_properties().metadata, {"set": "here"})
        copy = BlobClient.from_connection_string(conn, "dst", "sync-copy")
        result = copy.start_copy_from_url(self.source_url("pub", "open"), requires_sync=True)
        self.assertEqual(result["copy_status"], "success")
        self.assertEqual(copy.download_blob().readall(), b"public bytes")

    def test_a_sas_parameter_given_twice_is_refused(self):
        good = generate_blob_sas(ACCOUNT, "src", "secret", account_key=harness.DEV_KEY, permission="rwd", expiry=EXPIRY)
        bad = generate_blob_sas(ACCOUNT, "src", "secret", account_key=harness.DEV_KEY, permission="r",
                                expiry=datetime.datetime(2001, 1, 1))
        bad_sig = urllib.parse.parse_qs(bad)["sig"][0]
        for sas in (good + "&sig=" + urllib.parse.quote(bad_sig, safe=""),
                    "sig=" + urllib.parse.quote(bad_sig, safe="") + "&" + good,
                    good + "&" + good, good + "&sp=r", good + "&SE=2099-01-01T00%3A00%3A00Z"):
            for method in ("GET", "DELETE"):
                r = self.blob.send(method, "/src/secret", sas=sas)
                self.assertEqual((r.status, r.code), (403, "AuthenticationFailed"), (sas, method, r.body))
        self.assertEqual(self.blob.ok("GET", "/src/secret").body, b"private bytes")
        self.assertEqual(self.blob.send("GET", "/src/secret", sas=good).status, 200)
        file_sas = generate_file_sas(ACCOUNT, "share", ["f"], account_key=harness.DEV_KEY, permission="rwd", expiry=EXPIRY)
        r = self.file.send("DELETE", "/share/f", sas=file_sas + "&" + file_sas)
        self.assertEqual((r.status, r.code), (403, "AuthenticationFailed"), r.body)
        self.assertEqual(self.file.send("GET", "/share/f").status, 200)

    def test_an_https_only_sas_is_refused_over_http(self):
        sas = generate_blob_sas(ACCOUNT, "src", "secret", account_key=harness.DEV_KEY, permission="r", expiry=EXPIRY,
                                protocol="https")
        r = self.blob.send("GET", "/src/secret", sas=sas)
        self.assertEqual((r.status, r.code), (403, "AuthorizationProtocolMismatch"), r.body)
        both = generate_blob_sas(ACCOUNT, "src", "secret", account_key=harness.DEV_KEY, permission="r", expiry=EXPIRY,
                                 protocol="https,http")
        self.assertEqual(self.blob.send("GET", "/src/secret", sas=both).status, 200)

    def test_a_refused_upload_stores_nothing_of_its_body(self):
        read_only = generate_blob_sas(ACCOUNT, "dst", "big", account_key=harness.DEV_KEY, permission="r", expiry=EXPIRY)
        body = b"x" * (8 << 20)
        r = self.blob.send("PUT", "/dst/big", {}, {"x-ms-blob-type": "BlockBlob"}, body, sas=read_only)
        self.assertEqual((r.status, r.code), (403, "AuthorizationPermissionMismatch"))
        self.assert_absent("big")
        # The connection stays usable: the refused body was read and dropped.
        self.assertEqual(self.blob.send("GET", "/src/secret").status, 200)


if __name__ == "__main__":
    unittest.main()
