"""Append blobs, page blobs, snapshots, blob index tags, access tiers, blob batches, stored access
policies and user delegation keys through azure.storage.blob, and their bad inputs with raw
requests."""
import base64
import datetime
import struct
import unittest
import xml.etree.ElementTree as ET

from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import (AccessPolicy, BlobSasPermissions, ContainerSasPermissions, StandardBlobTier,
                                UserDelegationKey, generate_blob_sas)

from harness import DEV_ACCOUNT, DEV_KEY, ContainerPerTest

EXPIRY = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=2)


def crc64(data):
    """CRC-64/NVME as Azure Storage writes it (8 bytes, least significant first), in base64."""
    crc = 0xFFFFFFFFFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x9A6C9329AC4BC9B5 if crc & 1 else crc >> 1
    return base64.b64encode(struct.pack("<Q", crc ^ 0xFFFFFFFFFFFFFFFF)).decode()


class BlobKinds(ContainerPerTest, unittest.TestCase):
    def test_append_blobs_grow_block_by_block_until_sealed(self):
        log = self.container.get_blob_client("app.log")
        log.create_append_blob(metadata={"kind": "log"})
        offsets = [log.append_block(line)["blob_append_offset"] for line in (b"one\n", b"two\n", b"three\n")]
        self.assertEqual(offsets, ["0", "4", "8"])
        props = log.get_blob_properties()
        self.assertEqual((props.blob_type, props.size, props.append_blob_committed_block_count),
                         ("AppendBlob", 14, 3))
        self.assertEqual(log.download_blob(offset=4, length=4).readall(), b"two\n")
        # Its own conditions: the size it may reach and where the block must land.
        self.assertEqual(self.error_of(lambda: log.append_block(b"x", maxsize_condition=14)),
                         (412, "MaxBlobSizeConditionNotMet"))
        self.assertEqual(self.error_of(lambda: log.append_block(b"x", appendpos_condition=3)),
                         (412, "AppendPositionConditionNotMet"))
        log.append_block(b"four\n", appendpos_condition=14)
        # A large block (a part of its own) after small ones reads back whole.
        big = bytes(range(256)) * 1024
        log.append_block(big)
        self.assertEqual(log.download_blob().readall(), b"one\ntwo\nthree\nfour\n" + big)
        log.seal_append_blob()
        self.assertTrue(log.get_blob_properties().is_append_blob_sealed)
        self.assertEqual(self.error_of(lambda: log.append_block(b"late")), (409, "BlobIsSealed"))
        # Append Block on a block blob: the service's refusal.
        block = self.container.get_blob_client("block")
        block.upload_blob(b"x")
        self.assertEqual(self.error_of(lambda: block.append_block(b"y")), (409, "InvalidBlobType"))

    def test_crc64_is_checked_and_echoed(self):
        log = self.container.get_blob_client("crc.log")
        log.create_append_blob()
        body = b"HelloWorld"
        r = self.raw.request("PUT", self.path("crc.log"), [("comp", "appendblock")], body)
        self.assertEqual((r.status, r.headers.get("x-ms-content-crc64")), (201, crc64(body)))
        r = self.raw.request("PUT", self.path("crc.log"), [("comp", "appendblock")], body,
                             {"x-ms-content-crc64": crc64(b"other")})
        self.assertEqual((r.status, r.code), (400, "Crc64Mismatch"))
        r = self.raw.request("PUT", self.path("crc.log"), [("comp", "appendblock")], body,
                             {"x-ms-content-crc64": "AAAA"})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        md5 = base64.b64encode(__import__("hashlib").md5(body).digest()).decode()
        r = self.raw.request("PUT", self.path("crc.log"), [("comp", "appendblock")], body,
                             {"x-ms-content-crc64": crc64(body), "Content-MD5": md5})
        self.assertEqual((r.status, r.code), (400, "BothCrc64AndMd5HeaderPresent"))
        r = self.raw.request("PUT", self.path("block"), [], body,
                             {"x-ms-blob-type": "BlockBlob", "x-ms-content-crc64": crc64(body)})
        self.assertEqual((r.status, r.headers.get("x-ms-content-crc64")), (201, crc64(body)))
        self.assertEqual(log.download_blob().readall(), body)
        # A range's own CRC64 on request (4 MiB at most; not with the range's MD5).
        r = self.raw.request("GET", self.path("crc.log"), headers={"x-ms-range": "bytes=0-4",
                                                                   "x-ms-range-get-content-crc64": "true"})
        self.assertEqual((r.status, r.body, r.headers.get("x-ms-content-crc64")), (206, b"Hello", crc64(b"Hello")))
        r = self.raw.request("GET", self.path("crc.log"), headers={"x-ms-range": "bytes=0-4",
                                                                   "x-ms-range-get-content-crc64": "true",
                                                                   "x-ms-range-get-content-md5": "true"})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))

    def test_page_blobs_write_clear_resize_and_diff(self):
        disk = self.container.get_blob_client("disk.vhd")
        disk.create_page_blob(4096, sequence_number=3)
        self.assertEqual(disk.download_blob().readall(), b"\0" * 4096)
        disk.upload_page(b"a" * 1024, offset=0, length=1024)
        disk.upload_page(b"b" * 512, offset=2048, length=512)
        ranges, _ = disk.get_page_ranges()
        self.assertEqual(ranges, [{"start": 0, "end": 1023}, {"start": 2048, "end": 2559}])
        snapshot = disk.create_snapshot()["snapshot"]
        disk.clear_page(offset=0, length=512)
        disk.upload_page(b"c" * 512, offset=3584, length=512)
        changed, cleared = disk.get_page_ranges(previous_snapshot_diff=snapshot)
        self.assertEqual(changed, [{"start": 3584, "end": 4095}])
        self.assertEqual(cleared, [{"start": 0, "end": 511}])
        expected = b"\0" * 512 + b"a" * 512 + b"\0" * 1024 + b"b" * 512 + b"\0" * 1024 + b"c" * 512
        self.assertEqual(disk.download_blob().readall(), expected)
        snap = self.container.get_blob_client("disk.vhd", snapshot=snapshot)
        self.assertEqual(snap.download_blob().readall()[:1024], b"a" * 1024)
        # Sequence numbers guard writes.
        self.assertEqual(self.error_of(lambda: disk.upload_page(b"d" * 512, offset=0, length=512,
                                                                 if_sequence_number_lt=3)),
                         (412, "SequenceNumberConditionNotMet"))
        self.assertEqual(disk.set_sequence_number("increment")["blob_sequence_number"], 4)
        self.assertEqual(disk.set_sequence_number("max", 10)["blob_sequence_number"], 10)
        # A resize drops the pages past the new end; growing again brings zeros.
        disk.resize_blob(1024)
        disk.resize_blob(2048)
        self.assertEqual(disk.download_blob().readall(), b"\0" * 512 + b"a" * 512 + b"\0" * 1024)
        self.assertEqual(disk.get_blob_properties().page_blob_sequence_number, 10)
        # Misaligned or past the end: 416 InvalidPageRange; a size that is no multiple of 512: 400.
        r = self.raw.request("PUT", self.path("disk.vhd"), [("comp", "page")], b"x" * 512,
                             {"x-ms-page-write": "update", "x-ms-range": "bytes=1-512"})
        self.assertEqual((r.status, r.code), (416, "InvalidPageRange"))
        r = self.raw.request("PUT", self.path("disk.vhd"), [("comp", "page")], b"x" * 512,
                             {"x-ms-page-write": "update", "x-ms-range": "bytes=2048-2559"})
        self.assertEqual((r.status, r.code), (416, "InvalidPageRange"))
        r = self.raw.request("PUT", self.path("disk.vhd"), [("comp", "page")], b"x" * 512,
                             {"x-ms-page-write": "update", "x-ms-range": "bytes=18446744073709551104-18446744073709551615"})
        self.assertEqual((r.status, r.code), (416, "InvalidPageRange"))
        r = self.raw.request("PUT", self.path("disk.vhd"), [("comp", "page")], b"",
                             {"x-ms-page-write": "clear", "x-ms-range": "bytes=9223372036854775808-9223372036854776319"})
        self.assertEqual((r.status, r.code), (416, "InvalidPageRange"))
        r = self.raw.request("PUT", self.path("odd"), [], b"",
                             {"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "1000"})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        # A copy of a page blob is a page blob with the same pages.
        copy = self.container.get_blob_client("copy.vhd")
        copy.start_copy_from_url(disk.url)
        self.assertEqual(copy.get_blob_properties().blob_type, "PageBlob")
        self.assertEqual(copy.download_blob().readall(), disk.download_blob().readall())

    def test_a_diff_names_pages_cleared_since_the_snapshot_it_had_none_of(self):
        """As recorded: pages written after a snapshot (a later snapshot has them) and cleared
        since are cleared against it too, though it had none there."""
        disk = self.container.get_blob_client("diff.vhd")
        disk.create_page_blob(2048)
        first = disk.create_snapshot()["snapshot"]
        disk.upload_page(b"a" * 1536, offset=0, length=1536)
        second = disk.create_snapshot()["snapshot"]
        disk.clear_page(offset=512, length=512)
        self.assertEqual(disk.get_page_ranges(previous_snapshot_diff=first),
                         ([{"start": 0, "end": 511}, {"start": 1024, "end": 1535}], [{"start": 512, "end": 1023}]))
        self.assertEqual(disk.get_page_ranges(previous_snapshot_diff=second), ([], [{"start": 512, "end": 1023}]))
        # Between two snapshots: the later one is what is read, and nothing after it counts.
        later = self.container.get_blob_client("diff.vhd", snapshot=second)
        self.assertEqual(later.get_page_ranges(previous_snapshot_diff=first), ([{"start": 0, "end": 1535}], []))

    def test_snapshots_keep_the_blob_as_it_was(self):
        blob = self.container.get_blob_client("doc.txt")
        blob.upload_blob(b"version one", metadata={"v": "1"})
        snapshot = blob.create_snapshot()["snapshot"]
        blob.upload_blob(b"version two", overwrite=True)
        old = self.container.get_blob_client("doc.txt", snapshot=snapshot)
        self.assertEqual(old.download_blob().readall(), b"version one")
        self.assertEqual(old.get_blob_properties().metadata, {"v": "1"})
        listed = [(b.name, b.snapshot) for b in self.container.list_blobs(include=["snapshots"])]
        self.assertEqual(listed, [("doc.txt", snapshot), ("doc.txt", None)])
        self.assertEqual([b.name for b in self.container.list_blobs()], ["doc.txt"])
        self.assertEqual(self.error_of(blob.delete_blob), (409, "SnapshotsPresent"))
        blob.delete_blob(delete_snapshots="only")
        self.assertEqual(blob.download_blob().readall(), b"version two")
        with self.assertRaises(ResourceNotFoundError):
            old.get_blob_properties()
        blob.create_snapshot()
        blob.delete_blob(delete_snapshots="include")
        self.assertEqual(list(self.container.list_blobs(include=["snapshots"])), [])

    def test_tags_are_set_read_found_and_used_as_conditions(self):
        a = self.container.get_blob_client("a")
        a.upload_blob(b"a", tags={"project": "alpha", "stage": "raw"})
        b = self.container.get_blob_client("b")
        b.upload_blob(b"b")
        b.set_blob_tags({"project": "beta", "stage": "clean"})
        self.assertEqual(b.get_blob_tags(), {"project": "beta", "stage": "clean"})
        self.assertEqual(a.get_blob_properties().tag_count, 2)
        found = sorted(x.name for x in self.svc.find_blobs_by_tags(f"@container='{self.name}' AND stage >= 'clean'"))
        self.assertEqual(found, ["a", "b"])
        found = list(self.container.find_blobs_by_tags("project = 'alpha'"))
        self.assertEqual([(x.name, x.tags) for x in found], [("a", {"project": "alpha"})])
        # x-ms-if-tags on reads and writes.
        self.assertEqual(a.download_blob(if_tags_match_condition="project = 'alpha'").readall(), b"a")
        self.assertEqual(self.error_of(lambda: a.set_blob_metadata({"k": "v"}, if_tags_match_condition="stage <> 'raw'")),
                         (412, "ConditionNotMet"))
        # Tags the service refuses.
        self.assertEqual(self.error_of(lambda: a.set_blob_tags({"bad!": "x"}))[0], 400)
        self.assertEqual(self.error_of(lambda: a.set_blob_tags({f"k{i}": "v" for i in range(11)})),
                         (400, "TagsTooLarge"))
        r = self.raw.request("GET", f"/{DEV_ACCOUNT}", [("comp", "blobs"), ("where", "a = 'x' OR b = 'y'")])
        self.assertEqual((r.status, r.code), (400, "InvalidQueryParameterValue"))
        r = self.raw.request("GET", self.path("a"), headers={"x-ms-if-tags": "project = "})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        listed = {x.name: x.tags for x in self.container.list_blobs(include=["tags"])}
        self.assertEqual(listed["b"], {"project": "beta", "stage": "clean"})

    def test_tiers_and_archive(self):
        blob = self.container.get_blob_client("cold")
        blob.upload_blob(b"data", standard_blob_tier=StandardBlobTier.COOL)
        props = blob.get_blob_properties()
        self.assertEqual((props.blob_tier, props.blob_tier_inferred), ("Cool", None))  # said only when inferred
        blob.set_standard_blob_tier(StandardBlobTier.ARCHIVE)
        self.assertEqual(self.error_of(lambda: blob.download_blob().readall()), (409, "BlobArchived"))
        copy = self.container.get_blob_client("copy")
        self.assertEqual(self.error_of(lambda: copy.start_copy_from_url(blob.url))[0], 409)
        r = self.raw.request("PUT", self.path("cold"), [("comp", "tier")], headers={"x-ms-access-tier": "Hot"})
        self.assertEqual(r.status, 202)  # out of the archive (rehydrated at once)
        self.assertEqual(blob.download_blob().readall(), b"data")
        r = self.raw.request("PUT", self.path("cold"), [("comp", "tier")], headers={"x-ms-access-tier": "Warm"})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        log = self.container.get_blob_client("log")
        log.create_append_blob()
        self.assertEqual(self.error_of(lambda: log.set_standard_blob_tier("Hot"))[0], 400)

    def test_a_blob_written_again_keeps_its_online_tier(self):
        """As recorded: a write that names no tier keeps the Cool tier set on the blob it
        replaces (changed as of the write); an archived blob's replacement is Hot, inferred."""
        blob = self.container.get_blob_client("kept")
        blob.upload_blob(b"one")
        blob.set_standard_blob_tier(StandardBlobTier.COOL)
        blob.upload_blob(b"two", overwrite=True)
        props = blob.get_blob_properties()
        self.assertEqual((props.blob_tier, props.blob_tier_inferred), ("Cool", None))
        self.assertIsNotNone(props.blob_tier_change_time)
        blob.upload_blob(b"three", overwrite=True, standard_blob_tier=StandardBlobTier.HOT)
        self.assertEqual(blob.get_blob_properties().blob_tier, "Hot")
        blob.set_standard_blob_tier(StandardBlobTier.ARCHIVE)
        blob.upload_blob(b"four", overwrite=True)
        props = blob.get_blob_properties()
        self.assertEqual((props.blob_tier, props.blob_tier_inferred), ("Hot", True))

    def test_a_batch_deletes_and_sets_tiers(self):
        names = [f"b{i}" for i in range(5)]
        for n in names:
            self.container.get_blob_client(n).upload_blob(n.encode())
        results = list(self.container.set_standard_blob_tier_blobs("Cool", *names[:2]))
        self.assertEqual([r.status_code for r in results], [200, 200])
        self.assertEqual(self.container.get_blob_client("b0").get_blob_properties().blob_tier, "Cool")
        results = list(self.container.delete_blobs(*names[:3], raise_on_any_failure=False))
        self.assertEqual([r.status_code for r in results], [202, 202, 202])
        self.assertEqual(sorted(b.name for b in self.container.list_blobs()), names[3:])
        results = list(self.container.delete_blobs("b3", "missing", raise_on_any_failure=False))
        self.assertEqual([r.status_code for r in results], [202, 404])
        # Parts that are not Delete Blob or Set Blob Tier of a blob are refused before they are served
        # (a Put Blob in disguise, a container's deletion), and the service stays up.
        for line in (b"PUT /%s/b3?x=comp=tier HTTP/1.1" % self.name.encode(),
                     b"DELETE /%s?restype=container HTTP/1.1" % self.name.encode(),
                     b"PUT /%s/b3?comp=tier&comp=block HTTP/1.1" % self.name.encode()):
            body = (b"--x\r\nContent-Type: application/http\r\nContent-ID: 0\r\n\r\n" + line +
                    b"\r\nx-ms-access-tier: Cool\r\nContent-Length: 0\r\n\r\n--x--\r\n")
            r = self.raw.request("POST", self.path(), [("restype", "container"), ("comp", "batch")], body,
                                 {"Content-Type": "multipart/mixed; boundary=x"})
            self.assertEqual(r.status, 202)
            self.assertIn(b"x-ms-error-code: InvalidInput", r.body, line)
        r = self.raw.request("POST", f"/{DEV_ACCOUNT}", [("comp", "batch")],
                             b"--x\r\nContent-ID: 0\r\n\r\nPUT /%s/b3?x=comp=tier HTTP/1.1\r\n\r\n--x--\r\n" % self.name.encode(),
                             {"Content-Type": "multipart/mixed; boundary=x"})
        self.assertIn(b"x-ms-error-code: InvalidInput", r.body)
        self.assertEqual(sorted(b.name for b in self.container.list_blobs()), ["b4"])
        # A malformed batch: one answer that says why.
        r = self.raw.request("POST", self.path(), [("restype", "container"), ("comp", "batch")], b"--x\r\n",
                             {"Content-Type": "multipart/mixed"})
        self.assertEqual(r.status, 202)
        self.assertIn(b"x-ms-error-code: InvalidHeaderValue", r.body)

    def test_stored_access_policies_back_a_sas(self):
        start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
        self.container.set_container_access_policy(
            {"readers": AccessPolicy(permission=ContainerSasPermissions(read=True), expiry=EXPIRY, start=start)})
        policy = self.container.get_container_access_policy()["signed_identifiers"]
        self.assertEqual([(p.id, p.access_policy.permission) for p in policy], [("readers", "r")])
        blob = self.container.get_blob_client("shared")
        blob.upload_blob(b"shared bytes")
        sas = generate_blob_sas(DEV_ACCOUNT, self.name, "shared", account_key=DEV_KEY, policy_id="readers")
        r = self.raw.request("GET", self.path("shared"), sign=False, raw_query=sas)
        self.assertEqual((r.status, r.body), (200, b"shared bytes"))
        r = self.raw.request("DELETE", self.path("shared"), sign=False, raw_query=sas)
        self.assertEqual(r.status, 403)
        # A SAS naming a policy that is gone, or giving what the policy gives: refused.
        self.container.set_container_access_policy({})
        r = self.raw.request("GET", self.path("shared"), sign=False, raw_query=sas)
        self.assertEqual((r.status, r.code), (403, "AuthenticationFailed"))
        self.container.set_container_access_policy(
            {"readers": AccessPolicy(permission=ContainerSasPermissions(read=True), expiry=EXPIRY)})
        both = generate_blob_sas(DEV_ACCOUNT, self.name, "shared", account_key=DEV_KEY, policy_id="readers",
                                 permission=BlobSasPermissions(read=True))
        r = self.raw.request("GET", self.path("shared"), sign=False, raw_query=both)
        self.assertEqual((r.status, r.code), (403, "AuthenticationFailed"))
        six = "".join(f"<SignedIdentifier><Id>p{i}</Id><AccessPolicy><Permission>r</Permission></AccessPolicy>"
                      "</SignedIdentifier>" for i in range(6))
        r = self.raw.request("PUT", self.path(), [("restype", "container"), ("comp", "acl")],
                             f"<SignedIdentifiers>{six}</SignedIdentifiers>".encode())
        self.assertEqual((r.status, r.code), (400, "InvalidXmlDocument"))
        r = self.raw.request("PUT", self.path(), [("restype", "container"), ("comp", "acl")],
                             b"<SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy><Permission>rq</Permission>"
                             b"</AccessPolicy></SignedIdentifier></SignedIdentifiers>")
        self.assertEqual((r.status, r.code), (400, "InvalidXmlNodeValue"))

    def test_user_delegation_keys_need_a_bearer_token_and_sign_a_sas(self):
        body = ("<?xml version='1.0' encoding='utf-8'?><KeyInfo><Start>"
                + (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
                + "</Start><Expiry>" + EXPIRY.strftime("%Y-%m-%dT%H:%M:%SZ") + "</Expiry></KeyInfo>").encode()
        query = [("restype", "service"), ("comp", "userdelegationkey")]
        r = self.raw.request("POST", f"/{DEV_ACCOUNT}", query, body)
        self.assertEqual((r.status, r.code), (403, "AuthenticationFailed"))
        self.assertIn(b"Only authentication scheme Bearer is supported", r.body)
        r = self.raw.request("POST", f"/{DEV_ACCOUNT}", query, body, {"Authorization": "Bearer any-token"})
        self.assertEqual(r.status, 200, r.body)
        x = ET.fromstring(r.body)
        key = UserDelegationKey()
        key.signed_oid, key.signed_tid = x.findtext("SignedOid"), x.findtext("SignedTid")
        key.signed_start, key.signed_expiry = x.findtext("SignedStart"), x.findtext("SignedExpiry")
        key.signed_service, key.signed_version = x.findtext("SignedService"), x.findtext("SignedVersion")
        key.value = x.findtext("Value")
        blob = self.container.get_blob_client("delegated")
        blob.upload_blob(b"delegated bytes")
        sas = generate_blob_sas(DEV_ACCOUNT, self.name, "delegated", user_delegation_key=key,
                                permission=BlobSasPermissions(read=True), expiry=EXPIRY)
        r = self.raw.request("GET", self.path("delegated"), sign=False, raw_query=sas)
        self.assertEqual((r.status, r.body), (200, b"delegated bytes"))
        key.value = base64.b64encode(b"another key of the same length, 32").decode()
        forged = generate_blob_sas(DEV_ACCOUNT, self.name, "delegated", user_delegation_key=key,
                                   permission=BlobSasPermissions(read=True), expiry=EXPIRY)
        r = self.raw.request("GET", self.path("delegated"), sign=False, raw_query=forged)
        self.assertEqual((r.status, r.code), (403, "AuthenticationFailed"))


if __name__ == "__main__":
    unittest.main()
