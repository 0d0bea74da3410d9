"""Share snapshots driven by azure.storage.fileshare: ShareClient.create_snapshot, a
ShareClient(snapshot=...) and the clients below it reading what the share held when the snapshot
was taken, listings with include_snapshots, deleting one snapshot or a share with its snapshots,
and the service's answers to bad input (a snapshot that does not exist, a malformed one, a write
to a snapshot, a share deleted while it has snapshots), with nothing changed by a refusal."""
import unittest

from azure.core.exceptions import HttpResponseError
from azure.storage.fileshare import ShareClient, ShareServiceClient

from harness import DEV_ACCOUNT, StorageTestCase
from raw_storage import RawClient


class FileSnapshots(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = ShareServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.share = self.svc.create_share(self.name, metadata={"stage": "base"})
        self.addCleanup(self._delete_share)
        self.raw = RawClient(self.endpoints["file"])

    def _delete_share(self):
        try:
            self.svc.delete_share(self.name, delete_snapshots=True)
        except HttpResponseError:
            pass

    def at(self, snapshot, name=None):
        client = ShareClient.from_connection_string(self.conn, name or self.name, snapshot=snapshot)
        self.addCleanup(client.close)
        return client

    def error_of(self, call):
        with self.assertRaises(HttpResponseError) as caught:
            call()
        return caught.exception.status_code, caught.exception.error_code

    def listed(self):
        return [(s.name, s.snapshot) for s in self.svc.list_shares(name_starts_with=self.name, include_snapshots=True)]

    def test_a_snapshot_reads_as_the_share_was(self):
        self.share.create_directory("data")
        f = self.share.get_file_client("data/model.bin")
        f.upload_file(b"a" * 5000, metadata={"epoch": "1"})
        taken = self.share.create_snapshot()
        snapshot = taken["snapshot"]
        self.assertRegex(snapshot, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.0000000Z$")
        self.assertEqual(taken["etag"], self.share.get_share_properties().etag)  # no metadata given: the share's
        # The share changes afterwards.
        f.upload_range(b"b" * 100, offset=0, length=100)
        f.set_file_metadata({"epoch": "2"})
        self.share.get_file_client("data/new.txt").upload_file(b"new")
        self.share.set_share_metadata({"stage": "later"})
        old = self.at(snapshot)
        self.assertEqual(old.get_share_properties().metadata, {"stage": "base"})
        self.assertEqual(old.get_share_properties().snapshot, snapshot)
        self.assertEqual([e["name"] for e in old.list_directories_and_files("data")], ["model.bin"])
        frozen = old.get_file_client("data/model.bin")
        self.assertEqual(frozen.download_file().readall(), b"a" * 5000)
        self.assertEqual(frozen.download_file(offset=10, length=5).readall(), b"aaaaa")
        self.assertEqual(frozen.get_file_properties().metadata, {"epoch": "1"})
        self.assertEqual(frozen.get_ranges(), [{"start": 0, "end": 4999}])
        self.assertEqual(old.get_directory_client("data").get_directory_properties().is_directory, True)
        self.assertEqual(f.download_file().readall()[:101], b"b" * 100 + b"a")
        self.assertEqual(self.listed(), [(self.name, snapshot), (self.name, None)])
        self.assertEqual([s.name for s in self.svc.list_shares(name_starts_with=self.name)], [self.name])

    def test_snapshot_metadata_and_deletes(self):
        first = self.share.create_snapshot(metadata={"stage": "snap"})["snapshot"]
        second = self.share.create_snapshot()["snapshot"]
        self.assertLess(first, second)
        self.assertEqual(self.at(first).get_share_properties().metadata, {"stage": "snap"})
        self.assertEqual(self.at(second).get_share_properties().metadata, {"stage": "base"})
        # A share with snapshots goes only with them.
        self.assertEqual(self.error_of(self.share.delete_share), (409, "ShareHasSnapshots"))
        self.at(first).delete_share()
        self.assertEqual(self.listed(), [(self.name, second), (self.name, None)])
        self.assertEqual(self.error_of(self.at(first).get_share_properties), (404, "ShareSnapshotNotFound"))
        self.share.delete_share(delete_snapshots=True)
        self.assertEqual(self.listed(), [])

    def test_bad_input(self):
        self.share.get_file_client("f.txt").upload_file(b"kept")
        snapshot = self.share.create_snapshot()["snapshot"]
        before = self.listed()
        # A snapshot that does not exist, of a share that exists or not.
        missing = self.at("2001-01-01T00:00:00.0000000Z")
        self.assertEqual(self.error_of(missing.get_share_properties), (404, "ShareSnapshotNotFound"))
        self.assertEqual(self.error_of(lambda: missing.get_file_client("f.txt").download_file()),
                         (404, "ShareSnapshotNotFound"))
        self.assertEqual(self.error_of(missing.delete_share), (404, "ShareSnapshotNotFound"))
        other = self.at(snapshot, "no-such-share")
        self.assertEqual(self.error_of(other.get_share_properties), (404, "ShareNotFound"))
        self.assertEqual(self.error_of(self.svc.get_share_client("no-such-share").create_snapshot), (404, "ShareNotFound"))
        # A file the snapshot does not hold.
        self.assertEqual(self.error_of(self.at(snapshot).get_file_client("nope.txt").get_file_properties),
                         (404, "ResourceNotFound"))
        # Malformed values.
        for value in ("garbage", "2020-01-15", "2020-13-01T00:00:00Z", "2020-01-15T23:54:16"):
            r = self.raw.request("GET", f"/{DEV_ACCOUNT}/{self.name}", [("restype", "share"), ("sharesnapshot", value)])
            self.assertEqual((r.status, r.headers.get("x-ms-error-code")), (400, "InvalidQueryParameterValue"), value)
            self.assertIn(b"<QueryParameterName>sharesnapshot</QueryParameterName>"
                          if b"<QueryParameterName>" in r.body else b"QueryParameterName:sharesnapshot", r.body)
        # Writes to a snapshot are refused, and change nothing.
        old = self.at(snapshot)
        frozen = old.get_file_client("f.txt")
        for write in (lambda: frozen.upload_file(b"changed"), lambda: frozen.set_file_metadata({"x": "y"}),
                      lambda: frozen.delete_file(), lambda: old.create_directory("d"),
                      lambda: old.set_share_metadata({"x": "y"}), lambda: old.set_share_quota(1),
                      lambda: frozen.upload_range(b"x", offset=0, length=1)):
            self.assertEqual(self.error_of(write), (400, "ShareSnapshotOperationNotSupported"))
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}",
                             [("restype", "share"), ("comp", "snapshot"), ("sharesnapshot", snapshot)])
        self.assertEqual((r.status, r.headers.get("x-ms-error-code")), (400, "ShareSnapshotOperationNotSupported"))
        r = self.raw.request("DELETE", f"/{DEV_ACCOUNT}/{self.name}", [("restype", "share")],
                             headers={"x-ms-delete-snapshots": "only"})
        self.assertEqual((r.status, r.headers.get("x-ms-error-code")), (400, "InvalidHeaderValue"))
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/renamed.txt", [("comp", "rename")],
                             headers={"x-ms-version": "2021-06-08", "x-ms-file-rename-source":
                                      f"{self.endpoints['file']}/{DEV_ACCOUNT}/{self.name}/f.txt?sharesnapshot={snapshot}"})
        self.assertEqual((r.status, r.headers.get("x-ms-error-code")), (400, "ShareSnapshotOperationNotSupported"))
        self.assertEqual(self.share.get_file_client("f.txt").download_file().readall(), b"kept")
        self.assertEqual(frozen.download_file().readall(), b"kept")
        self.assertEqual(frozen.get_file_properties().metadata, {})
        self.assertEqual(self.listed(), before)

    def test_a_snapshot_is_leased_apart_from_its_share(self):
        snapshot = self.share.create_snapshot()["snapshot"]
        lease = self.at(snapshot).acquire_lease(lease_duration=-1)
        self.assertEqual(self.at(snapshot).get_share_properties().lease.state, "leased")
        self.assertEqual(self.share.get_share_properties().lease.state, "available")
        self.assertEqual(self.error_of(lambda: self.share.delete_share(delete_snapshots=True)),
                         (409, "DeleteShareWhenSnapshotLeased"))
        self.assertEqual(self.error_of(self.at(snapshot).delete_share), (412, "LeaseIdMissing"))
        path = f"/{DEV_ACCOUNT}/{self.name}"
        r = self.raw.request("PUT", path, [("restype", "share"), ("comp", "lease"), ("sharesnapshot", snapshot)],
                             headers={"x-ms-version": "2020-02-10", "x-ms-lease-action": "release", "x-ms-lease-id": lease.id})
        self.assertEqual((r.status, r.headers.get("x-ms-lease-time")), (200, "0"))
        self.share.delete_share(delete_snapshots=True)
        self.assertEqual(self.listed(), [])

    def test_a_share_deleted_twice_at_once_answers_both(self):
        # Clients that delete each share a listing names delete a share listed with its
        # snapshot twice; the service, deleting it in the background, accepts both.
        self.share.create_snapshot()
        names = [s.name for s in self.svc.list_shares(name_starts_with=self.name, include_snapshots=True)]
        self.assertEqual(names, [self.name, self.name])
        for name in names:
            self.svc.delete_share(name, delete_snapshots=True)
        self.assertEqual(self.listed(), [])
        self.assertEqual(self.error_of(self.share.get_share_properties), (404, "ShareNotFound"))


if __name__ == "__main__":
    unittest.main()
