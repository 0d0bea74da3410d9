"""Put Range From URL driven by azure.storage.fileshare (ShareFileClient.upload_range_from_url): a
range of another file (same share, another share, a share snapshot, through the source's SAS or a
share policy) written into a file, its CRC64 answered, the bytes on disk at once (what a mount or
job reads), and the service's answers to bad input (a source that cannot be read or does not
exist, a source range past its end or of another length, a leased destination), nothing written
by a refusal."""
import base64
import datetime
import os
import unittest

from azure.core.exceptions import HttpResponseError
from azure.storage.fileshare import AccessPolicy, ShareServiceClient, generate_file_sas

from harness import DEV_ACCOUNT, DEV_KEY, StorageTestCase
from raw_storage import RawClient

EXPIRY = datetime.datetime(2099, 1, 1)


class RangeFromUrl(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = ShareServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.share = self.svc.create_share(self.name)
        self.addCleanup(lambda: self.svc.delete_share(self.name, delete_snapshots=True))
        self.source = self.share.get_file_client("source.bin")
        self.source.upload_file(bytes(range(256)) * 8)  # 2 KiB
        self.target = self.share.get_file_client("target.bin")
        self.target.create_file(4096)
        self.raw = RawClient(self.endpoints["file"], version="2020-02-10")

    def source_url(self, path="source.bin", share=None, **sas):
        share = share or self.name
        token = generate_file_sas(DEV_ACCOUNT, share, path.split("/"), account_key=DEV_KEY,
                                  **({"permission": "r", "expiry": EXPIRY} | sas))
        return f"{self.endpoints['file']}/{DEV_ACCOUNT}/{share}/{path}?{token}"

    def error_of(self, call):
        with self.assertRaises(HttpResponseError) as caught:
            call()
        return caught.exception.status_code, caught.exception.error_code

    def put(self, source, range_, source_range, **headers):
        return self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/target.bin", [("comp", "range")],
                                headers={"x-ms-copy-source": source, "x-ms-range": range_,
                                         "x-ms-source-range": source_range, "x-ms-write": "update", **headers})

    def test_a_range_of_another_file_is_written(self):
        answer = self.target.upload_range_from_url(self.source_url(), offset=1024, length=512, source_offset=256)
        self.assertIsNotNone(answer["etag"])
        data = self.target.download_file().readall()
        expected = bytes(range(256)) * 8
        self.assertEqual(data[1024:1536], expected[256:768])
        self.assertEqual(data[:1024], b"\0" * 1024)
        # Listed as written (the disk's blocks hold it: the range may come out wider, never narrower).
        ranges = [(r["start"], r["end"]) for r in self.target.get_ranges()]
        self.assertTrue(any(start <= 1024 and end >= 1535 for start, end in ranges), ranges)
        on_disk = os.path.join(self.emu.location, "storage", DEV_ACCOUNT, "shares", self.name, "target.bin")
        with open(on_disk, "rb") as f:
            f.seek(1024)
            self.assertEqual(f.read(512), expected[256:768])
        # The answer names the range's CRC64, asked or not.
        r = self.put(self.source_url(), "bytes=0-511", "bytes=0-511")
        self.assertEqual(r.status, 201, r.body)
        self.assertEqual(len(base64.b64decode(r.headers["x-ms-content-crc64"])), 8)
        self.assertEqual(r.headers["x-ms-request-server-encrypted"], "true")

    def test_from_a_snapshot_and_through_a_share_policy(self):
        snapshot = self.share.create_snapshot()["snapshot"]
        self.source.upload_file(b"z" * 2048)  # the share moves on; the snapshot keeps the old bytes
        token = generate_file_sas(DEV_ACCOUNT, self.name, ["source.bin"], account_key=DEV_KEY, permission="r",
                                  expiry=EXPIRY)
        url = f"{self.endpoints['file']}/{DEV_ACCOUNT}/{self.name}/source.bin?sharesnapshot={snapshot}&{token}"
        self.target.upload_range_from_url(url, offset=0, length=256, source_offset=0)
        self.assertEqual(self.target.download_file(offset=0, length=256).readall(), bytes(range(256)))
        self.share.set_share_access_policy({"readers": AccessPolicy(permission="r", expiry=EXPIRY)})
        by_policy = generate_file_sas(DEV_ACCOUNT, self.name, ["source.bin"], account_key=DEV_KEY, policy_id="readers")
        url = f"{self.endpoints['file']}/{DEV_ACCOUNT}/{self.name}/source.bin?{by_policy}"
        self.target.upload_range_from_url(url, offset=512, length=256, source_offset=0)
        self.assertEqual(self.target.download_file(offset=512, length=256).readall(), b"z" * 256)

    def test_bad_input_writes_nothing(self):
        before = self.target.get_file_properties().etag
        no_read = self.source_url(permission="w")
        missing = self.source_url("nothing.bin")
        for source, range_, source_range, expected in (
                (no_read, "bytes=0-511", "bytes=0-511", (403, "CannotVerifyCopySource")),
                (missing, "bytes=0-511", "bytes=0-511", (404, "CannotVerifyCopySource")),
                (self.source_url(), "bytes=0-511", "bytes=2000-2511", (416, "InvalidRange")),
                (self.source_url(), "bytes=0-511", "bytes=0-255", (400, "InvalidHeaderValue")),
                (self.source_url(), "bytes=4000-4511", "bytes=0-511", (416, "InvalidRange")),
                ("not a url", "bytes=0-511", "bytes=0-511", (400, "InvalidHeaderValue"))):
            r = self.put(source, range_, source_range)
            self.assertEqual((r.status, r.code), expected, (source, range_, source_range))
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/target.bin", [("comp", "range")],
                             headers={"x-ms-copy-source": self.source_url(), "x-ms-range": "bytes=0-511",
                                      "x-ms-write": "update"})
        self.assertEqual((r.status, r.code), (400, "MissingRequiredHeader"))
        r = self.put(self.source_url(), "bytes=0-511", "bytes=0-511", **{"x-ms-source-content-crc64": "AAAAAAAAAAA="})
        self.assertEqual((r.status, r.code), (400, "Crc64Mismatch"))
        # A leased destination takes its lease.
        lease = self.target.acquire_lease()
        r = self.put(self.source_url(), "bytes=0-511", "bytes=0-511")
        self.assertEqual((r.status, r.code), (412, "LeaseIdMissing"))
        after = self.target.get_file_properties()
        self.assertEqual(after.etag, before)
        self.assertEqual(self.target.get_ranges(), [])
        r = self.put(self.source_url(), "bytes=0-511", "bytes=0-511", **{"x-ms-lease-id": lease.id})
        self.assertEqual(r.status, 201, r.body)
        lease.release()


if __name__ == "__main__":
    unittest.main()
