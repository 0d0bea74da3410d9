"""Container soft delete, an account setting: off by default, turned on through ARM's
blobServices/default (containerDeleteRetentionPolicy, what `az storage account
blob-service-properties update --enable-container-delete-retention true` sends); then a deleted
container is listed with include=deleted (BlobServiceClient.list_containers(include_deleted=True))
and comes back with Restore Container (undelete_container), blobs, metadata and ACL included. For
30 s after the delete the service is still deleting it: no container of its name is made
(ContainerBeingDeleted). The bad inputs answer as the service does, with nothing changed."""
import datetime
import unittest

from azure.core.exceptions import HttpResponseError
from azure.storage.blob import (AccountSasPermissions, BlobServiceClient, ResourceTypes, generate_account_sas)

from harness import DEV_ACCOUNT, DEV_KEY, SUBSCRIPTION, StorageTestCase, arm_call, set_delete_retention, wait_for
from raw_storage import RawClient

GROUP = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/containersoftdelete"
SERVICE = f"{GROUP}/providers/Microsoft.Storage/storageAccounts/{DEV_ACCOUNT}/blobServices/default"
API = "2021-04-01"


class ContainerSoftDelete(StorageTestCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = arm_call(cls.endpoints, "PUT", GROUP, {"location": "eastus"}, api_version=API)
        assert r.status_code in (200, 201), r.text

    def setUp(self):
        self.svc = BlobServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.raw = RawClient(self.endpoints["blob"], version="2019-12-12")

    def set_retention(self, enabled, days=None):
        answered = set_delete_retention(self, SERVICE, "containerDeleteRetentionPolicy", enabled, days, API)
        return answered["properties"]["containerDeleteRetentionPolicy"]

    def error_of(self, call):
        with self.assertRaises(HttpResponseError) as caught:
            call()
        return caught.exception.status_code, caught.exception.error_code

    def deleted(self, name=None):
        """(name, version) of the deleted containers listed, of one name when given."""
        return [(c.name, c.version) for c in self.svc.list_containers(include_deleted=True)
                if c.deleted and (name is None or c.name == name)]

    def restore(self, name, version, headers=None):
        h = {"x-ms-deleted-container-name": name, "x-ms-deleted-container-version": version}
        h.update(headers or {})
        return self.raw.request("PUT", f"/{DEV_ACCOUNT}/{name}", [("restype", "container"), ("comp", "undelete")],
                                headers={k: v for k, v in h.items() if v is not None})

    def test_off_by_default_a_delete_is_for_good(self):
        shown = arm_call(self.endpoints, "GET", SERVICE, api_version=API).json()["properties"]
        self.assertFalse(shown.get("containerDeleteRetentionPolicy", {}).get("enabled", False))
        container = self.svc.create_container(self.name)
        container.upload_blob("b", b"data")
        container.delete_container()
        self.assertEqual(self.deleted(self.name), [])
        # Nothing is being deleted in the background: the name is free at once, empty.
        container = self.svc.create_container(self.name)
        self.assertEqual(list(container.list_blobs()), [])
        container.delete_container()

    def test_a_deleted_container_is_listed_and_comes_back_with_its_blobs(self):
        self.assertEqual(self.set_retention(True, 4), {"enabled": True, "days": 4})
        container = self.svc.create_container(self.name, metadata={"kept": "yes"})
        container.upload_blob("dir/b.txt", b"first")
        container.delete_container()
        self.assertEqual(self.error_of(container.get_container_properties), (404, "ContainerNotFound"))
        self.assertNotIn(self.name, [c.name for c in self.svc.list_containers()])
        [(name, version)] = self.deleted(self.name)
        self.assertEqual(len(version), 16)
        raw = self.raw.request("GET", f"/{DEV_ACCOUNT}/", [("comp", "list"), ("include", "deleted"),
                                                           ("prefix", self.name)])
        self.assertIn(b"<Deleted>true</Deleted>", raw.body)
        self.assertIn(b"<RemainingRetentionDays>4</RemainingRetentionDays>", raw.body)
        self.assertIn(b"<DeletedTime>", raw.body)
        # Still being deleted: no container of the name, and a second delete is answered as the first.
        self.assertEqual(self.error_of(lambda: self.svc.create_container(self.name)), (409, "ContainerBeingDeleted"))
        r = self.raw.request("DELETE", f"/{DEV_ACCOUNT}/{self.name}", [("restype", "container")])
        self.assertEqual(r.status, 202)
        self.assertEqual(len(self.deleted(self.name)), 1)

        restored = self.svc.undelete_container(self.name, version)
        self.assertEqual(restored.get_container_properties().metadata, {"kept": "yes"})
        self.assertEqual(restored.get_blob_client("dir/b.txt").download_blob().readall(), b"first")
        self.assertEqual(self.deleted(self.name), [])
        restored.delete_container()

    def test_restore_onto_an_existing_container_is_refused(self):
        self.set_retention(True)
        self.svc.create_container(self.name).delete_container()
        [(_, version)] = self.deleted(self.name)
        existing = f"{self.name[:50]}-existing"
        self.svc.create_container(existing)
        self.addCleanup(self.svc.delete_container, existing)
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{existing}", [("restype", "container"), ("comp", "undelete")],
                             headers={"x-ms-deleted-container-name": self.name,
                                      "x-ms-deleted-container-version": version})
        self.assertEqual((r.status, r.code), (409, "ContainerAlreadyExists"))
        self.assertEqual(len(self.deleted(self.name)), 1)

    def test_bad_input_changes_nothing(self):
        self.set_retention(True)
        self.svc.create_container(self.name).delete_container()
        [(_, version)] = self.deleted(self.name)
        cases = [
            ({"x-ms-deleted-container-version": None}, (400, "MissingRequiredHeader")),
            ({"x-ms-deleted-container-name": None}, (400, "MissingRequiredHeader")),
            ({"x-ms-deleted-container-version": "not-a-version"}, (400, "InvalidHeaderValue")),
            ({"x-ms-deleted-container-version": "01D6250A6E81EC48"}, (404, "ContainerNotFound")),
        ]
        for headers, expected in cases:
            r = self.restore(self.name, version, headers)
            self.assertEqual((r.status, r.code), expected, headers)
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}", [("restype", "container"), ("comp", "undelete")],
                             headers={"x-ms-deleted-container-name": "Bad_Name",
                                      "x-ms-deleted-container-version": version})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        self.assertEqual(self.deleted(self.name), [(self.name, version)])
        self.assertEqual(self.error_of(lambda: self.svc.get_container_client(self.name).get_container_properties()),
                         (404, "ContainerNotFound"))

    def test_an_account_sas_of_c_or_w_restores(self):
        self.set_retention(True)
        self.svc.create_container(self.name).delete_container()
        [(_, version)] = self.deleted(self.name)
        expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)

        def sas(permission):
            return generate_account_sas(DEV_ACCOUNT, DEV_KEY, ResourceTypes(container=True, service=True),
                                        AccountSasPermissions.from_string(permission), expiry)
        for refused in ("rdl",):
            client = BlobServiceClient(self.endpoints["blob"] + f"/{DEV_ACCOUNT}", credential=sas(refused))
            self.assertEqual(self.error_of(lambda: client.undelete_container(self.name, version)),
                             (403, "AuthorizationPermissionMismatch"))
        self.assertEqual(self.deleted(self.name), [(self.name, version)])
        client = BlobServiceClient(self.endpoints["blob"] + f"/{DEV_ACCOUNT}", credential=sas("c"))
        client.undelete_container(self.name, version)
        self.svc.get_container_client(self.name).get_container_properties()

    def test_deleted_containers_go_with_their_account(self):
        """An account deleted through ARM takes its deleted containers with it: one made again
        under its name lists none."""
        account = f"{GROUP}/providers/Microsoft.Storage/storageAccounts/softgone"

        def make_account():
            r = arm_call(self.endpoints, "PUT", account, {"location": "eastus", "kind": "StorageV2",
                                                          "sku": {"name": "Standard_LRS"}}, api_version=API)
            self.assertIn(r.status_code, (200, 202), r.text)
            wait_for(lambda: arm_call(self.endpoints, "GET", account, api_version=API).status_code == 200,
                     what="the account")
            key = arm_call(self.endpoints, "POST", f"{account}/listKeys", api_version=API).json()["keys"][0]["value"]
            return BlobServiceClient(f"{self.endpoints['blob']}/softgone", credential={"account_name": "softgone",
                                                                                      "account_key": key})
        svc = make_account()
        r = arm_call(self.endpoints, "PATCH", f"{account}/blobServices/default",
                     {"properties": {"containerDeleteRetentionPolicy": {"enabled": True}}}, api_version=API)
        self.assertEqual(r.status_code, 200, r.text)
        svc.create_container("kept").upload_blob("b", b"data")
        svc.delete_container("kept")
        self.assertEqual([c.name for c in svc.list_containers(include_deleted=True) if c.deleted], ["kept"])
        r = arm_call(self.endpoints, "DELETE", account, api_version=API)
        self.assertIn(r.status_code, (200, 204), r.text)
        svc = make_account()
        self.assertEqual(list(svc.list_containers(include_deleted=True)), [])
        svc.create_container("kept")  # nothing of the old one is being deleted either


if __name__ == "__main__":
    unittest.main()
