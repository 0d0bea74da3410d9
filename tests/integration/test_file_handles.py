"""List Handles and Force Close Handles: the emulator serves no SMB, so no handle is ever open. A
listing is empty (in the service's XML), a close closes none (x-ms-number-of-handles-closed and
-failed: 0), on a share, a directory, a file or a share snapshot; what is not there is 404, a
malformed handle id or none 400."""
import unittest

from azure.core.exceptions import ResourceNotFoundError
from azure.storage.fileshare import ShareServiceClient

from harness import DEV_ACCOUNT, StorageTestCase
from raw_storage import RawClient


class FileHandles(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = ShareServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.share = self.svc.create_share(self.name)
        self.addCleanup(lambda: self.svc.delete_share(self.name, delete_snapshots=True))
        self.dir = self.share.create_directory("wut")
        self.file = self.dir.get_file_client("bla.txt")
        self.file.upload_file(b"x")
        self.raw = RawClient(self.endpoints["file"], version="2019-07-07")

    def test_the_sdk_lists_no_handles_and_closes_none(self):
        root = self.share.get_directory_client("")
        for client in (root, self.dir, self.file):
            self.assertEqual(list(client.list_handles()), [])
        self.assertEqual(list(root.list_handles(recursive=True)), [])
        self.assertEqual(self.file.close_all_handles(), {"closed_handles_count": 0, "failed_handles_count": 0})
        self.assertEqual(self.dir.close_all_handles(recursive=True), {"closed_handles_count": 0, "failed_handles_count": 0})
        snapshot = self.share.create_snapshot()
        old = self.svc.get_share_client(self.name, snapshot=snapshot).get_directory_client("wut")
        self.assertEqual(list(old.list_handles()), [])

    def test_the_answers_are_the_services(self):
        r = self.raw.request("GET", f"/{DEV_ACCOUNT}/{self.name}", [("comp", "listhandles")], headers={"x-ms-recursive": "true"})
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.headers["content-type"], "application/xml")
        self.assertIn(b"<EnumerationResults><Entries /><NextMarker /></EnumerationResults>", r.body)
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/wut/bla.txt", [("comp", "forceclosehandles")],
                             headers={"x-ms-handle-id": "31248613640"})
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual((r.headers["x-ms-number-of-handles-closed"], r.headers["x-ms-number-of-handles-failed"]), ("0", "0"))

    def test_bad_input(self):
        path = f"/{DEV_ACCOUNT}/{self.name}/wut/bla.txt"
        for headers, expected in (({}, (400, "MissingRequiredHeader")),
                                  ({"x-ms-handle-id": "abc"}, (400, "InvalidHeaderValue")),
                                  ({"x-ms-handle-id": "-1"}, (400, "InvalidHeaderValue")),
                                  ({"x-ms-handle-id": "*", "x-ms-recursive": "maybe"}, (400, "InvalidHeaderValue"))):
            r = self.raw.request("PUT", path, [("comp", "forceclosehandles")], headers=headers)
            self.assertEqual((r.status, r.code), expected, headers)
        r = self.raw.request("GET", path, [("comp", "listhandles"), ("maxresults", "0")])
        self.assertEqual((r.status, r.code), (400, "InvalidQueryParameterValue"))
        r = self.raw.request("DELETE", path, [("comp", "listhandles")])
        self.assertEqual(r.status, 400)
        for where, expected in ((f"/{DEV_ACCOUNT}/missing-share/wut/bla.txt", "ShareNotFound"),
                                (f"/{DEV_ACCOUNT}/missing-share", "ShareNotFound"),
                                (f"/{DEV_ACCOUNT}/{self.name}/wut/nothing", "ResourceNotFound")):
            r = self.raw.request("GET", where, [("comp", "listhandles")])
            self.assertEqual((r.status, r.code), (404, expected), where)
        r = self.raw.request("GET", f"/{DEV_ACCOUNT}/{self.name}", [("comp", "listhandles"),
                                                                     ("sharesnapshot", "2019-05-08T23:27:24.0000000Z")])
        self.assertEqual((r.status, r.code), (404, "ShareSnapshotNotFound"))
        with self.assertRaises(ResourceNotFoundError):
            list(self.share.get_directory_client("nothing").list_handles())


if __name__ == "__main__":
    unittest.main()
