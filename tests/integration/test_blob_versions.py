"""Blob versioning, an account setting: off by default, turned on through ARM's
blobServices/default (isVersioningEnabled), then served to azure.storage.blob as the service serves
it: version ids on writes, versions read, listed and deleted by id, a version delete's SAS
permission (x), and the bad inputs."""
import datetime
import unittest
import urllib.parse

from azure.storage.blob import BlobSasPermissions, BlobClient, generate_blob_sas

from harness import DEV_ACCOUNT, DEV_KEY, ContainerPerTest, SUBSCRIPTION, arm_call

GROUP = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/versions"
SERVICE = f"{GROUP}/providers/Microsoft.Storage/storageAccounts/{DEV_ACCOUNT}/blobServices/default"
API = "2021-04-01"


class Version:
    """A blob client's calls on one version (this SDK takes the version per call)."""

    def __init__(self, client, version_id):
        self.client, self.version_id = client, version_id

    def __getattr__(self, name):
        method = getattr(self.client, name)
        return lambda *args, **kwargs: method(*args, version_id=self.version_id, **kwargs)


class BlobVersions(ContainerPerTest, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = arm_call(cls.endpoints, "PUT", GROUP, {"location": "eastus"}, api_version=API)
        assert r.status_code in (200, 201), r.text

    def version(self, name, version_id):
        return Version(self.container.get_blob_client(name), version_id)

    def set_versioning(self, on):
        r = arm_call(self.endpoints, "PUT", SERVICE, {"properties": {"isVersioningEnabled": on}}, api_version=API)
        self.assertEqual(r.status_code, 200, r.text)
        self.addCleanup(lambda: arm_call(self.endpoints, "PUT", SERVICE,
                                         {"properties": {"isVersioningEnabled": False}}, api_version=API))
        return r.json()

    def test_off_by_default_then_turned_on_through_arm(self):
        shown = arm_call(self.endpoints, "GET", SERVICE, api_version=API).json()
        self.assertFalse(shown["properties"].get("isVersioningEnabled", False))
        self.assertEqual(shown["name"], "default")
        self.assertFalse(shown["properties"]["deleteRetentionPolicy"]["enabled"])
        blob = self.container.get_blob_client("plain")
        self.assertIsNone(blob.upload_blob(b"one").get("version_id"))
        self.assertIsNone(blob.get_blob_properties().version_id)
        self.assertTrue(self.set_versioning(True)["properties"]["isVersioningEnabled"])
        self.assertIsNotNone(blob.upload_blob(b"two", overwrite=True).get("version_id"))
        # The same settings as the Blob endpoint's: a delete retention policy set through ARM is
        # what Get Blob Service Properties answers.
        r = arm_call(self.endpoints, "PATCH", SERVICE,
                     {"properties": {"deleteRetentionPolicy": {"enabled": True, "days": 5}}}, api_version=API)
        self.assertEqual(r.status_code, 200, r.text)
        self.addCleanup(lambda: arm_call(self.endpoints, "PATCH", SERVICE,
                                         {"properties": {"deleteRetentionPolicy": {"enabled": False}}},
                                         api_version=API))
        self.assertTrue(r.json()["properties"]["isVersioningEnabled"])  # kept: not named
        retention = self.svc.get_service_properties()["delete_retention_policy"]
        self.assertEqual((retention.enabled, retention.days), (True, 5))

    def test_arm_refuses_bad_settings_and_unknown_accounts(self):
        for body in ({"properties": {"isVersioningEnabled": "yes"}},
                     {"properties": {"deleteRetentionPolicy": {"enabled": True, "days": 0}}},
                     {"properties": {"containerDeleteRetentionPolicy": {"enabled": True, "days": 366}}},
                     {"properties": {"cors": {"corsRules": [{"allowedOrigins": []}]}}}):
            r = arm_call(self.endpoints, "PUT", SERVICE, body, api_version=API)
            self.assertEqual(r.status_code, 400, body)
        shown = arm_call(self.endpoints, "GET", SERVICE, api_version=API).json()
        self.assertFalse(shown["properties"].get("isVersioningEnabled", False))  # nothing stored
        missing = SERVICE.replace(DEV_ACCOUNT, "nosuchaccount")
        self.assertEqual(arm_call(self.endpoints, "GET", missing, api_version=API).status_code, 404)
        no_group = SERVICE.replace("/versions/", "/nosuchgroup/")
        self.assertEqual(arm_call(self.endpoints, "GET", no_group, api_version=API).status_code, 404)

    def test_versions_written_read_listed_and_deleted(self):
        self.set_versioning(True)
        blob = self.container.get_blob_client("doc")
        v1 = blob.upload_blob(b"first")["version_id"]
        v2 = blob.upload_blob(b"second", overwrite=True)["version_id"]
        v3 = blob.set_blob_metadata({"k": "v"})["version_id"]
        self.assertTrue(v1 < v2 < v3, (v1, v2, v3))
        props = blob.get_blob_properties()
        self.assertEqual((props.version_id, props.is_current_version), (v3, True))
        old = self.version("doc", v1)
        self.assertEqual(old.download_blob().readall(), b"first")
        self.assertFalse(old.get_blob_properties().is_current_version)
        self.assertEqual(self.version("doc", v2).get_blob_properties().metadata, {})
        listed = [(b.name, b.version_id, b.is_current_version)
                  for b in self.container.list_blobs(include=["versions"])]
        self.assertEqual(listed, [("doc", v1, None), ("doc", v2, None), ("doc", v3, True)])
        self.assertEqual([b.name for b in self.container.list_blobs()], ["doc"])
        # Tags and tiers of one version.
        old.set_standard_blob_tier("Cool")
        self.assertEqual(old.get_blob_properties().blob_tier, "Cool")
        self.assertEqual(blob.get_blob_properties().blob_tier, "Hot")
        # A version deleted goes alone; the blob deleted leaves its versions.
        old.delete_blob()
        self.assertEqual(self.error_of(old.get_blob_properties), (404, "BlobNotFound"))
        blob.delete_blob()
        self.assertEqual(self.error_of(blob.get_blob_properties), (404, "BlobNotFound"))
        left = [(b.version_id, b.is_current_version) for b in self.container.list_blobs(include=["versions"])]
        self.assertEqual(left, [(v2, None), (v3, None)])
        self.assertEqual(self.version("doc", v3).download_blob().readall(), b"second")
        # Copying a version back makes it the blob again.
        blob.start_copy_from_url(blob.url + "?versionid=" + urllib.parse.quote(v2))
        self.assertEqual(blob.download_blob().readall(), b"second")

    def test_a_blob_written_after_its_deletion_keeps_its_versions_tier(self):
        """As recorded: with versioning on, a blob written after Delete Blob of one whose tier was
        set (on its current version) keeps that tier, an online one."""
        self.set_versioning(True)
        blob = self.container.get_blob_client("tiered")
        version = blob.upload_blob(b"one")["version_id"]
        blob.set_standard_blob_tier("Cool", version_id=version)
        blob.delete_blob()
        blob.upload_blob(b"two")
        props = blob.get_blob_properties()
        self.assertEqual((props.blob_tier, props.blob_tier_inferred), ("Cool", None))

    def test_block_lists_and_snapshots_make_versions(self):
        self.set_versioning(True)
        blob = self.container.get_blob_client("blocks")
        blob.stage_block("YQ==", b"a" * 70000)
        v1 = blob.commit_block_list(["YQ=="])["version_id"]
        blob.stage_block("Yg==", b"b")
        v2 = blob.commit_block_list(["YQ==", "Yg=="])["version_id"]
        snap = blob.create_snapshot()
        self.assertIsNotNone(snap.get("version_id"))
        self.assertNotIn(snap["version_id"], (v1, v2))
        self.assertEqual(self.version("blocks", v1).download_blob().readall(),
                         b"a" * 70000)
        self.assertEqual(blob.download_blob().readall(), b"a" * 70000 + b"b")
        names = [(b.snapshot, b.version_id) for b in self.container.list_blobs(include=["snapshots", "versions"])]
        self.assertEqual(len(names), 4)  # the snapshot, two earlier versions, the blob

    def test_a_version_delete_needs_the_x_permission(self):
        self.set_versioning(True)
        blob = self.container.get_blob_client("signed")
        v1 = blob.upload_blob(b"one")["version_id"]
        blob.upload_blob(b"two", overwrite=True)
        expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)

        def version_client(permission):
            sas = generate_blob_sas(DEV_ACCOUNT, self.name, "signed", version_id=v1, account_key=DEV_KEY,
                                    permission=permission, expiry=expiry)
            return BlobClient(self.endpoints["blob"] + "/" + DEV_ACCOUNT, self.name, "signed", version_id=v1,
                              credential=sas)
        self.assertEqual(self.error_of(lambda: version_client(BlobSasPermissions(delete=True)).delete_blob(version_id=v1)),
                         (403, "AuthorizationPermissionMismatch"))
        self.assertEqual(version_client(BlobSasPermissions(read=True)).download_blob(version_id=v1).readall(), b"one")
        # (this SDK sends the client's version with a delete only when the call names it)
        version_client(BlobSasPermissions(delete_previous_version=True)).delete_blob(version_id=v1)
        self.assertEqual(self.error_of(self.version("signed", v1).get_blob_properties),
                         (404, "BlobNotFound"))
        self.assertEqual(blob.download_blob().readall(), b"two")

    def test_bad_version_ids(self):
        self.set_versioning(True)
        self.container.get_blob_client("b").upload_blob(b"x")
        for bad in ("yesterday", "2020-13-01T00:00:00.0000000Z", "2020-01-01T00:00:00Z", ""):
            r = self.raw.request("GET", self.path("b"), [("versionid", bad)])
            self.assertEqual((r.status, r.code), (400, "InvalidQueryParameterValue"), bad)
            r = self.raw.request("DELETE", self.path("b"), [("versionid", bad)])
            self.assertEqual((r.status, r.code), (400, "InvalidQueryParameterValue"), bad)
        r = self.raw.request("GET", self.path("b"), [("versionid", "2001-01-01T00:00:00.0000000Z")])
        self.assertEqual((r.status, r.code), (404, "BlobNotFound"))
        r = self.raw.request("GET", self.path("b"), [("versionid", "2001-01-01T00:00:00.0000000Z"),
                                                      ("snapshot", "2001-01-01T00:00:00.0000000Z")])
        self.assertEqual((r.status, r.code), (400, "InvalidQueryParameterValue"))
        # Nothing went: the blob is still there, and still one version.
        self.assertEqual(len(list(self.container.list_blobs(include=["versions"]))), 1)
        # Before 2019-10-10 the answers name no versions.
        r = self.raw.request("HEAD", self.path("b"), headers={"x-ms-version": "2019-02-02"})
        self.assertEqual(r.status, 200)
        self.assertNotIn("x-ms-version-id", r.headers)


    def test_last_access_time_tracking_is_an_account_setting_too(self):
        self.container.upload_blob("b", b"data")
        headers = {"x-ms-version": "2020-02-10"}
        self.assertNotIn("x-ms-last-access-time", self.raw.request("HEAD", self.path("b"), headers=headers).headers)
        r = arm_call(self.endpoints, "PATCH", SERVICE, {"properties": {"lastAccessTimeTrackingPolicy": {"enable": "yes"}}},
                     api_version=API)
        self.assertEqual(r.status_code, 400, r.text)
        r = arm_call(self.endpoints, "PATCH", SERVICE, {"properties": {"lastAccessTimeTrackingPolicy": {"enable": True}}},
                     api_version=API)
        self.assertEqual(r.status_code, 200, r.text)
        self.addCleanup(lambda: arm_call(self.endpoints, "PATCH", SERVICE,
                                         {"properties": {"lastAccessTimeTrackingPolicy": {"enable": False}}},
                                         api_version=API))
        self.assertTrue(r.json()["properties"]["lastAccessTimeTrackingPolicy"]["enable"])
        # The time of the last write, on reads and in listings (none before 2020-02-10).
        got = self.raw.request("HEAD", self.path("b"), headers=headers).headers
        self.assertEqual(got.get("x-ms-last-access-time"), got.get("last-modified"))
        old = self.raw.request("HEAD", self.path("b"), headers={"x-ms-version": "2019-12-12"}).headers
        self.assertNotIn("x-ms-last-access-time", old)
        listed = self.raw.request("GET", self.path(), [("restype", "container"), ("comp", "list")], headers=headers)
        self.assertIn(f"<LastAccessTime>{got['last-modified']}</LastAccessTime>".encode(), listed.body)


if __name__ == "__main__":
    unittest.main()
