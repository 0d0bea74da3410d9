"""Share soft delete, an account setting: off by default, turned on through ARM's
fileServices/default (shareDeleteRetentionPolicy, what `az storage account file-service-properties
update --enable-delete-retention` sends) or Set File Service Properties; then a deleted share is
listed with include=deleted and comes back with Undelete Share (ShareServiceClient.undelete_share)
or ARM's restore (`az storage share-rm restore`), files, metadata and snapshots included, where
jobs and mounts see it (the share's directory). The bad inputs answer as the service does, with
nothing changed."""
import datetime
import os
import unittest

import requests

from azure.core.exceptions import HttpResponseError
from azure.storage.fileshare import ResourceTypes, ShareServiceClient, generate_account_sas, generate_share_sas

from harness import DEV_ACCOUNT, DEV_KEY, SUBSCRIPTION, StorageTestCase, arm_call, set_delete_retention
from raw_storage import RawClient

GROUP = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/softdelete"
SERVICE = f"{GROUP}/providers/Microsoft.Storage/storageAccounts/{DEV_ACCOUNT}/fileServices/default"
API = "2021-04-01"


class ShareSoftDelete(StorageTestCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = arm_call(cls.endpoints, "PUT", GROUP, {"location": "eastus"}, api_version=API)
        assert r.status_code in (200, 201), r.text

    def setUp(self):
        self.svc = ShareServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.raw = RawClient(self.endpoints["file"], version="2020-02-10")

    def set_retention(self, enabled, days=None):
        return set_delete_retention(self, SERVICE, "shareDeleteRetentionPolicy", enabled, days, API)

    def deleted(self, name):
        return [s for s in self.svc.list_shares(name_starts_with=name, include_deleted=True) if s.deleted]

    def error_of(self, call):
        with self.assertRaises(HttpResponseError) as caught:
            call()
        return caught.exception.status_code, caught.exception.error_code

    def on_disk(self, name):
        return os.path.join(self.emu.location, "storage", DEV_ACCOUNT, "shares", name)

    def make_share(self):
        share = self.svc.create_share(self.name, metadata={"owner": "team"})
        self.addCleanup(lambda: self.svc.delete_share(self.name, delete_snapshots=True) if self.exists() else None)
        share.create_directory("data")
        share.get_file_client("data/model.bin").upload_file(b"weights" * 100)
        return share

    def exists(self):
        try:
            self.svc.get_share_client(self.name).get_share_properties()
            return True
        except HttpResponseError:
            return False

    def test_off_by_default_a_delete_is_for_good(self):
        shown = arm_call(self.endpoints, "GET", SERVICE, api_version=API).json()
        self.assertFalse(shown["properties"]["shareDeleteRetentionPolicy"]["enabled"])
        self.make_share()
        self.svc.delete_share(self.name)
        self.assertEqual(self.deleted(self.name), [])
        self.assertFalse(os.path.exists(self.on_disk(self.name)))

    def test_deleted_share_listed_and_undeleted_with_its_files_and_snapshots(self):
        view = self.set_retention(True, 3)
        self.assertEqual(view["properties"]["shareDeleteRetentionPolicy"], {"enabled": True, "days": 3})
        # The same setting as the File endpoint's service properties.
        r = self.raw.request("GET", f"/{DEV_ACCOUNT}", [("restype", "service"), ("comp", "properties")])
        self.assertIn(b"<ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>3</Days></ShareDeleteRetentionPolicy>",
                      r.body)
        share = self.make_share()
        snapshot = share.create_snapshot()["snapshot"]
        self.svc.delete_share(self.name, delete_snapshots=True)
        self.assertEqual(self.error_of(share.get_share_properties), (404, "ShareNotFound"))
        self.assertFalse(os.path.exists(self.on_disk(self.name)))  # out of the mounts' and jobs' sight
        [gone] = self.deleted(self.name)
        self.assertRegex(gone.version, r"^[0-9A-F]{16}$")
        self.assertEqual(gone.remaining_retention_days, 3)
        self.assertIsNotNone(gone.deleted_time)
        # Not listed without include=deleted.
        self.assertEqual([s.name for s in self.svc.list_shares(name_starts_with=self.name)], [])
        restored = self.svc.undelete_share(self.name, gone.version)
        props = restored.get_share_properties()
        self.assertEqual(props.metadata, {"owner": "team"})
        self.assertEqual(restored.get_file_client("data/model.bin").download_file().readall(), b"weights" * 100)
        with open(os.path.join(self.on_disk(self.name), "data", "model.bin"), "rb") as f:
            self.assertEqual(f.read(), b"weights" * 100)
        snap = self.svc.get_share_client(self.name, snapshot=snapshot)
        self.assertEqual(snap.get_file_client("data/model.bin").download_file().readall(), b"weights" * 100)
        self.assertEqual(self.deleted(self.name), [])

    def test_bad_undeletes_change_nothing(self):
        self.set_retention(True)
        self.make_share()
        self.svc.delete_share(self.name)
        [gone] = self.deleted(self.name)
        self.svc.create_share(self.name)  # a new share of the name
        self.assertEqual(self.error_of(lambda: self.svc.undelete_share(self.name, gone.version)),
                         (409, "ShareAlreadyExists"))
        self.svc.delete_share(self.name)
        both = self.deleted(self.name)
        self.assertEqual(len(both), 2)
        for version, expected in (("01D69C4E8E6FB05B", (404, "ShareNotFound")), ("01D69C4E8E6FB05", (400, "InvalidHeaderValue")),
                                  ("not-a-version!!!", (400, "InvalidHeaderValue"))):
            r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}", [("restype", "share"), ("comp", "undelete")],
                                 headers={"x-ms-deleted-share-name": self.name, "x-ms-deleted-share-version": version})
            self.assertEqual((r.status, r.code), expected, version)
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}", [("restype", "share"), ("comp", "undelete")],
                             headers={"x-ms-deleted-share-name": self.name})
        self.assertEqual((r.status, r.code), (400, "MissingRequiredHeader"))
        self.assertEqual(len(self.deleted(self.name)), 2)
        self.assertFalse(self.exists())
        # The older one back: its files, not the newer (empty) share's.
        older = min(both, key=lambda s: s.version)
        self.svc.undelete_share(self.name, older.version)
        self.assertEqual(self.svc.get_share_client(self.name).get_file_client("data/model.bin")
                         .download_file().readall(), b"weights" * 100)

    def test_restore_through_arm_under_another_name(self):
        self.set_retention(True)
        self.make_share()
        self.svc.delete_share(self.name)
        [gone] = self.deleted(self.name)
        other = self.name + "-back"
        self.addCleanup(lambda: self.svc.delete_share(other))
        r = arm_call(self.endpoints, "POST", f"{SERVICE}/shares/{other}/restore",
                     {"deletedShareName": self.name, "deletedShareVersion": gone.version}, api_version=API)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(self.svc.get_share_client(other).get_file_client("data/model.bin")
                         .download_file().readall(), b"weights" * 100)
        r = arm_call(self.endpoints, "POST", f"{SERVICE}/shares/{other}/restore",
                     {"deletedShareName": self.name, "deletedShareVersion": gone.version}, api_version=API)
        self.assertEqual(r.status_code, 404, r.text)
        r = arm_call(self.endpoints, "POST", f"{SERVICE}/shares/{other}/restore", {"deletedShareName": self.name},
                     api_version=API)
        self.assertEqual(r.status_code, 400, r.text)

    def test_undelete_takes_an_account_sas_of_c_or_w(self):
        self.set_retention(True)
        self.make_share()
        self.svc.delete_share(self.name)
        [gone] = self.deleted(self.name)
        expiry = datetime.datetime.utcnow() + datetime.timedelta(hours=1)
        url = f"{self.endpoints['file']}/{DEV_ACCOUNT}/{self.name}?restype=share&comp=undelete&"
        headers = {"x-ms-version": "2020-02-10", "x-ms-deleted-share-name": self.name,
                   "x-ms-deleted-share-version": gone.version}
        refused = [(generate_account_sas(DEV_ACCOUNT, DEV_KEY, ResourceTypes(container=True), "rdl", expiry),
                    "AuthorizationPermissionMismatch"),
                   (generate_account_sas(DEV_ACCOUNT, DEV_KEY, ResourceTypes(object=True), "cw", expiry),
                    "AuthorizationResourceTypeMismatch"),
                   (generate_share_sas(DEV_ACCOUNT, self.name, account_key=DEV_KEY, permission="rcwdl", expiry=expiry),
                    "AuthorizationFailure")]
        for sas, code in refused:
            r = requests.put(url + sas, headers=headers, timeout=10)
            self.assertEqual((r.status_code, r.headers.get("x-ms-error-code")), (403, code), sas)
        self.assertEqual(len(self.deleted(self.name)), 1)
        sas = generate_account_sas(DEV_ACCOUNT, DEV_KEY, ResourceTypes(container=True), "c", expiry)
        r = requests.put(url + sas, headers=headers, timeout=10)
        self.assertEqual(r.status_code, 201, r.text)
        self.assertTrue(self.exists())

    def test_arm_refuses_bad_retention(self):
        for body in ({"enabled": "yes"}, {"enabled": True, "days": 0}, {"enabled": True, "days": 366}):
            r = arm_call(self.endpoints, "PUT", SERVICE, {"properties": {"shareDeleteRetentionPolicy": body}},
                         api_version=API)
            self.assertEqual(r.status_code, 400, body)
        shown = arm_call(self.endpoints, "GET", SERVICE, api_version=API).json()
        self.assertFalse(shown["properties"]["shareDeleteRetentionPolicy"]["enabled"])


if __name__ == "__main__":
    unittest.main()
