"""Copy File driven by azure.storage.fileshare: start_copy_from_url from a file of the same share,
another share, a share snapshot or another account (with the source's own SAS), complete at once
(x-ms-copy-status success, the copy properties on the copy), metadata and SMB properties as the
service takes them, Abort Copy File (nothing pending), and the service's answers to bad input (a
source that does not exist or cannot be read, a malformed URL, a leased destination), with
nothing stored by a refusal."""
import datetime
import unittest

from azure.core.exceptions import HttpResponseError
from azure.storage.fileshare import FileSasPermissions, ShareFileClient, ShareServiceClient, generate_file_sas

from harness import DEV_ACCOUNT, DEV_KEY, Emulator, StorageTestCase
from raw_storage import RawClient

OTHER = "copysource"
OTHER_KEY = "Y29weXNvdXJjZWtleWNvcHlzb3VyY2VrZXljb3B5c291cmNla2V5Y29weXNvdXJjZQ=="
EXPIRY = datetime.datetime(2099, 1, 1)


class FileCopy(StorageTestCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.emu = Emulator(args=["--account", f"{OTHER}:{OTHER_KEY}"]).start()
        cls.endpoints = cls.emu.endpoints
        from harness import connection_string
        cls.conn = connection_string(cls.endpoints)

    def setUp(self):
        self.svc = ShareServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.share = self.svc.create_share(self.name)
        self.addCleanup(lambda: self.svc.delete_share(self.name, delete_snapshots=True))
        self.source = self.share.get_file_client("source.bin")
        self.source.upload_file(b"a" * 1024, metadata={"from": "source"})
        self.raw = RawClient(self.endpoints["file"])

    def url(self, share, path, account=DEV_ACCOUNT, query=""):
        return f"{self.endpoints['file']}/{account}/{share}/{path}" + (f"?{query}" if query else "")

    def error_of(self, call):
        with self.assertRaises(HttpResponseError) as caught:
            call()
        return caught.exception.status_code, caught.exception.error_code

    def test_a_copy_completes_at_once_with_its_properties(self):
        copy = self.share.get_file_client("copy.bin")
        started = copy.start_copy_from_url(self.source.url)
        self.assertEqual(started["copy_status"], "success")
        props = copy.get_file_properties()
        self.assertEqual(props.size, 1024)
        self.assertEqual(props.metadata, {"from": "source"})  # the source's, none given
        self.assertEqual((props.copy.id, props.copy.status, props.copy.progress, props.copy.source),
                         (started["copy_id"], "success", "1024/1024", self.source.url))
        head = self.raw.request("HEAD", f"/{DEV_ACCOUNT}/{self.name}/copy.bin")
        self.assertRegex(head.headers["x-ms-copy-completion-time"], r"^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$")
        self.assertEqual(copy.download_file().readall(), b"a" * 1024)
        # Metadata and SMB properties given are the copy's; the source keeps its own.
        other = self.svc.create_share(self.name + "-b")
        self.addCleanup(self.svc.delete_share, self.name + "-b")
        there = other.get_file_client("there.bin")
        there.start_copy_from_url(self.source.url, metadata={"to": "there"}, file_attributes="Temporary|NoScrubData",
                                  file_creation_time="2017-05-10T17:52:33.9551860Z")
        props = there.get_file_properties()
        self.assertEqual(props.metadata, {"to": "there"})
        self.assertEqual(props.file_attributes, "Archive | Temporary | NoScrubData")
        self.assertEqual(props.creation_time.year, 2017)
        self.assertEqual(self.source.get_file_properties().metadata, {"from": "source"})
        # A new Create File over a copy is no copy any more.
        copy.create_file(10)
        self.assertIsNone(copy.get_file_properties().copy.id)
        # Abort: nothing is ever pending.
        self.assertEqual(self.error_of(lambda: there.abort_copy(props.copy.id)), (409, "NoPendingCopyOperation"))

    def test_sources_a_snapshot_and_another_account(self):
        snapshot = self.share.create_snapshot()["snapshot"]
        self.source.upload_file(b"b" * 10)
        copy = self.share.get_file_client("from-snapshot.bin")
        copy.start_copy_from_url(self.url(self.name, "source.bin", query=f"sharesnapshot={snapshot}"))
        self.assertEqual(copy.download_file().readall(), b"a" * 1024)
        # Another account's file: with a SAS of its own that reads it, not without.
        theirs = ShareServiceClient(self.endpoints["file"] + "/" + OTHER,
                                    credential={"account_name": OTHER, "account_key": OTHER_KEY})
        theirs.create_share("outside")
        self.addCleanup(theirs.delete_share, "outside")
        theirs.get_share_client("outside").get_file_client("f.txt").upload_file(b"theirs")
        target = self.share.get_file_client("from-other.txt")
        self.assertEqual(self.error_of(lambda: target.start_copy_from_url(self.url("outside", "f.txt", OTHER))),
                         (404, "CannotVerifyCopySource"))
        weak = generate_file_sas(OTHER, "outside", ["f.txt"], account_key=OTHER_KEY,
                                 permission=FileSasPermissions(write=True), expiry=EXPIRY)
        self.assertEqual(self.error_of(lambda: target.start_copy_from_url(self.url("outside", "f.txt", OTHER, weak))),
                         (403, "CannotVerifyCopySource"))
        sas = generate_file_sas(OTHER, "outside", ["f.txt"], account_key=OTHER_KEY,
                                permission=FileSasPermissions(read=True), expiry=EXPIRY)
        target.start_copy_from_url(self.url("outside", "f.txt", OTHER, sas))
        self.assertEqual(target.download_file().readall(), b"theirs")

    def test_bad_input_stores_nothing(self):
        target = self.share.get_file_client("target.bin")
        cases = [
            (self.url(self.name, "missing.bin"), (404, "CannotVerifyCopySource")),
            ("https://elsewhere.example/share/file", (404, "CannotVerifyCopySource")),
            ("not a url", (400, "InvalidHeaderValue")),
        ]
        for source, expected in cases:
            with self.subTest(source=source):
                r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/target.bin", headers={"x-ms-copy-source": source})
                self.assertEqual((r.status, r.code), expected, r.body)
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/target.bin",
                             headers={"x-ms-copy-source": self.source.url, "x-ms-file-permission-copy-mode": "copy"})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        self.assertEqual(self.error_of(target.get_file_properties), (404, "ResourceNotFound"))
        # A leased destination needs its lease.
        target.create_file(3)
        lease = target.acquire_lease()
        self.assertEqual(self.error_of(lambda: target.start_copy_from_url(self.source.url)), (412, "LeaseIdMissing"))
        self.assertEqual(target.get_file_properties().size, 3)
        target.start_copy_from_url(self.source.url, lease=lease)
        self.assertEqual(target.get_file_properties().size, 1024)
        # Abort Copy File's own headers.
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/target.bin", [("comp", "copy"), ("copyid", "x")],
                             headers={"x-ms-copy-action": "stop", "x-ms-lease-id": lease.id})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/nothing.bin", [("comp", "copy"), ("copyid", "x")],
                             headers={"x-ms-copy-action": "abort"})
        self.assertEqual((r.status, r.code), (404, "ResourceNotFound"))


if __name__ == "__main__":
    unittest.main()
