"""Writes whose bytes come from another blob (Append Block From URL, Put Page From URL), Incremental
Copy Blob, and the conditions on a copy's source (x-ms-source-if-*), through azure.storage.blob;
their bad inputs with raw requests."""
import base64
import datetime
import hashlib
import unittest
import xml.etree.ElementTree as ET

from azure.core import MatchConditions
from azure.storage.blob import BlobClient, BlobSasPermissions, generate_blob_sas

from harness import DEV_ACCOUNT, DEV_KEY, ContainerPerTest
from test_blob_kinds import crc64

EXPIRY = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=2)
PAGE = 512


class BlobsFromUrls(ContainerPerTest, unittest.TestCase):
    def readable_url(self, client, snapshot=None):
        """The blob's URL with a SAS that may read it (of the snapshot, when given)."""
        sas = generate_blob_sas(DEV_ACCOUNT, self.name, client.blob_name, snapshot=snapshot, account_key=DEV_KEY,
                                permission=BlobSasPermissions(read=True), expiry=EXPIRY)
        return client.url + (f"?snapshot={snapshot}&{sas}" if snapshot else f"?{sas}")

    def incremental_copy(self, blob, source_url):
        """Incremental Copy Blob, raw: Debian's azure-storage-blob gives its transport an unknown seal_blob
        argument when start_copy_from_url is asked for an incremental copy, and never sends the request."""
        return self.raw.request("PUT", self.path(blob), [("comp", "incrementalcopy")],
                                headers={"x-ms-copy-source": source_url})

    def incremental_error(self, blob, source_url):
        r = self.incremental_copy(blob, source_url)
        return r.status, r.code

    def test_append_block_from_url_appends_a_range_of_another_blob(self):
        source = self.container.upload_blob("source", b"0123456789")
        log = self.container.get_blob_client("log")
        log.create_append_blob()
        log.append_block(b">")
        result = log.append_block_from_url(self.readable_url(source), source_offset=2, source_length=4)
        self.assertEqual(result["blob_append_offset"], "1")
        self.assertEqual(result["content_md5"], hashlib.md5(b"2345").digest())
        log.append_block_from_url(self.readable_url(source), appendpos_condition=5)
        self.assertEqual(log.download_blob().readall(), b">23450123456789")
        self.assertEqual(log.get_blob_properties().append_blob_committed_block_count, 3)
        # The source's own authorization only: the request's key does not read a private blob.
        self.assertEqual(self.error_of(lambda: log.append_block_from_url(source.url)), (404, "CannotVerifyCopySource"))
        # Append Block's conditions, and the source's.
        self.assertEqual(self.error_of(lambda: log.append_block_from_url(self.readable_url(source), maxsize_condition=16)),
                         (412, "MaxBlobSizeConditionNotMet"))
        self.assertEqual(
            self.error_of(lambda: log.append_block_from_url(self.readable_url(source), source_etag='"0x1"',
                                                            source_match_condition=MatchConditions.IfNotModified)),
            (412, "CannotVerifyCopySource"))
        # A condition a read of the source answers 304 to is relayed as 304 (recorded).
        r = self.raw.request("PUT", self.path("log"), [("comp", "appendblock")],
                             headers={"x-ms-copy-source": self.readable_url(source),
                                      "x-ms-source-if-none-match": source.get_blob_properties().etag})
        self.assertEqual((r.status, r.code), (304, "CannotVerifyCopySource"))
        self.assertEqual(log.get_blob_properties().append_blob_committed_block_count, 3)
        self.assertEqual(
            self.error_of(lambda: log.append_block_from_url(self.readable_url(source),
                                                            source_content_md5=hashlib.md5(b"other").digest())),
            (400, "Md5Mismatch"))
        # A source range past its end; a block blob as the destination.
        self.assertEqual(self.error_of(lambda: log.append_block_from_url(self.readable_url(source), source_offset=10,
                                                                         source_length=1))[0], 416)
        self.assertEqual(self.error_of(lambda: source.append_block_from_url(self.readable_url(log))),
                         (409, "InvalidBlobType"))
        self.assertEqual(log.download_blob().readall(), b">23450123456789")  # refused ones appended nothing

    def test_put_page_from_url_writes_pages_read_from_another_blob(self):
        source = self.container.get_blob_client("source")
        source.create_page_blob(2 * PAGE)
        source.upload_page(b"s" * PAGE, offset=PAGE, length=PAGE)
        disk = self.container.get_blob_client("disk")
        disk.create_page_blob(4 * PAGE)
        result = disk.upload_pages_from_url(self.readable_url(source), offset=2 * PAGE, length=PAGE, source_offset=PAGE)
        # Without a checksum asked for, the pages' CRC64 is answered, not their MD5 (recorded).
        self.assertEqual(result["content_crc64"], base64.b64decode(crc64(b"s" * PAGE)))
        self.assertIsNone(result["content_md5"])
        self.assertEqual(disk.download_blob(offset=2 * PAGE, length=PAGE).readall(), b"s" * PAGE)
        ranges, _ = disk.get_page_ranges()
        self.assertEqual(ranges, [{"start": 2 * PAGE, "end": 3 * PAGE - 1}])
        self.assertEqual(self.error_of(lambda: disk.upload_pages_from_url(source.url, offset=0, length=PAGE,
                                                                          source_offset=0)),
                         (404, "CannotVerifyCopySource"))
        self.assertEqual(self.error_of(lambda: disk.upload_pages_from_url(
            self.readable_url(source), offset=0, length=PAGE, source_offset=0, if_sequence_number_lt=0)),
            (412, "SequenceNumberConditionNotMet"))
        # Raw: the two ranges must be as long as each other, and the source range is required.
        url = self.readable_url(source)
        r = self.raw.request("PUT", self.path("disk"), [("comp", "page")],
                             headers={"x-ms-page-write": "update", "x-ms-range": "bytes=0-511",
                                      "x-ms-source-range": "bytes=0-1023", "x-ms-copy-source": url})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"), r.body)
        self.assertIn(b"<HeaderName>x-ms-source-range</HeaderName>", r.body)
        r = self.raw.request("PUT", self.path("disk"), [("comp", "page")],
                             headers={"x-ms-page-write": "update", "x-ms-range": "bytes=0-511", "x-ms-copy-source": url})
        self.assertEqual((r.status, r.code), (400, "MissingRequiredHeader"), r.body)
        r = self.raw.request("PUT", self.path("disk"), [("comp", "page")],
                             headers={"x-ms-page-write": "clear", "x-ms-range": "bytes=0-511",
                                      "x-ms-source-range": "bytes=0-511", "x-ms-copy-source": url})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"), r.body)
        self.assertEqual(disk.download_blob(offset=0, length=PAGE).readall(), b"\0" * PAGE)

    def test_incremental_copy_keeps_each_copied_snapshot(self):
        disk = self.container.get_blob_client("disk")
        disk.create_page_blob(2 * PAGE)
        disk.upload_page(b"A" * PAGE, offset=0, length=PAGE)
        first = disk.create_snapshot()["snapshot"]
        backup = self.container.get_blob_client("backup")
        copied = self.incremental_copy("backup", self.readable_url(disk, first))
        self.assertEqual((copied.status, copied.headers["x-ms-copy-status"]), (202, "success"), copied.body)
        self.assertTrue(copied.headers["x-ms-copy-id"])
        props = backup.get_blob_properties()
        self.assertTrue(props.copy.incremental_copy)
        self.assertEqual((props.blob_type, props.size), ("PageBlob", 2 * PAGE))
        first_copy = props.copy.destination_snapshot
        self.assertTrue(first_copy)
        self.assertEqual(self.container.get_blob_client("backup", snapshot=first_copy).download_blob().readall(),
                         b"A" * PAGE + b"\0" * PAGE)
        # Only the destination's snapshots are read; the destination itself refuses reads and writes.
        self.assertEqual(self.error_of(lambda: backup.download_blob().readall()),
                         (409, "OperationNotAllowedOnIncrementalCopyBlob"))
        for write in (lambda: backup.upload_page(b"x" * PAGE, offset=0, length=PAGE),
                      lambda: backup.upload_blob(b"x", overwrite=True),
                      lambda: backup.set_blob_metadata({"k": "v"}),
                      lambda: backup.create_snapshot()):
            self.assertEqual(self.error_of(write), (409, "OperationNotAllowedOnIncrementalCopyBlob"))

        # A later snapshot: a second destination snapshot with the new content; the first stays.
        disk.upload_page(b"B" * PAGE, offset=PAGE, length=PAGE)
        second = disk.create_snapshot()["snapshot"]
        self.assertEqual(self.incremental_copy("backup", self.readable_url(disk, second)).status, 202)
        second_copy = backup.get_blob_properties().copy.destination_snapshot
        self.assertGreater(second_copy, first_copy)
        self.assertEqual(self.container.get_blob_client("backup", snapshot=second_copy).download_blob().readall(),
                         b"A" * PAGE + b"B" * PAGE)
        self.assertEqual(self.container.get_blob_client("backup", snapshot=first_copy).download_blob().readall(),
                         b"A" * PAGE + b"\0" * PAGE)
        listed = [(b.name, b.snapshot) for b in self.container.list_blobs(name_starts_with="backup",
                                                                          include=["snapshots"])]
        self.assertEqual(listed, [("backup", first_copy), ("backup", second_copy), ("backup", None)])
        r = self.raw.request("GET", f"/{DEV_ACCOUNT}/{self.name}",
                             [("restype", "container"), ("comp", "list"), ("include", "copy"), ("prefix", "backup")])
        props_xml = ET.fromstring(r.body).find("Blobs/Blob/Properties")
        self.assertEqual(props_xml.findtext("IncrementalCopy"), "true")
        self.assertEqual(props_xml.findtext("DestinationSnapshot"), second_copy)

        # What the service refuses: an older snapshot, another blob's, a base blob, another type.
        self.assertEqual(self.incremental_error("backup", self.readable_url(disk, first)),
                         (409, "IncrementalCopyOfEarlierVersionSnapshotNotAllowed"))
        other = self.container.get_blob_client("other")
        other.create_page_blob(PAGE)
        other_snapshot = other.create_snapshot()["snapshot"]
        self.assertEqual(self.incremental_error("backup", self.readable_url(other, other_snapshot)),
                         (409, "IncrementalCopyBlobMismatch"))
        self.assertEqual(self.incremental_error("backup", self.readable_url(disk)),
                         (409, "IncrementalCopySourceMustBeSnapshot"))
        block = self.container.upload_blob("block", b"bytes")
        block_snapshot = block.create_snapshot()["snapshot"]
        fresh = self.container.get_blob_client("fresh")
        self.assertEqual(self.incremental_error("fresh", self.readable_url(block, block_snapshot)),
                         (409, "InvalidBlobType"))
        self.assertEqual(self.incremental_error("block", self.readable_url(disk, second)),
                         (409, "InvalidBlobType"))
        # The source needs its own SAS (or a public container), as the service documents.
        self.assertEqual(self.incremental_error("fresh", f"{disk.url}?snapshot={second}"),
                         (404, "CannotVerifyCopySource"))
        self.assertFalse(fresh.exists())
        backup.delete_blob(delete_snapshots="include")
        self.assertEqual([b.name for b in self.container.list_blobs(name_starts_with="backup", include=["snapshots"])],
                         [])

    def test_copies_check_their_source_conditions(self):
        source = self.container.upload_blob("source", b"bytes")
        etag = source.get_blob_properties().etag
        copy = self.container.get_blob_client("copy")
        later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
        for kwargs in ({"source_etag": '"0x1"', "source_match_condition": MatchConditions.IfNotModified},
                       {"source_etag": etag, "source_match_condition": MatchConditions.IfModified},
                       {"source_if_modified_since": later}):
            self.assertEqual(self.error_of(lambda: copy.start_copy_from_url(source.url, **kwargs)),
                             (412, "SourceConditionNotMet"))
            self.assertEqual(self.error_of(lambda: copy.start_copy_from_url(self.readable_url(source),
                                                                            requires_sync=True, **kwargs)),
                             (412, "SourceConditionNotMet"))
        self.assertFalse(copy.exists())
        copy.start_copy_from_url(source.url, source_etag=etag, source_match_condition=MatchConditions.IfNotModified)
        self.assertEqual(copy.download_blob().readall(), b"bytes")
        # The tag condition on the source: x-ms-source-if-tags.
        source.set_blob_tags({"state": "ready"})
        r = self.raw.request("PUT", self.path("tagged"), headers={"x-ms-copy-source": source.url,
                                                                  "x-ms-source-if-tags": "\"state\" = 'draft'"})
        self.assertEqual((r.status, r.code), (412, "ConditionNotMet"), r.body)
        r = self.raw.request("PUT", self.path("tagged"), headers={"x-ms-copy-source": source.url,
                                                                  "x-ms-source-if-tags": "\"state\" = 'ready'"})
        self.assertEqual(r.status, 202, r.body)
        r = self.raw.request("PUT", self.path("tagged"), headers={"x-ms-copy-source": source.url,
                                                                  "x-ms-source-if-modified-since": "yesterday"})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"), r.body)
        self.assertIn(b"<HeaderName>x-ms-source-if-modified-since</HeaderName>", r.body)

    def test_bad_source_headers_are_refused_naming_them(self):
        source = self.container.upload_blob("source", b"0123")
        log = self.container.get_blob_client("log")
        log.create_append_blob()
        url = self.readable_url(source)
        for headers, status, code, named in (
                ({"x-ms-source-range": "bytes=x-y"}, 400, "InvalidHeaderValue", "x-ms-source-range"),
                ({"x-ms-source-content-crc64": "not base64!"}, 400, "InvalidHeaderValue", "x-ms-source-content-crc64"),
                ({"x-ms-source-content-md5": "AAAA"}, 400, "InvalidHeaderValue", "x-ms-source-content-md5"),
                ({"x-ms-source-content-md5": base64.b64encode(hashlib.md5(b"0123").digest()).decode(),
                  "x-ms-source-content-crc64": "AAAAAAAAAAA="}, 400, "BothCrc64AndMd5HeaderPresent", None),
                ({"x-ms-source-content-crc64": "AAAAAAAAAAA="}, 400, "Crc64Mismatch", None),
                ({"x-ms-source-if-unmodified-since": "2020-01-01"}, 400, "InvalidHeaderValue",
                 "x-ms-source-if-unmodified-since"),
                ({"x-ms-source-if-tags": "state ="}, 400, None, None)):
            r = self.raw.request("PUT", self.path("log"), [("comp", "appendblock")],
                                 headers={"x-ms-copy-source": url, **headers})
            self.assertEqual(r.status, status, (headers, r.body))
            if code:
                self.assertEqual(r.code, code, (headers, r.body))
            if named:  # in an element of its own after the message, as the service names it
                self.assertIn(f"<HeaderName>{named}</HeaderName>".encode(), r.body)
        r = self.raw.request("PUT", self.path("backup"), [("comp", "incrementalcopy")],
                             headers={"x-ms-copy-source": "not a url"})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"), r.body)
        r = self.raw.request("PUT", self.path("backup"), [("comp", "incrementalcopy")])
        self.assertEqual(r.status, 400, r.body)
        self.assertEqual(log.get_blob_properties().size, 0)  # nothing was appended
        self.assertFalse(self.container.get_blob_client("backup").exists())

    def test_from_url_sas_letters(self):
        """Append Block From URL takes 'a' or 'w' on the destination, Put Page From URL 'w'."""
        source = self.container.upload_blob("source", b"0123")
        log = self.container.get_blob_client("log")
        log.create_append_blob()
        disk = self.container.get_blob_client("disk")
        disk.create_page_blob(PAGE)
        page_source = self.container.get_blob_client("pages")
        page_source.create_page_blob(PAGE)

        def dest(client, letters):
            sas = generate_blob_sas(DEV_ACCOUNT, self.name, client.blob_name, account_key=DEV_KEY,
                                    permission=letters, expiry=EXPIRY)
            signed = BlobClient.from_blob_url(f"{client.url}?{sas}")
            self.addCleanup(signed.close)
            return signed

        for letters, allowed in (("a", True), ("w", True), ("rcd", False)):
            call = lambda: dest(log, letters).append_block_from_url(self.readable_url(source))
            if allowed:
                call()
            else:
                self.assertEqual(self.error_of(call)[0], 403)
        for letters, allowed in (("w", True), ("racd", False)):
            call = lambda: dest(disk, letters).upload_pages_from_url(self.readable_url(page_source), offset=0,
                                                                     length=PAGE, source_offset=0)
            if allowed:
                call()
            else:
                self.assertEqual(self.error_of(call)[0], 403)
        self.assertEqual(log.download_blob().readall(), b"01230123")


if __name__ == "__main__":
    unittest.main()
