"""Leases on blobs and containers through azure.storage.blob: the lease operations, what a lease
keeps others from doing, and how it shows in properties and listings."""
import time
import unittest
import uuid

from azure.core.exceptions import HttpResponseError, ResourceExistsError
from azure.storage.blob import BlobLeaseClient, BlobServiceClient

from harness import DEV_ACCOUNT, StorageTestCase
from raw_storage import RawClient


class BlobLeases(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = BlobServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.container = self.svc.create_container(self.name)
        self.addCleanup(self.delete_container)
        self.blob = self.container.get_blob_client("leased.txt")
        self.blob.upload_blob(b"first")

    def delete_container(self):
        # Whatever lease a test left on its container is broken first.
        try:
            BlobLeaseClient(self.container).break_lease(lease_break_period=0)
        except HttpResponseError:
            pass  # none
        self.container.delete_container()

    def error_of(self, call):
        with self.assertRaises(HttpResponseError) as caught:
            call()
        return caught.exception.status_code, caught.exception.error_code

    def test_a_leased_blob_is_changed_by_its_holder_only(self):
        lease = self.blob.acquire_lease(lease_duration=-1)
        props = self.blob.get_blob_properties()
        self.assertEqual((props.lease.status, props.lease.state, props.lease.duration), ("locked", "leased", "infinite"))
        # Without the lease, or with another: 412, and nothing changes.
        for call in (lambda: self.blob.upload_blob(b"second", overwrite=True),
                     lambda: self.blob.set_blob_metadata({"a": "b"}),
                     lambda: self.blob.set_http_headers(),
                     lambda: self.blob.stage_block("YmxvY2s=", b"x"),
                     lambda: self.blob.delete_blob()):
            self.assertEqual(self.error_of(call), (412, "LeaseIdMissing"))
        other = str(uuid.uuid4())
        self.assertEqual(self.error_of(lambda: self.blob.upload_blob(b"second", overwrite=True, lease=other)),
                         (412, "LeaseIdMismatchWithBlobOperation"))
        self.assertEqual(self.blob.download_blob().readall(), b"first")
        # Reads need no lease, but one that is named must be the blob's.
        self.assertEqual(self.error_of(lambda: self.blob.get_blob_properties(lease=other)),
                         (412, "LeaseIdMismatchWithBlobOperation"))
        # The holder writes; the lease stays on the new body.
        self.blob.upload_blob(b"second", overwrite=True, lease=lease)
        self.blob.set_blob_metadata({"owner": "me"}, lease=lease)
        self.assertEqual(self.blob.get_blob_properties(lease=lease).lease.state, "leased")
        # Copying onto it needs the lease too.
        source = self.container.get_blob_client("source.txt")
        source.upload_blob(b"copied")
        self.assertEqual(self.error_of(lambda: self.blob.start_copy_from_url(source.url)), (412, "LeaseIdMissing"))
        lease.release()
        self.assertEqual(self.blob.get_blob_properties().lease.state, "available")
        self.blob.delete_blob()

    def test_lease_operations_follow_the_services_states(self):
        proposed = str(uuid.uuid4())
        lease = self.blob.acquire_lease(lease_duration=15, lease_id=proposed)
        self.assertEqual(lease.id, proposed)
        self.assertEqual(self.blob.get_blob_properties().lease.duration, "fixed")
        self.assertEqual(self.error_of(lambda: self.blob.acquire_lease(lease_duration=-1)), (409, "LeaseAlreadyPresent"))
        lease.renew()
        changed = str(uuid.uuid4())
        lease.change(changed)
        self.assertEqual(lease.id, changed)
        stale = BlobLeaseClient(self.blob, lease_id=proposed)
        self.assertEqual(self.error_of(stale.renew), (409, "LeaseIdMismatchWithLeaseOperation"))
        self.assertEqual(self.error_of(lambda: self.blob.acquire_lease(lease_duration=10)), (400, "InvalidHeaderValue"))
        # Break: breaking for the period, then broken; a broken lease cannot be renewed, and the
        # blob is free.
        remaining = lease.break_lease(lease_break_period=2)
        self.assertIn(remaining, (1, 2))
        self.assertEqual(self.blob.get_blob_properties().lease.state, "breaking")
        self.assertEqual(self.error_of(lease.renew), (409, "LeaseIsBrokenAndCannotBeRenewed"))
        self.assertEqual(self.error_of(lambda: lease.change(str(uuid.uuid4()))), (409, "LeaseIsBreakingAndCannotBeChanged"))
        deadline = time.monotonic() + 10
        while self.blob.get_blob_properties().lease.state != "broken":
            self.assertLess(time.monotonic(), deadline, "the lease never broke")
            time.sleep(0.2)
        self.assertEqual(self.blob.get_blob_properties().lease.status, "unlocked")
        self.assertEqual(self.error_of(lease.renew), (409, "LeaseIsBrokenAndCannotBeRenewed"))
        self.blob.set_blob_metadata({"free": "again"})  # a write ends a broken lease
        self.assertEqual(self.blob.get_blob_properties().lease.state, "available")
        self.assertEqual(self.error_of(lambda: lease.break_lease()), (409, "LeaseNotPresentWithLeaseOperation"))
        fresh = self.blob.acquire_lease(lease_duration=-1)
        self.assertEqual(lease.break_lease(lease_break_period=0), 0)
        self.assertNotEqual(fresh.id, lease.id)
        self.assertEqual(self.blob.get_blob_properties().lease.state, "broken")

    def test_a_leased_container_is_deleted_by_its_holder_only(self):
        lease = self.container.acquire_lease(lease_duration=-1)
        props = self.container.get_container_properties()
        self.assertEqual((props.lease.status, props.lease.state, props.lease.duration), ("locked", "leased", "infinite"))
        listed = next(c for c in self.svc.list_containers(name_starts_with=self.name) if c.name == self.name)
        self.assertEqual((listed.lease.state, listed.lease.duration), ("leased", "infinite"))
        self.assertEqual(self.error_of(self.container.delete_container), (412, "LeaseIdMissing"))
        self.assertEqual(self.error_of(lambda: self.container.delete_container(lease=str(uuid.uuid4()))),
                         (412, "LeaseIdMismatchWithContainerOperation"))
        # Its blobs are not its lease's: they are written as before.
        self.container.get_blob_client("inside").upload_blob(b"ok")
        # Metadata takes the lease if one is named.
        self.container.set_container_metadata({"a": "1"})
        self.assertEqual(self.error_of(lambda: self.container.set_container_metadata({"a": "2"}, lease=str(uuid.uuid4()))),
                         (412, "LeaseIdMismatchWithContainerOperation"))
        self.container.set_container_metadata({"a": "3"}, lease=lease)
        self.container.delete_container(lease=lease)
        with self.assertRaises(HttpResponseError):
            self.container.get_container_properties()
        self.svc.create_container(self.name)  # for the cleanup

    def test_listings_show_a_blobs_lease(self):
        self.blob.acquire_lease(lease_duration=-1)
        listed = {b.name: b for b in self.container.list_blobs()}
        self.assertEqual((listed["leased.txt"].lease.status, listed["leased.txt"].lease.state), ("locked", "leased"))
        self.assertEqual(listed["leased.txt"].lease.duration, "infinite")

    def test_bad_lease_requests_are_refused(self):
        raw = RawClient(self.endpoints["blob"])
        path = f"/{DEV_ACCOUNT}/{self.name}/leased.txt"
        cases = [({}, 400, "MissingRequiredHeader"),
                 ({"x-ms-lease-action": "steal"}, 400, "InvalidHeaderValue"),
                 ({"x-ms-lease-action": "acquire"}, 400, "MissingRequiredHeader"),
                 ({"x-ms-lease-action": "acquire", "x-ms-lease-duration": "soon"}, 400, "InvalidHeaderValue"),
                 ({"x-ms-lease-action": "break", "x-ms-lease-break-period": "61"}, 400, "InvalidHeaderValue"),
                 ({"x-ms-lease-action": "release"}, 400, "MissingRequiredHeader")]
        for headers, status, code in cases:
            with self.subTest(headers=headers):
                r = raw.request("PUT", path, [("comp", "lease")], headers=headers)
                self.assertEqual((r.status, r.code), (status, code), r.body)
        missing = raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/nothing", [("comp", "lease")],
                              headers={"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"})
        self.assertEqual((missing.status, missing.code), (404, "BlobNotFound"))
        self.assertEqual(self.blob.get_blob_properties().lease.state, "available")

    def test_a_lease_survives_a_restart(self):
        lease = self.blob.acquire_lease(lease_duration=-1)
        self.emu.stop()
        self.emu.start()
        self.__class__.endpoints = self.emu.endpoints
        from harness import connection_string
        self.__class__.conn = connection_string(self.emu.endpoints)
        svc = BlobServiceClient.from_connection_string(self.conn)
        blob = svc.get_blob_client(self.name, "leased.txt")
        self.assertEqual(blob.get_blob_properties().lease.state, "leased")
        with self.assertRaises(HttpResponseError):
            blob.delete_blob()
        BlobLeaseClient(blob, lease_id=lease.id).release()
        self.container = svc.get_container_client(self.name)


if __name__ == "__main__":
    unittest.main()
