"""The Blob service driven by azure.storage.blob for every operation the emulator serves."""
import base64
import datetime
import gzip
import hashlib
import os
import unittest
import urllib.error
import urllib.request

from azure.core.exceptions import (HttpResponseError, ResourceExistsError,
                                   ResourceModifiedError, ResourceNotFoundError,
                                   ClientAuthenticationError)
from azure.storage.blob import (AccountSasPermissions, BlobBlock, BlobSasPermissions,
                                BlobServiceClient, ContainerSasPermissions, ContentSettings,
                                ResourceTypes, generate_account_sas, generate_blob_sas,
                                generate_container_sas)

from harness import DEV_ACCOUNT, DEV_KEY, StorageTestCase
from raw_storage import RawClient

MiB = 1024 * 1024


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


class BlobSdk(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = BlobServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.container = self.svc.create_container(self.name)
        self.addCleanup(lambda: self.svc.delete_container(self.name))

    def test_container_lifecycle_metadata_and_listing(self):
        with self.assertRaises(ResourceExistsError) as caught:
            self.svc.create_container(self.name)
        self.assertEqual(caught.exception.error_code, "ContainerAlreadyExists")
        self.container.set_container_metadata({"Owner": "ml-team", "stage": "dev"})
        props = self.container.get_container_properties()
        self.assertEqual(props.metadata, {"Owner": "ml-team", "stage": "dev"})
        names = [c.name for c in self.svc.list_containers(name_starts_with=self.name, include_metadata=True)]
        self.assertIn(self.name, names)
        listed = next(iter(self.svc.list_containers(name_starts_with=self.name, include_metadata=True)))
        self.assertEqual(listed.metadata["stage"], "dev")
        other = self.svc.get_container_client("does-not-exist")
        with self.assertRaises(ResourceNotFoundError) as caught:
            other.get_container_properties()
        self.assertEqual(caught.exception.error_code, "ContainerNotFound")

    def test_list_containers_pages_with_small_maxresults(self):
        prefix = "paging-"
        for i in range(5):
            self.svc.create_container(f"{prefix}{i}")
            self.addCleanup(self.svc.delete_container, f"{prefix}{i}")
        pages = self.svc.list_containers(name_starts_with=prefix, results_per_page=2).by_page()
        sizes = [len(list(page)) for page in pages]
        self.assertEqual(sizes, [2, 2, 1])

    def test_upload_download_properties_metadata_delete(self):
        blob = self.container.get_blob_client("dir/a b+c.txt")
        data = os.urandom(100_000)
        blob.upload_blob(data, metadata={"k": "v"},
                         content_settings=ContentSettings(content_type="text/plain", cache_control="no-cache"))
        self.assertEqual(blob.download_blob().readall(), data)
        props = blob.get_blob_properties()
        self.assertEqual(props.size, len(data))
        self.assertEqual(props.metadata, {"k": "v"})
        self.assertEqual(props.content_settings.content_type, "text/plain")
        self.assertEqual(props.content_settings.cache_control, "no-cache")
        self.assertEqual(bytes(props.content_settings.content_md5), hashlib.md5(data).digest())
        blob.set_blob_metadata({"k2": "v2"})
        self.assertEqual(blob.get_blob_properties().metadata, {"k2": "v2"})
        blob.set_http_headers(ContentSettings(content_type="application/json"))
        self.assertEqual(blob.get_blob_properties().content_settings.content_type, "application/json")
        with self.assertRaises(ResourceExistsError):
            blob.upload_blob(b"again")  # overwrite=False sends If-None-Match: *
        blob.upload_blob(b"again", overwrite=True)
        self.assertEqual(blob.download_blob().readall(), b"again")
        blob.delete_blob()
        with self.assertRaises(ResourceNotFoundError) as caught:
            blob.get_blob_properties()
        self.assertEqual(caught.exception.error_code, "BlobNotFound")

    def test_ranges_and_conditional_reads(self):
        blob = self.container.get_blob_client("ranged")
        data = bytes(range(256)) * 1000
        etag = blob.upload_blob(data)["etag"]
        self.assertEqual(blob.download_blob(offset=1000, length=10).readall(), data[1000:1010])
        self.assertEqual(blob.download_blob(offset=255_990).readall(), data[255_990:])
        with self.assertRaises(HttpResponseError) as caught:
            blob.download_blob(offset=len(data) + 10, length=5).readall()
        self.assertEqual(caught.exception.status_code, 416)
        from azure.core import MatchConditions
        with self.assertRaises(ResourceModifiedError):
            blob.download_blob(etag='"0x1"', match_condition=MatchConditions.IfNotModified).readall()
        self.assertEqual(blob.download_blob(etag=etag, match_condition=MatchConditions.IfNotModified).readall(), data)
        with self.assertRaises(ResourceModifiedError):
            blob.set_blob_metadata({"a": "b"}, etag='"0x1"', match_condition=MatchConditions.IfNotModified)

    def test_empty_blob(self):
        blob = self.container.get_blob_client("empty")
        blob.upload_blob(b"")
        self.assertEqual(blob.download_blob().readall(), b"")
        self.assertEqual(blob.get_blob_properties().size, 0)

    def test_staged_blocks_and_block_lists(self):
        blob = self.container.get_blob_client("blocks")
        ids = [base64.b64encode(f"block-{i:03d}".encode()).decode() for i in range(3)]
        for i, block_id in enumerate(ids):
            blob.stage_block(block_id, f"part{i};".encode())
        committed, uncommitted = blob.get_block_list("all")
        self.assertEqual(len(committed), 0)
        self.assertEqual(sorted(b.id for b in uncommitted), sorted(ids))
        blob.commit_block_list([BlobBlock(ids[2]), BlobBlock(ids[0])])
        self.assertEqual(blob.download_blob().readall(), b"part2;part0;")
        committed, uncommitted = blob.get_block_list("all")
        self.assertEqual([b.id for b in committed], [ids[2], ids[0]])
        self.assertEqual(uncommitted, [])
        with self.assertRaises(HttpResponseError) as caught:
            blob.commit_block_list([BlobBlock(ids[1])])
        self.assertEqual(caught.exception.error_code, "InvalidBlockList")

    def test_large_blocks_commit_and_read_across_their_edges(self):
        # Blocks of 64 KiB and more make a composed blob (its parts are the staged blocks).
        blob = self.container.get_blob_client("composed")
        sizes = [300001, 200003, 150007]
        bodies = [os.urandom(n) for n in sizes]
        ids = [base64.b64encode(f"big-{i:03d}".encode()).decode() for i in range(3)]
        for block_id, body in zip(ids, bodies):
            blob.stage_block(block_id, body)
        blob.commit_block_list([BlobBlock(ids[1]), BlobBlock(ids[0]), BlobBlock(ids[2]), BlobBlock(ids[1])])
        whole = bodies[1] + bodies[0] + bodies[2] + bodies[1]
        self.assertEqual(blob.download_blob().readall(), whole)
        for offset, length in [(sizes[1] - 3, 10), (sizes[1] + sizes[0] - 1, 2), (0, len(whole)),
                               (len(whole) - 5, 5), (sizes[1] - 1, sizes[0] + 2)]:
            self.assertEqual(blob.download_blob(offset=offset, length=length).readall(),
                             whole[offset:offset + length], (offset, length))
        committed, _ = blob.get_block_list("committed")
        self.assertEqual([b.size for b in committed], [sizes[1], sizes[0], sizes[2], sizes[1]])
        copy = self.container.get_blob_client("composed-copy")
        copy.start_copy_from_url(blob.url)
        # Recommit only the last committed block: the copy keeps its own bytes.
        blob.commit_block_list([BlobBlock(ids[2])])
        self.assertEqual(blob.download_blob().readall(), bodies[2])
        self.assertEqual(copy.download_blob().readall(), whole)
        self.assertEqual(len(copy.get_block_list("committed")[0]), 4)

    def test_validate_content_md5(self):
        svc = BlobServiceClient.from_connection_string(self.conn, max_single_put_size=1 * MiB,
                                                       max_block_size=1 * MiB)
        blob = svc.get_blob_client(self.name, "md5")
        blob.upload_blob(os.urandom(5 * MiB), validate_content=True)  # Put Block with Content-MD5
        self.assertEqual(len(blob.download_blob(validate_content=True).readall()), 5 * MiB)

    def test_listing_prefix_delimiter_metadata_and_pages(self):
        for name in ["train/cat/1.jpg", "train/cat/2.jpg", "train/dog/1.jpg", "val/x.jpg", "readme.md"]:
            self.container.upload_blob(name, name.encode(), metadata={"n": name.replace("/", "_").replace(".", "_")})
        self.assertEqual([b.name for b in self.container.list_blobs(name_starts_with="train/")],
                         ["train/cat/1.jpg", "train/cat/2.jpg", "train/dog/1.jpg"])
        top = [item.name for item in self.container.walk_blobs(delimiter="/")]
        self.assertEqual(sorted(top), ["readme.md", "train/", "val/"])
        pages = list(self.container.list_blobs(results_per_page=2).by_page())
        self.assertEqual([len(list(p)) for p in pages], [2, 2, 1])
        with_meta = {b.name: b.metadata for b in self.container.list_blobs(include=["metadata"])}
        self.assertEqual(with_meta["val/x.jpg"], {"n": "val_x_jpg"})

    def test_copy_blob(self):
        src = self.container.get_blob_client("source")
        src.upload_blob(b"copy me", metadata={"from": "source"})
        dst = self.container.get_blob_client("dest")
        copy = dst.start_copy_from_url(src.url)
        self.assertEqual(copy["copy_status"], "success")
        self.assertEqual(dst.download_blob().readall(), b"copy me")
        self.assertEqual(dst.get_blob_properties().metadata, {"from": "source"})

    def test_public_container_allows_anonymous_reads_only(self):
        self.container.upload_blob("public.txt", b"open")
        url = self.container.get_blob_client("public.txt").url
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(url)
        self.assertEqual(caught.exception.code, 404)
        self.container.set_container_access_policy({}, public_access="blob")
        with urllib.request.urlopen(url) as r:
            self.assertEqual(r.read(), b"open")
        with self.assertRaises(urllib.error.HTTPError) as caught:  # listing needs "container"
            urllib.request.urlopen(self.container.url + "?restype=container&comp=list")
        self.container.set_container_access_policy({}, public_access="container")
        with urllib.request.urlopen(self.container.url + "?restype=container&comp=list") as r:
            self.assertIn(b"public.txt", r.read())
        request = urllib.request.Request(url, data=b"x", method="PUT", headers={"x-ms-blob-type": "BlockBlob"})
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request)
        self.assertEqual(caught.exception.code, 401)
        self.assertEqual(self.container.get_blob_client("public.txt").download_blob().readall(), b"open")

    def test_account_sas(self):
        token = generate_account_sas(DEV_ACCOUNT, DEV_KEY, ResourceTypes(container=True, object=True),
                                     AccountSasPermissions(read=True, list=True),
                                     expiry=utcnow() + datetime.timedelta(hours=1))
        self.container.upload_blob("s.txt", b"sas")
        sas_svc = BlobServiceClient(f"{self.endpoints['blob']}/{DEV_ACCOUNT}", credential=token)
        c = sas_svc.get_container_client(self.name)
        self.assertEqual(c.get_blob_client("s.txt").download_blob().readall(), b"sas")
        self.assertEqual([b.name for b in c.list_blobs()], ["s.txt"])
        with self.assertRaises(HttpResponseError) as caught:
            c.upload_blob("new.txt", b"no write permission")
        self.assertEqual(caught.exception.error_code, "AuthorizationPermissionMismatch")
        with self.assertRaises(HttpResponseError) as caught:
            list(sas_svc.list_containers())  # service level not in srt
        self.assertEqual(caught.exception.error_code, "AuthorizationResourceTypeMismatch")

    def test_service_sas_container_and_blob(self):
        self.container.upload_blob("one.txt", b"1")
        self.container.upload_blob("two.txt", b"2")
        expiry = utcnow() + datetime.timedelta(hours=1)
        container_token = generate_container_sas(DEV_ACCOUNT, self.name, account_key=DEV_KEY,
                                                 permission=ContainerSasPermissions(read=True, write=True, list=True),
                                                 expiry=expiry)
        c = BlobServiceClient(f"{self.endpoints['blob']}/{DEV_ACCOUNT}", credential=container_token) \
            .get_container_client(self.name)
        c.upload_blob("three.txt", b"3")
        self.assertEqual(sorted(b.name for b in c.list_blobs()), ["one.txt", "three.txt", "two.txt"])
        blob_token = generate_blob_sas(DEV_ACCOUNT, self.name, "one.txt", account_key=DEV_KEY,
                                       permission=BlobSasPermissions(read=True), expiry=expiry)
        svc = BlobServiceClient(f"{self.endpoints['blob']}/{DEV_ACCOUNT}", credential=blob_token)
        self.assertEqual(svc.get_blob_client(self.name, "one.txt").download_blob().readall(), b"1")
        with self.assertRaises(HttpResponseError) as caught:
            svc.get_blob_client(self.name, "two.txt").download_blob().readall()
        self.assertEqual(caught.exception.status_code, 403)
        expired = generate_blob_sas(DEV_ACCOUNT, self.name, "one.txt", account_key=DEV_KEY,
                                    permission=BlobSasPermissions(read=True),
                                    expiry=utcnow() - datetime.timedelta(minutes=5))
        with self.assertRaises(ClientAuthenticationError) as caught:
            BlobServiceClient(f"{self.endpoints['blob']}/{DEV_ACCOUNT}", credential=expired) \
                .get_blob_client(self.name, "one.txt").download_blob().readall()
        self.assertEqual(caught.exception.error_code, "AuthenticationFailed")
        # A SAS that "never" expires (9999-12-31, as portals and scripts make them) is valid.
        forever = generate_blob_sas(DEV_ACCOUNT, self.name, "one.txt", account_key=DEV_KEY,
                                    permission=BlobSasPermissions(read=True),
                                    expiry=datetime.datetime(9999, 12, 31, 23, 59, 59))
        self.assertEqual(BlobServiceClient(f"{self.endpoints['blob']}/{DEV_ACCOUNT}", credential=forever)
                         .get_blob_client(self.name, "one.txt").download_blob().readall(), b"1")

    def test_a_content_encoded_body_is_stored_as_sent(self):
        """Put Blob's Content-Encoding is the blob's property: the service keeps the bytes as they
        came (compressed) and hands them back with the header, for the client to decode."""
        packed = gzip.compress(b"log line\n" * 1000)
        raw = RawClient(self.endpoints["blob"])
        put = raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/log.gz", body=packed,
                          headers={"x-ms-blob-type": "BlockBlob", "Content-Encoding": "gzip"})
        self.assertEqual(put.status, 201, put.body)
        got = raw.request("GET", f"/{DEV_ACCOUNT}/{self.name}/log.gz")
        self.assertEqual((got.body, got.headers.get("content-encoding")), (packed, "gzip"))
        props = self.container.get_blob_client("log.gz").get_blob_properties()
        self.assertEqual((props.size, props.content_settings.content_encoding), (len(packed), "gzip"))

    def test_conditions_content_type_and_md5_as_the_service_answers_them(self):
        blob = self.container.get_blob_client("answers.txt")
        blob.upload_blob(b"abcdef")
        raw = RawClient(self.endpoints["blob"])
        path = f"/{DEV_ACCOUNT}/{self.name}/answers.txt"
        # "If none matches *" of a read of something that exists cannot be satisfied.
        r = raw.request("GET", path, headers={"If-None-Match": "*"})
        self.assertEqual((r.status, r.code), (400, "UnsatisfiableCondition"))
        # A range: the blob's MD5 in x-ms-blob-content-md5 only; its own MD5 when asked.
        whole = base64.b64encode(hashlib.md5(b"abcdef").digest()).decode()
        r = raw.request("GET", path, headers={"x-ms-range": "bytes=0-1"})
        self.assertEqual((r.status, r.headers.get("x-ms-blob-content-md5"), r.headers.get("content-md5")), (206, whole, None))
        r = raw.request("GET", path, headers={"x-ms-range": "bytes=0-1", "x-ms-range-get-content-md5": "true"})
        self.assertEqual(r.headers.get("content-md5"), base64.b64encode(hashlib.md5(b"ab").digest()).decode())
        r = raw.request("GET", path)
        self.assertEqual((r.headers.get("content-md5"), r.headers.get("x-ms-blob-content-md5")), (whole, None))
        # An upload without a type gets the default; Set Blob Properties without one clears it
        # (and the MD5 with it).
        self.assertEqual(blob.get_blob_properties().content_settings.content_type, "application/octet-stream")
        blob.set_http_headers(ContentSettings())
        self.assertIsNone(blob.get_blob_properties().content_settings.content_type)
        # Listings write a blob's ETag without its quotes.
        listed = raw.request("GET", f"/{DEV_ACCOUNT}/{self.name}", [("restype", "container"), ("comp", "list")])
        etag = blob.get_blob_properties().etag
        self.assertIn(f"<Etag>{etag.strip(chr(34))}</Etag>".encode(), listed.body)
        # A delete ignores If-None-Match: *, and says it was permanent.
        r = raw.request("DELETE", path, headers={"If-None-Match": "*"})
        self.assertEqual((r.status, r.headers.get("x-ms-delete-type-permanent")), (202, "true"))

    def test_wrong_key_is_refused(self):
        bad_key = base64.b64encode(b"x" * 64).decode()
        svc = BlobServiceClient(f"{self.endpoints['blob']}/{DEV_ACCOUNT}",
                                credential={"account_name": DEV_ACCOUNT, "account_key": bad_key})
        with self.assertRaises(ClientAuthenticationError) as caught:
            svc.get_container_client(self.name).get_container_properties()
        self.assertEqual(caught.exception.error_code, "AuthenticationFailed")

    def test_512_mib_chunked_upload_and_download(self):
        blob = self.container.get_blob_client("large.bin")
        chunk = os.urandom(MiB)
        # Every MiB differs, so that blocks committed or read in the wrong order show.
        data = b"".join(i.to_bytes(8, "little") + chunk[8:] for i in range(512))
        blob.upload_blob(data, max_concurrency=4)
        props = blob.get_blob_properties()
        self.assertEqual(props.size, 512 * MiB)
        digest = hashlib.sha256()
        stream = blob.download_blob(max_concurrency=4)
        for piece in stream.chunks():
            digest.update(piece)
        self.assertEqual(digest.digest(), hashlib.sha256(data).digest())


if __name__ == "__main__":
    unittest.main()
