"""Get Ranges as the service lists them: the ranges written (not the blocks a file system holds),
adjacent writes as one range, a share snapshot's copy of a file listing what it held, and
prevsharesnapshot diffs listing what changed since a snapshot, cleared parts as ClearRange."""
import os
import unittest

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.storage.fileshare import ShareFileClient, ShareServiceClient

from harness import DEV_ACCOUNT, StorageTestCase
from raw_storage import RawClient


def spans(ranges):
    return [(r["start"], r["end"]) for r in ranges]


class FileRanges(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = ShareServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.share = self.svc.create_share(self.name)
        self.addCleanup(lambda: self.svc.delete_share(self.name, delete_snapshots=True))

    def test_ranges_are_the_writes_not_the_blocks_holding_them(self):
        f = self.share.get_file_client("f")
        f.create_file(2048)
        f.upload_range(b"a" * 512, offset=0, length=512)
        f.upload_range(b"b" * 512, offset=1024, length=512)
        self.assertEqual(spans(f.get_ranges()), [(0, 511), (1024, 1535)])
        # Adjacent and overlapping writes are one range; a range asked for cuts what is listed.
        f.upload_range(b"c" * 512, offset=512, length=512)
        self.assertEqual(spans(f.get_ranges()), [(0, 1535)])
        self.assertEqual(spans(f.get_ranges(offset=100, length=200)), [(100, 299)])
        # Clear Range takes a part out; a resize drops what is past the end.
        f.clear_range(offset=512, length=512)
        self.assertEqual(spans(f.get_ranges()), [(0, 511), (1024, 1535)])
        f.resize_file(1100)
        self.assertEqual(spans(f.get_ranges()), [(0, 511), (1024, 1099)])
        # Create File over it makes an empty file again.
        f.create_file(4096)
        self.assertEqual(f.get_ranges(), [])

    def test_a_snapshot_lists_what_its_file_held_after_the_file_is_gone(self):
        f = self.share.get_file_client("f")
        f.create_file(2048)
        f.upload_range(b"abcdefghijklmnop" * 32, offset=0, length=512)
        f.upload_range(b"abcdefghijklmnop" * 32, offset=1024, length=512)
        snapshot = self.share.create_snapshot()
        f.delete_file()
        old = ShareFileClient.from_connection_string(self.conn, self.name, "f", snapshot=snapshot)
        self.assertEqual(spans(old.get_ranges()), [(0, 511), (1024, 1535)])

    def test_a_diff_lists_changes_since_a_snapshot_cleared_parts_as_such(self):
        f = self.share.get_file_client("f")
        f.create_file(2048)
        first = self.share.create_snapshot()
        f.upload_range(os.urandom(1536), offset=0, length=1536)
        second = self.share.create_snapshot()
        f.clear_range(offset=512, length=512)
        ranges, cleared = f.get_ranges_diff(previous_sharesnapshot=first)
        self.assertEqual(spans(ranges), [(0, 511), (1024, 1535)])
        self.assertEqual(spans(cleared), [(512, 1023)])
        ranges, cleared = f.get_ranges_diff(previous_sharesnapshot=second["snapshot"])
        self.assertEqual(ranges, [])
        self.assertEqual(spans(cleared), [(512, 1023)])
        # Nothing changed since the file's state now: an empty diff.
        third = self.share.create_snapshot()
        self.assertEqual(f.get_ranges_diff(previous_sharesnapshot=third), ([], []))

    def test_a_diff_against_a_snapshot_that_is_not_there_or_malformed(self):
        f = self.share.get_file_client("f")
        f.create_file(512)
        with self.assertRaises(ResourceNotFoundError) as caught:
            f.get_ranges_diff(previous_sharesnapshot="2020-01-01T00:00:00.0000000Z")
        self.assertEqual(caught.exception.error_code, "ShareSnapshotNotFound")
        raw = RawClient(self.endpoints["file"], version="2020-02-10")
        r = raw.request("GET", f"/{DEV_ACCOUNT}/{self.name}/f", [("comp", "rangelist"), ("prevsharesnapshot", "yesterday")])
        self.assertEqual((r.status, r.code), (400, "InvalidQueryParameterValue"))

    def test_a_copy_lists_the_sources_ranges(self):
        src = self.share.get_file_client("src")
        src.create_file(4096)
        src.upload_range(b"x" * 512, offset=512, length=512)
        dst = self.share.get_file_client("dst")
        dst.start_copy_from_url(src.url)
        self.assertEqual(spans(dst.get_ranges()), [(512, 1023)])
        with self.assertRaises(HttpResponseError) as caught:
            self.share.get_file_client("missing").get_ranges()
        self.assertEqual(caught.exception.error_code, "ResourceNotFound")


if __name__ == "__main__":
    unittest.main()
