"""The File service's answers as the cloud gives them at the x-ms-version a client sends: the
headers of reads and writes, and the listings' shapes, as the Storage service's recordings show
them (tests/integration/test_storage_replay.py replays those)."""
import base64
import hashlib
import re
import unittest

from harness import DEV_ACCOUNT, DEV_KEY, StorageTestCase
from raw_storage import RawClient
from replay.storage_signing import resign_sas_query

OLD, TIERS, LEASES, EXTENDED, LAST_WRITE = "2019-02-02", "2019-12-12", "2020-02-10", "2020-04-08", "2021-06-08"


class FileAnswers(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.share = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.assertEqual(self.client(OLD).request("PUT", self.path(), [("restype", "share")]).status, 201)
        self.addCleanup(lambda: self.client(OLD).request("DELETE", self.path(), [("restype", "share")]))

    def client(self, version):
        return RawClient(self.endpoints["file"], version=version)

    def path(self, name=""):
        return f"/{DEV_ACCOUNT}/{self.share}" + (f"/{name}" if name else "")

    def create_file(self, name, size, version=OLD):
        r = self.client(version).request("PUT", self.path(name), headers={
            "x-ms-type": "file", "x-ms-content-length": str(size), "x-ms-file-attributes": "none",
            "x-ms-file-creation-time": "now", "x-ms-file-last-write-time": "now", "x-ms-file-permission": "Inherit"})
        self.assertEqual(r.status, 201, r.body)
        self.assertEqual(r.headers.get("x-ms-request-server-encrypted"), "true")
        self.assertNotIn("x-ms-server-encrypted", r.headers)
        return r

    def put_range(self, name, data, version=OLD, headers=None):
        return self.client(version).request("PUT", self.path(name), [("comp", "range")], body=data, headers={
            "x-ms-write": "update", "x-ms-range": f"bytes=0-{len(data) - 1}", **(headers or {})})

    def test_put_range_answers_the_ranges_md5_asked_or_not(self):
        self.create_file("f", 1024)
        data = b"a" * 512
        r = self.put_range("f", data)
        self.assertEqual(r.status, 201, r.body)
        self.assertEqual(r.headers.get("content-md5"), base64.b64encode(hashlib.md5(data).digest()).decode())
        self.assertEqual(r.headers.get("x-ms-request-server-encrypted"), "true")
        wrong = base64.b64encode(hashlib.md5(b"b").digest()).decode()
        self.assertEqual(self.put_range("f", data, headers={"Content-MD5": wrong}).code, "Md5Mismatch")

    def test_put_range_names_the_last_write_time_from_2021_06_08(self):
        self.create_file("f", 512)
        self.assertNotIn("x-ms-file-last-write-time", self.put_range("f", b"a" * 512, OLD).headers)
        self.assertIn("x-ms-file-last-write-time", self.put_range("f", b"a" * 512, LAST_WRITE).headers)

    def test_clear_range_answers_no_encryption(self):
        self.create_file("f", 512)
        r = self.client(OLD).request("PUT", self.path("f"), [("comp", "range")],
                                     headers={"x-ms-write": "clear", "x-ms-range": "bytes=0-511"})
        self.assertEqual(r.status, 201, r.body)
        self.assertNotIn("x-ms-request-server-encrypted", r.headers)
        self.assertNotIn("content-md5", r.headers)

    def test_reads_say_the_file_is_stored_encrypted_and_unleased(self):
        self.create_file("f", 16)
        for method in ("GET", "HEAD"):
            r = self.client(OLD).request(method, self.path("f"))
            self.assertEqual(r.status, 200, r.body)
            self.assertEqual(r.headers.get("x-ms-server-encrypted"), "true", method)
            self.assertNotIn("x-ms-request-server-encrypted", r.headers, method)
            self.assertEqual((r.headers.get("x-ms-lease-state"), r.headers.get("x-ms-lease-status")),
                             ("available", "unlocked"), method)
        self.assertEqual(self.client(OLD).request("GET", self.path("f")).headers.get("accept-ranges"), "bytes")
        self.assertNotIn("accept-ranges", self.client(OLD).request("HEAD", self.path("f")).headers)

    def test_directory_reads_and_metadata_writes_say_encrypted(self):
        d = self.client(OLD).request("PUT", self.path("d"), [("restype", "directory")], headers={
            "x-ms-file-attributes": "none", "x-ms-file-creation-time": "now",
            "x-ms-file-last-write-time": "now", "x-ms-file-permission": "Inherit"})
        self.assertEqual(d.status, 201, d.body)
        r = self.client(OLD).request("GET", self.path("d"), [("restype", "directory")])
        self.assertEqual(r.headers.get("x-ms-server-encrypted"), "true")
        self.assertNotIn("x-ms-request-server-encrypted", r.headers)
        m = self.client(OLD).request("PUT", self.path("d"), [("restype", "directory"), ("comp", "metadata")],
                                     headers={"x-ms-meta-a": "b"})
        self.assertEqual(m.headers.get("x-ms-request-server-encrypted"), "true")
        self.create_file("f", 0)
        m = self.client(OLD).request("PUT", self.path("f"), [("comp", "metadata")], headers={"x-ms-meta-a": "b"})
        self.assertEqual(m.headers.get("x-ms-request-server-encrypted"), "true")

    def test_share_properties_by_version(self):
        old = self.client(OLD).request("GET", self.path(), [("restype", "share")])
        self.assertEqual((old.headers.get("x-ms-has-immutability-policy"), old.headers.get("x-ms-has-legal-hold")),
                         ("false", "false"))
        for name in ("x-ms-access-tier", "x-ms-lease-state", "x-ms-lease-status"):
            self.assertNotIn(name, old.headers)
        tiers = self.client(TIERS).request("GET", self.path(), [("restype", "share")])
        self.assertEqual(tiers.headers.get("x-ms-access-tier"), "TransactionOptimized")
        self.assertIn("x-ms-access-tier-change-time", tiers.headers)
        self.assertNotIn("x-ms-lease-state", tiers.headers)
        leases = self.client(LEASES).request("GET", self.path(), [("restype", "share")])
        self.assertEqual((leases.headers.get("x-ms-lease-state"), leases.headers.get("x-ms-lease-status")),
                         ("available", "unlocked"))

    def list_shares(self, version, *query):
        r = self.client(version).request("GET", f"/{DEV_ACCOUNT}/", [("comp", "list"), ("prefix", self.share), *query])
        self.assertEqual(r.status, 200, r.body)
        return r.body.decode()

    def test_list_shares_shape_by_version_and_max_results_only_when_asked(self):
        old = self.list_shares(OLD)
        self.assertIn(f"<Name>{self.share}</Name>", old)
        self.assertIn("<Quota>", old)
        for element in ("LeaseStatus", "AccessTier", "DefaultEncryptionScope", "MaxResults"):
            self.assertNotIn(f"<{element}>", old)
        self.assertIn("<MaxResults>3</MaxResults>", self.list_shares(OLD, ("maxresults", "3")))
        tiers = self.list_shares(TIERS)
        self.assertIn("<AccessTier>TransactionOptimized</AccessTier>", tiers)
        self.assertIn("<DefaultEncryptionScope>$account-encryption-key</DefaultEncryptionScope>", tiers)
        self.assertNotIn("<LeaseStatus>", tiers)
        self.assertIn("<LeaseStatus>unlocked</LeaseStatus><LeaseState>available</LeaseState>", self.list_shares(LEASES))

    def test_directory_listing_extended_from_2020_04_08(self):
        self.create_file("f", 3)
        def listing(version):
            r = self.client(version).request("GET", self.path(), [("restype", "directory"), ("comp", "list")])
            self.assertEqual(r.status, 200, r.body)
            return r.body.decode()
        old = listing(OLD)
        self.assertRegex(old, r"<File><Name>f</Name><Properties><Content-Length>3</Content-Length></Properties></File>")
        for element in ("FileId", "DirectoryId", "Attributes", "PermissionKey", "CreationTime", "MaxResults"):
            self.assertNotIn(f"<{element}>", old)
        new = listing(EXTENDED)
        for element in ("FileId", "DirectoryId", "Attributes", "PermissionKey", "CreationTime"):
            self.assertIn(f"<{element}>", new)
        self.assertTrue(re.search(r"<File><Name>f</Name><FileId>\d+</FileId>", new), new)

    def lease(self, action, version=LEASES, **headers):
        h = {"x-ms-lease-action": action, "x-ms-version": version}
        h.update({k.replace("_", "-"): v for k, v in headers.items()})
        return self.client(version).request("PUT", self.path(), [("restype", "share"), ("comp", "lease")], headers=h)

    def test_a_leased_share_is_deleted_and_changed_only_with_its_lease(self):
        proposed = "6d8bd6a4-3e6f-4b43-9b6a-7a9f9e3f3b11"
        acquired = self.lease("acquire", x_ms_lease_duration="-1", x_ms_proposed_lease_id=proposed)
        self.assertEqual(acquired.status, 201, acquired.body)
        self.assertEqual(acquired.headers.get("x-ms-lease-id"), proposed)
        props = self.client(LEASES).request("GET", self.path(), [("restype", "share")])
        self.assertEqual((props.headers.get("x-ms-lease-state"), props.headers.get("x-ms-lease-status"),
                          props.headers.get("x-ms-lease-duration")), ("leased", "locked", "infinite"))
        self.assertIn("<LeaseStatus>locked</LeaseStatus><LeaseState>leased</LeaseState>"
                      "<LeaseDuration>infinite</LeaseDuration>", self.list_shares(LEASES))
        other = "00000000-0000-0000-0000-000000000001"
        delete = lambda **h: self.client(LEASES).request("DELETE", self.path(), [("restype", "share")], headers=h)  # noqa: E731
        self.assertEqual((delete().status, delete().code), (412, "LeaseIdMissing"))
        refused = delete(**{"x-ms-lease-id": other})
        self.assertEqual((refused.status, refused.code), (412, "LeaseIdMismatchWithContainerOperation"))
        metadata = self.client(LEASES).request("PUT", self.path(), [("restype", "share"), ("comp", "metadata")],
                                               headers={"x-ms-meta-a": "b", "x-ms-lease-id": other})
        self.assertEqual((metadata.status, metadata.code), (412, "LeaseIdMismatchWithContainerOperation"))
        self.assertEqual(self.client(LEASES).request("GET", self.path(), [("restype", "share")]).status, 200)
        self.assertEqual(self.lease("acquire", x_ms_lease_duration="-1").code, "LeaseAlreadyPresent")
        self.assertEqual(self.lease("release", x_ms_lease_id=proposed).status, 200)
        self.assertEqual(delete(**{"x-ms-lease-id": proposed}).code, "LeaseNotPresentWithContainerOperation")
        self.assertEqual(delete().status, 202)

    def test_lease_share_bad_input(self):
        self.assertEqual((self.lease("acquire", x_ms_lease_duration="10").status,
                          self.lease("acquire", x_ms_lease_duration="10").code), (400, "InvalidHeaderValue"))
        self.assertEqual(self.lease("acquire").code, "MissingRequiredHeader")
        self.assertEqual(self.lease("grab", x_ms_lease_duration="-1").code, "InvalidHeaderValue")
        self.assertEqual(self.lease("renew", x_ms_lease_id="00000000-0000-0000-0000-000000000001").code,
                         "LeaseIdMismatchWithLeaseOperation")
        missing = self.client(LEASES).request("PUT", f"/{DEV_ACCOUNT}/no-such-share", [("restype", "share"), ("comp", "lease")],
                                              headers={"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"})
        self.assertEqual((missing.status, missing.code), (404, "ShareNotFound"))
        props = self.client(LEASES).request("GET", self.path(), [("restype", "share")])
        self.assertEqual(props.headers.get("x-ms-lease-state"), "available")

    def test_a_sas_request_without_x_ms_version_is_answered_at_the_sas_version(self):
        self.create_file("f", 3)
        query = resign_sas_query("file", DEV_ACCOUNT, DEV_KEY, f"/{self.share}/f",
                                 "se=2099-01-01T00%3A00%3A00Z&sp=r&sv=2019-02-02&sr=f&sig=x", 0)
        r = self.client(OLD).request("GET", self.path("f"), headers={"x-ms-version": None}, sign=False,
                                     raw_query=query)
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.headers.get("x-ms-version"), "2019-02-02")
        self.assertEqual(r.headers.get("x-ms-server-encrypted"), "true")

    def test_attributes_are_written_back_in_the_services_order_with_archive_on_created_files(self):
        def create(name, attributes):
            r = self.client(OLD).request("PUT", self.path(name), headers={
                "x-ms-type": "file", "x-ms-content-length": "0", "x-ms-file-attributes": attributes,
                "x-ms-file-creation-time": "now", "x-ms-file-last-write-time": "now", "x-ms-file-permission": "Inherit"})
            self.assertEqual(r.status, 201, r.body)
            return r.headers.get("x-ms-file-attributes")
        self.assertEqual(create("a", "Temporary"), "Archive | Temporary")
        self.assertEqual(create("b", "temporary|hidden"), "Hidden | Archive | Temporary")
        self.assertEqual(create("c", "none"), "Archive")
        self.assertEqual(self.client(OLD).request("HEAD", self.path("b")).headers.get("x-ms-file-attributes"),
                         "Hidden | Archive | Temporary")
        props = self.client(OLD).request("PUT", self.path("a"), [("comp", "properties")], headers={
            "x-ms-file-attributes": "Temporary|ReadOnly", "x-ms-file-creation-time": "preserve",
            "x-ms-file-last-write-time": "preserve", "x-ms-file-permission": "preserve"})
        self.assertEqual(props.headers.get("x-ms-file-attributes"), "ReadOnly | Temporary")
        bad = self.client(OLD).request("PUT", self.path("d"), headers={
            "x-ms-type": "file", "x-ms-content-length": "0", "x-ms-file-attributes": "Temporary|Sparkly"})
        self.assertEqual((bad.status, bad.code), (400, "InvalidHeaderValue"))


if __name__ == "__main__":
    unittest.main()
