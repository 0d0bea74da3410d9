"""File leases driven by azure.storage.fileshare: ShareFileClient.acquire_lease and the
ShareLeaseClient of a file (change, release, break), the lease in Get File's properties, every
write of a leased file refused without its lease id (and allowed with it), reads that name a lease
checked against it, and the service's answers to bad input (malformed lease ids, a finite
duration, renew, a missing file), with nothing changed by a refusal."""
import unittest
import uuid

from azure.core.exceptions import HttpResponseError
from azure.storage.fileshare import ContentSettings, ShareLeaseClient, ShareServiceClient

from harness import DEV_ACCOUNT, StorageTestCase
from raw_storage import RawClient


class FileLeases(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = ShareServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.share = self.svc.create_share(self.name)
        self.addCleanup(lambda: self.svc.delete_share(self.name))
        self.file = self.share.get_file_client("f.txt")
        self.file.upload_file(b"kept", metadata={"m": "1"})
        self.raw = RawClient(self.endpoints["file"])
        self.path = f"/{DEV_ACCOUNT}/{self.name}/f.txt"

    def error_of(self, call):
        with self.assertRaises(HttpResponseError) as caught:
            call()
        return caught.exception.status_code, caught.exception.error_code

    def lease_state(self):
        p = self.file.get_file_properties()
        return p.lease.state, p.lease.status, p.lease.duration

    def test_acquire_change_release_break(self):
        self.assertEqual(self.lease_state(), ("available", "unlocked", None))
        lease = self.file.acquire_lease()  # a new id, infinite
        self.assertEqual(len(lease.id), 36)
        self.assertEqual(self.lease_state(), ("leased", "locked", "infinite"))
        # Acquiring again with the same id keeps it; another id is refused.
        ShareLeaseClient(self.file, lease_id=lease.id).acquire()
        self.assertEqual(self.error_of(lambda: ShareLeaseClient(self.file, lease_id=str(uuid.uuid4())).acquire()),
                         (409, "LeaseAlreadyPresent"))
        new_id = str(uuid.uuid4())
        lease.change(new_id)
        self.assertEqual(lease.id, new_id)
        lease.release()
        self.assertEqual(self.lease_state(), ("available", "unlocked", None))
        self.assertEqual(self.error_of(ShareLeaseClient(self.file, lease_id=new_id).release),
                         (409, "LeaseIdMismatchWithLeaseOperation"))
        lease = self.file.acquire_lease(lease_id=str(uuid.uuid4()))
        r = self.raw.request("PUT", self.path, [("comp", "lease")], headers={"x-ms-lease-action": "break"})
        self.assertEqual((r.status, r.headers.get("x-ms-lease-id")), (202, lease.id))  # broken at once
        self.assertNotIn("x-ms-lease-time", r.headers)  # (a share's break says how long is left)
        self.assertEqual(self.lease_state(), ("broken", "unlocked", None))
        self.file.upload_range(b"KEPT", offset=0, length=4)  # a broken lease guards nothing
        self.assertEqual(self.error_of(lambda: lease.change(str(uuid.uuid4()))),
                         (409, "LeaseNotPresentWithLeaseOperation"))
        self.file.acquire_lease()

    def test_writes_need_the_lease_and_reads_that_name_one_check_it(self):
        lease = self.file.acquire_lease()
        other = str(uuid.uuid4())
        before = self.file.get_file_properties()
        writes = [lambda **kw: self.file.upload_range(b"XXXX", offset=0, length=4, **kw),
                  lambda **kw: self.file.clear_range(offset=0, length=512, **kw),
                  lambda **kw: self.file.set_file_metadata({"m": "2"}, **kw),
                  lambda **kw: self.file.resize_file(8, **kw),
                  lambda **kw: self.file.set_http_headers(ContentSettings(content_type="text/plain"), **kw),
                  lambda **kw: self.file.create_file(9, **kw),
                  lambda **kw: self.file.delete_file(**kw)]
        for write in writes:
            self.assertEqual(self.error_of(write), (412, "LeaseIdMissing"))
            self.assertEqual(self.error_of(lambda: write(lease=other)), (412, "LeaseIdMismatchWithFileOperation"))
        after = self.file.get_file_properties()
        self.assertEqual((after.etag, after.size, after.metadata), (before.etag, 4, {"m": "1"}))
        self.assertEqual(self.file.download_file().readall(), b"kept")
        # Reads without an id go through; one that names another lease is refused.
        self.assertEqual(self.error_of(lambda: self.file.get_file_properties(lease=other)),
                         (412, "LeaseIdMismatchWithFileOperation"))
        self.assertEqual(self.error_of(lambda: self.file.download_file(lease=other)),
                         (412, "LeaseIdMismatchWithFileOperation"))
        self.assertEqual(self.error_of(lambda: self.file.get_ranges(lease=other)),
                         (412, "LeaseIdMismatchWithFileOperation"))
        self.assertEqual(self.file.get_file_properties(lease=lease).size, 4)
        # With the id every write goes through, and the lease stays.
        self.file.upload_range(b"NEW!", offset=0, length=4, lease=lease)
        self.file.set_file_metadata({"m": "2"}, lease=lease)
        self.assertEqual(self.file.download_file(lease=lease).readall(), b"NEW!")
        self.assertEqual(self.lease_state(), ("leased", "locked", "infinite"))
        self.file.delete_file(lease=lease)

    def test_an_id_where_no_lease_is_held(self):
        self.assertEqual(self.error_of(lambda: self.file.set_file_metadata({"m": "2"}, lease=str(uuid.uuid4()))),
                         (412, "LeaseNotPresentWithFileOperation"))
        self.assertEqual(self.file.get_file_properties().metadata, {"m": "1"})

    def test_bad_input(self):
        def lease_call(headers, path=None):
            r = self.raw.request("PUT", path or self.path, [("comp", "lease")], headers=headers)
            return r.status, r.headers.get("x-ms-error-code")

        for bad in ("lease", "1234", "6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d1", "{6bb1a5a4-4c43-4f4b-9a5b-2b5c0c3b1d10"):
            self.assertEqual(lease_call({"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1",
                                         "x-ms-proposed-lease-id": bad}), (400, "InvalidHeaderValue"), bad)
        for duration in ("15", "60", "0", "abc"):
            self.assertEqual(lease_call({"x-ms-lease-action": "acquire", "x-ms-lease-duration": duration}),
                             (400, "InvalidHeaderValue"), duration)
        self.assertEqual(lease_call({"x-ms-lease-action": "acquire"}), (400, "MissingRequiredHeader"))
        self.assertEqual(lease_call({"x-ms-lease-action": "steal"}), (400, "InvalidHeaderValue"))
        self.assertEqual(lease_call({"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"},
                                    f"/{DEV_ACCOUNT}/{self.name}/missing.txt"), (404, "ResourceNotFound"))
        self.assertEqual(self.lease_state(), ("available", "unlocked", None))
        lease = self.file.acquire_lease()
        self.assertEqual(lease_call({"x-ms-lease-action": "renew", "x-ms-lease-id": lease.id}),
                         (400, "InvalidHeaderValue"))
        self.assertEqual(lease_call({"x-ms-lease-action": "change", "x-ms-lease-id": lease.id}),
                         (400, "MissingRequiredHeader"))
        # A malformed id on a write is refused before the lease is looked at.
        r = self.raw.request("PUT", self.path, [("comp", "metadata")],
                             headers={"x-ms-lease-id": "not-a-guid", "x-ms-meta-m": "3"})
        self.assertEqual((r.status, r.headers.get("x-ms-error-code")), (400, "InvalidHeaderValue"))
        self.assertEqual(self.file.get_file_properties().metadata, {"m": "1"})
        self.assertEqual(self.lease_state(), ("leased", "locked", "infinite"))
        # A share snapshot's files take no leases, and have none.
        snapshot = self.share.create_snapshot()["snapshot"]
        r = self.raw.request("PUT", self.path, [("comp", "lease"), ("sharesnapshot", snapshot)],
                             headers={"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"})
        self.assertEqual((r.status, r.headers.get("x-ms-error-code")), (400, "ShareSnapshotOperationNotSupported"))
        r = self.raw.request("HEAD", self.path, [("sharesnapshot", snapshot)])
        self.assertEqual(r.status, 200)
        self.assertNotIn("x-ms-lease-state", r.headers)
        self.svc.get_share_client(self.name, snapshot=snapshot).delete_share()

    def test_rename_of_a_leased_file(self):
        lease = self.file.acquire_lease()
        self.assertEqual(self.error_of(lambda: self.file.rename_file("g.txt")), (412, "LeaseIdMissing"))
        self.share.get_file_client("other.txt").upload_file(b"o")
        other = self.share.get_file_client("other.txt")
        self.assertEqual(self.error_of(lambda: other.rename_file("f.txt", overwrite=True)), (412, "LeaseIdMissing"))
        moved = self.file.rename_file("g.txt", source_lease=lease)
        self.assertEqual(moved.get_file_properties().lease.state, "leased")
        self.assertEqual(moved.download_file().readall(), b"kept")


if __name__ == "__main__":
    unittest.main()
