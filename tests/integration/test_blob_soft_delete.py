"""Blob soft delete, an account setting (the Blob service properties' delete retention policy,
which ARM's blobServices/default deleteRetentionPolicy also sets): off by default, as in the cloud;
on, Delete Blob keeps what it deletes, List Blobs shows it with include=deleted, and Undelete Blob
brings it back, through azure.storage.blob as the service serves it."""
import unittest

from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import RetentionPolicy

from harness import DEV_ACCOUNT, ContainerPerTest


class BlobSoftDelete(ContainerPerTest, unittest.TestCase):
    def retain(self, days):
        self.svc.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=True, days=days))
        self.addCleanup(lambda: self.svc.set_service_properties(delete_retention_policy=RetentionPolicy(enabled=False)))

    def listed(self, *include):
        return [(b.name, b.snapshot, b.deleted) for b in self.container.list_blobs(include=list(include))]

    def test_off_by_default_deletes_for_good(self):
        self.container.upload_blob("b", b"data")
        r = self.raw.request("DELETE", self.path("b"), headers={"x-ms-version": "2019-02-02"})
        self.assertEqual((r.status, r.headers.get("x-ms-delete-type-permanent")), (202, "true"))
        self.assertEqual(self.listed("deleted"), [])
        self.assertEqual(self.error_of(lambda: self.container.get_blob_client("b").undelete_blob()),
                         (404, "BlobNotFound"))

    def test_a_deleted_blob_is_listed_and_comes_back_with_its_snapshots(self):
        self.retain(2)
        blob = self.container.upload_blob("b", b"first", metadata={"kept": "yes"})
        snapshot = blob.create_snapshot()["snapshot"]
        r = self.raw.request("DELETE", self.path("b"), headers={"x-ms-delete-snapshots": "include"})
        self.assertEqual((r.status, r.headers.get("x-ms-delete-type-permanent")), (202, "false"))
        self.assertFalse(blob.exists())
        self.assertEqual(self.listed(), [])
        self.assertEqual(self.listed("deleted"), [("b", None, True)])
        self.assertEqual(self.listed("deleted", "snapshots"), [("b", snapshot, True), ("b", None, True)])
        deleted = next(iter(self.container.list_blobs(include=["deleted"])))
        self.assertIsNotNone(deleted.deleted_time)
        self.assertEqual(deleted.remaining_retention_days, 1)  # whole days left of 2
        # A blob of the name again: undelete brings back the snapshot, not the old blob.
        self.container.upload_blob("b", b"second")
        blob.undelete_blob()
        self.assertEqual(blob.download_blob().readall(), b"second")
        self.assertEqual(self.container.get_blob_client("b", snapshot=snapshot).download_blob().readall(), b"first")
        # The first blob stays deleted (a blob has the name); deleted again, the second comes back.
        self.assertEqual(self.listed("snapshots", "deleted"), [("b", snapshot, None), ("b", None, None), ("b", None, True)])
        blob.delete_blob(delete_snapshots="include")
        blob.undelete_blob()
        self.assertEqual(blob.download_blob().readall(), b"second")
        self.assertEqual(blob.get_blob_properties().metadata, {})
        self.assertEqual(self.listed("snapshots", "deleted"), [("b", snapshot, None), ("b", None, None), ("b", None, True)])

    def test_a_deleted_snapshot_alone(self):
        self.retain(1)
        blob = self.container.upload_blob("b", b"data")
        gone = blob.create_snapshot()["snapshot"]
        kept = blob.create_snapshot()["snapshot"]
        self.container.get_blob_client("b", snapshot=gone).delete_blob()
        self.assertEqual(self.error_of(lambda: self.container.get_blob_client("b", snapshot=gone).download_blob()),
                         (404, "BlobNotFound"))
        self.assertEqual(self.listed("snapshots"), [("b", kept, None), ("b", None, None)])
        self.assertEqual(self.listed("snapshots", "deleted"), [("b", gone, True), ("b", kept, None), ("b", None, None)])
        # Deleting the blob now needs no word about the deleted snapshot, only the live one.
        self.assertEqual(self.error_of(blob.delete_blob), (409, "SnapshotsPresent"))
        blob.undelete_blob()
        self.assertEqual(self.container.get_blob_client("b", snapshot=gone).download_blob().readall(), b"data")

    def test_bad_input_stores_nothing(self):
        self.retain(1)
        self.assertEqual(self.error_of(lambda: self.container.get_blob_client("never").undelete_blob()),
                         (404, "BlobNotFound"))
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/no-such-container/b", [("comp", "undelete")])
        self.assertEqual((r.status, r.code), (404, "ContainerNotFound"))
        self.assertEqual(self.listed("deleted", "snapshots"), [])
        # A deleted blob is no blob: reads and writes of its properties find nothing.
        blob = self.container.upload_blob("b", b"data")
        blob.delete_blob()
        self.assertRaises(ResourceNotFoundError, blob.get_blob_properties)
        self.assertRaises(ResourceNotFoundError, lambda: blob.set_blob_metadata({"a": "b"}))
        self.assertEqual(self.listed("deleted"), [("b", None, True)])


if __name__ == "__main__":
    unittest.main()
