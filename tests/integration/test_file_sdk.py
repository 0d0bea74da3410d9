"""The File service driven by azure.storage.fileshare for every operation the emulator serves."""
import datetime
import hashlib
import os
import shutil
import unittest

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.fileshare import (AccountSasPermissions, ContentSettings, FileSasPermissions,
                                     ResourceTypes, ShareFileClient, ShareSasPermissions,
                                     ShareServiceClient, generate_account_sas, generate_file_sas,
                                     generate_share_sas)

from harness import DEV_ACCOUNT, DEV_KEY, StorageTestCase

MiB = 1024 * 1024


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


class FileSdk(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.svc = ShareServiceClient.from_connection_string(self.conn)
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.share = self.svc.create_share(self.name)
        self.addCleanup(lambda: self.svc.delete_share(self.name))

    def test_share_lifecycle_quota_metadata_listing(self):
        with self.assertRaises(ResourceExistsError) as caught:
            self.svc.create_share(self.name)
        self.assertEqual(caught.exception.error_code, "ShareAlreadyExists")
        self.share.set_share_quota(10)
        self.share.set_share_metadata({"team": "ml"})
        props = self.share.get_share_properties()
        self.assertEqual(props.quota, 10)
        self.assertEqual(props.metadata, {"team": "ml"})
        listed = {s.name: s for s in self.svc.list_shares(include_metadata=True)}
        self.assertEqual(listed[self.name].metadata, {"team": "ml"})
        self.share.get_file_client("f").upload_file(b"12345")
        self.assertEqual(self.share.get_share_stats(), 5)
        with self.assertRaises(ResourceNotFoundError) as caught:
            self.svc.get_share_client("missing-share").get_share_properties()
        self.assertEqual(caught.exception.error_code, "ShareNotFound")

    def test_directories(self):
        d = self.share.create_directory("data", metadata={"kind": "input"})
        sub = d.create_subdirectory("sub")
        self.assertEqual(d.get_directory_properties().metadata, {"kind": "input"})
        with self.assertRaises(ResourceExistsError) as caught:
            self.share.create_directory("data")
        self.assertEqual(caught.exception.error_code, "ResourceAlreadyExists")
        with self.assertRaises(ResourceNotFoundError) as caught:
            self.share.create_directory("nope/child")
        self.assertEqual(caught.exception.error_code, "ParentNotFound")
        sub.upload_file("f.txt", b"x")
        with self.assertRaises(ResourceExistsError) as caught:
            sub.delete_directory()
        self.assertEqual(caught.exception.error_code, "DirectoryNotEmpty")
        sub.delete_file("f.txt")
        sub.delete_directory()
        names = [e["name"] for e in self.share.list_directories_and_files()]
        self.assertEqual(names, ["data"])
        d.set_directory_metadata({"kind": "changed"})
        self.assertEqual(d.get_directory_properties().metadata, {"kind": "changed"})

    def test_names_are_case_insensitive_and_case_preserving(self):
        self.share.create_directory("Models")
        self.share.get_file_client("Models/Best.PT").upload_file(b"weights")
        self.assertEqual(self.share.get_file_client("models/best.pt").download_file().readall(), b"weights")
        with self.assertRaises(ResourceExistsError):
            self.share.create_directory("MODELS")
        self.assertEqual([e["name"] for e in self.share.list_directories_and_files("models")], ["Best.PT"])

    def test_files_ranges_properties_metadata(self):
        f = self.share.get_file_client("data.bin")
        data = os.urandom(3 * MiB + 123)
        f.upload_file(data, metadata={"a": "1"},
                      content_settings=ContentSettings(content_type="application/x-test"))
        self.assertEqual(f.download_file().readall(), data)
        self.assertEqual(f.download_file(offset=MiB, length=100).readall(), data[MiB:MiB + 100])
        props = f.get_file_properties()
        self.assertEqual(props.size, len(data))
        self.assertEqual(props.metadata, {"a": "1"})
        self.assertEqual(props.content_settings.content_type, "application/x-test")
        f.set_file_metadata({"b": "2"})
        self.assertEqual(f.get_file_properties().metadata, {"b": "2"})
        f.set_http_headers(ContentSettings(content_type="text/plain"))
        self.assertEqual(f.get_file_properties().content_settings.content_type, "text/plain")
        f.resize_file(10)
        self.assertEqual(f.download_file().readall(), data[:10])
        f.resize_file(1000)
        self.assertEqual(f.download_file().readall(), data[:10] + b"\0" * 990)

    def test_put_range_clear_range_and_list_ranges(self):
        f = self.share.get_file_client("sparse.bin")
        f.create_file(8 * MiB)
        f.upload_range(b"A" * 4096, offset=4096, length=4096)
        f.upload_range(b"B" * 4096, offset=4 * MiB, length=4096)
        ranges = f.get_ranges()
        self.assertEqual([(r["start"], r["end"]) for r in ranges],
                         [(4096, 8191), (4 * MiB, 4 * MiB + 4095)])
        content = f.download_file(offset=4090, length=12).readall()
        self.assertEqual(content, b"\0" * 6 + b"A" * 6)
        f.clear_range(offset=4096, length=4096)
        self.assertEqual(f.download_file(offset=4096, length=4096).readall(), b"\0" * 4096)
        with self.assertRaises(HttpResponseError) as caught:
            f.upload_range(b"C" * 10, offset=8 * MiB - 5, length=10)
        self.assertEqual(caught.exception.status_code, 416)

    def test_empty_file_and_missing_files(self):
        f = self.share.get_file_client("empty")
        f.upload_file(b"")
        self.assertEqual(f.download_file().readall(), b"")
        missing = self.share.get_file_client("missing.txt")
        with self.assertRaises(ResourceNotFoundError) as caught:
            missing.get_file_properties()
        self.assertEqual(caught.exception.status_code, 404)
        with self.assertRaises(ResourceNotFoundError) as caught:
            self.share.get_file_client("nodir/x").download_file().readall()
        self.assertEqual(caught.exception.error_code, "ParentNotFound")

    def test_links_left_in_a_shares_directory_reach_nothing_outside(self):
        # Where a share is linked instead of mounted, a job can leave symbolic links in its
        # directory: the File API must not read or write through them.
        outside = os.path.join(os.path.dirname(self.emu.location), f"outside-{self.name}")
        os.makedirs(outside)
        self.addCleanup(shutil.rmtree, outside, ignore_errors=True)
        with open(os.path.join(outside, "secret.txt"), "wb") as f:
            f.write(b"secret")
        self.share.get_file_client("model.bin").upload_file(b"weights")
        self.share.create_directory("dir")
        self.share.get_file_client("dir/f.txt").upload_file(b"in the share")
        on_disk = os.path.join(self.emu.location, "storage", DEV_ACCOUNT, "shares", self.name)
        self.assertTrue(os.path.isfile(os.path.join(on_disk, "model.bin")), os.listdir(on_disk))
        os.remove(os.path.join(on_disk, "model.bin"))
        os.symlink(os.path.join(outside, "secret.txt"), os.path.join(on_disk, "model.bin"))
        os.remove(os.path.join(on_disk, "dir", "f.txt"))
        os.rmdir(os.path.join(on_disk, "dir"))
        os.symlink(outside, os.path.join(on_disk, "dir"))
        for path in ("model.bin", "dir/secret.txt", "dir/f.txt"):
            with self.subTest(path), self.assertRaises(ResourceNotFoundError):
                self.share.get_file_client(path).download_file().readall()
        with self.assertRaises(ResourceNotFoundError):
            self.share.get_file_client("model.bin").upload_range(b"XX", offset=0, length=2)
        with self.assertRaises(HttpResponseError) as caught:
            self.share.get_file_client("dir/new.txt").upload_file(b"planted")
        self.assertEqual(caught.exception.status_code, 404)
        self.share.get_file_client("model.bin").delete_file()
        with open(os.path.join(outside, "secret.txt"), "rb") as f:
            self.assertEqual(f.read(), b"secret")
        self.assertEqual(sorted(os.listdir(outside)), ["secret.txt"])

    def test_listing_pages(self):
        for i in range(5):
            self.share.get_file_client(f"f{i}").upload_file(b"x")
        pages = list(self.share.list_directories_and_files(results_per_page=2).by_page())
        self.assertEqual([len(list(p)) for p in pages], [2, 2, 1])

    def test_share_and_file_sas(self):
        self.share.get_file_client("r.txt").upload_file(b"readable")
        expiry = utcnow() + datetime.timedelta(hours=1)
        share_token = generate_share_sas(DEV_ACCOUNT, self.name, DEV_KEY,
                                         permission=ShareSasPermissions(read=True, list=True), expiry=expiry)
        share = ShareServiceClient(f"{self.endpoints['file']}/{DEV_ACCOUNT}", credential=share_token) \
            .get_share_client(self.name)
        self.assertEqual(share.get_file_client("r.txt").download_file().readall(), b"readable")
        self.assertEqual([e["name"] for e in share.list_directories_and_files()], ["r.txt"])
        with self.assertRaises(HttpResponseError) as caught:
            share.get_file_client("w.txt").upload_file(b"no")
        self.assertEqual(caught.exception.error_code, "AuthorizationPermissionMismatch")
        file_token = generate_file_sas(DEV_ACCOUNT, self.name, ["r.txt"], DEV_KEY,
                                       permission=FileSasPermissions(read=True), expiry=expiry)
        f = ShareFileClient(f"{self.endpoints['file']}/{DEV_ACCOUNT}", self.name, "r.txt", credential=file_token)
        self.assertEqual(f.download_file().readall(), b"readable")
        account_token = generate_account_sas(DEV_ACCOUNT, DEV_KEY, ResourceTypes(service=True),
                                             AccountSasPermissions(list=True), expiry=expiry)
        names = [s.name for s in ShareServiceClient(f"{self.endpoints['file']}/{DEV_ACCOUNT}",
                                                    credential=account_token).list_shares()]
        self.assertIn(self.name, names)

    def test_rename_file_keeps_content_properties_and_id(self):
        self.share.create_directory("in")
        self.share.create_directory("out")
        f = self.share.get_file_client("in/a.txt")
        f.upload_file(b"payload", metadata={"k": "v"}, content_settings=ContentSettings(content_type="text/plain"))
        before = f.get_file_properties()
        moved = f.rename_file("out/b.txt")
        after = moved.get_file_properties()
        self.assertEqual(moved.download_file().readall(), b"payload")
        self.assertEqual(after.metadata, {"k": "v"})
        self.assertEqual(after.content_settings.content_type, "text/plain")
        self.assertEqual(after.file_id, before.file_id)
        self.assertNotEqual(after.etag, before.etag)
        with self.assertRaises(ResourceNotFoundError):
            f.get_file_properties()
        self.assertEqual([e["name"] for e in self.share.list_directories_and_files("in")], [])
        # What the rename sets: metadata and content type given with it.
        again = moved.rename_file("out/c.txt", metadata={"new": "1"}, content_type="application/json")
        props = again.get_file_properties()
        self.assertEqual((props.metadata, props.content_settings.content_type), ({"new": "1"}, "application/json"))
        # A change of case only is a rename of the entry to itself.
        self.assertEqual(again.rename_file("out/C.TXT").download_file().readall(), b"payload")
        self.assertEqual([e["name"] for e in self.share.list_directories_and_files("out")], ["C.TXT"])
        on_disk = os.path.join(self.emu.location, "storage", DEV_ACCOUNT, "shares", self.name, "out")
        self.assertEqual(os.listdir(on_disk), ["C.TXT"])

    def test_rename_directory_moves_what_it_holds(self):
        d = self.share.create_directory("run1")
        d.create_subdirectory("ckpt").upload_file("epoch1.pt", b"w1")
        d.upload_file("log.txt", b"log")
        renamed = d.rename_directory("run1-done")
        self.assertEqual(sorted(e["name"] for e in renamed.list_directories_and_files()), ["ckpt", "log.txt"])
        self.assertEqual(self.share.get_file_client("run1-done/ckpt/epoch1.pt").download_file().readall(), b"w1")
        with self.assertRaises(ResourceNotFoundError):
            d.get_directory_properties()
        # The entries moved keep working: written, listed, deleted under their new path.
        self.share.get_file_client("run1-done/ckpt/epoch2.pt").upload_file(b"w2")
        self.assertEqual(sorted(e["name"] for e in self.share.list_directories_and_files("run1-done/ckpt")),
                         ["epoch1.pt", "epoch2.pt"])
        self.share.get_directory_client("run1-done/ckpt").delete_file("epoch1.pt")
        with self.assertRaises(HttpResponseError) as caught:
            self.share.get_directory_client("run1-done").rename_directory("run1-done/inside")
        self.assertEqual((caught.exception.status_code, caught.exception.error_code), (400, "InvalidResourceName"))

    def test_rename_conflicts_and_missing_entries(self):
        self.share.get_file_client("a").upload_file(b"a")
        self.share.get_file_client("b").upload_file(b"b")
        self.share.create_directory("d")
        a = self.share.get_file_client("a")
        with self.assertRaises(ResourceExistsError) as caught:
            a.rename_file("b")
        self.assertEqual(caught.exception.error_code, "ResourceAlreadyExists")
        with self.assertRaises(ResourceExistsError) as caught:
            a.rename_file("d", overwrite=True)  # a directory is never replaced
        self.assertEqual(caught.exception.error_code, "ResourceAlreadyExists")
        self.share.get_file_client("b").set_http_headers(ContentSettings(), file_attributes="ReadOnly")
        with self.assertRaises(ResourceExistsError) as caught:
            a.rename_file("b", overwrite=True)
        self.assertEqual(caught.exception.error_code, "ReadOnlyAttribute")
        self.assertEqual(a.rename_file("b", overwrite=True, ignore_read_only=True).download_file().readall(), b"a")
        with self.assertRaises(ResourceNotFoundError) as caught:
            a.rename_file("c")
        self.assertEqual(caught.exception.error_code, "ResourceNotFound")
        with self.assertRaises(ResourceNotFoundError) as caught:
            self.share.get_file_client("b").rename_file("missing/c")
        self.assertEqual(caught.exception.error_code, "ParentNotFound")
        with self.assertRaises(ResourceNotFoundError):  # a directory is not renamed as a file
            self.share.get_file_client("d").rename_file("e")
        other = self.svc.create_share(self.name + "-other")
        self.addCleanup(lambda: self.svc.delete_share(self.name + "-other"))
        with self.assertRaises(HttpResponseError) as caught:
            other.get_file_client("x").rename_file("y")  # the source is that share's: fine, but missing
        self.assertEqual(caught.exception.error_code, "ResourceNotFound")

    def test_rename_with_a_sas_needs_delete_at_the_source(self):
        self.share.get_file_client("src").upload_file(b"s")
        expiry = utcnow() + datetime.timedelta(hours=1)

        def share_with(**permission):
            token = generate_share_sas(DEV_ACCOUNT, self.name, DEV_KEY, permission=ShareSasPermissions(**permission),
                                       expiry=expiry)
            return ShareServiceClient(f"{self.endpoints['file']}/{DEV_ACCOUNT}", credential=token) \
                .get_share_client(self.name)
        with self.assertRaises(HttpResponseError) as caught:
            share_with(read=True, write=True).get_file_client("src").rename_file("dst")
        self.assertEqual((caught.exception.status_code, caught.exception.error_code),
                         (403, "AuthorizationPermissionMismatch"))
        moved = share_with(read=True, write=True, delete=True).get_file_client("src").rename_file("dst")
        self.assertEqual(moved.download_file().readall(), b"s")

    def test_512_mib_upload_and_download(self):
        f = self.share.get_file_client("large.bin")
        data = os.urandom(MiB) * 512
        f.upload_file(data, max_concurrency=4)
        self.assertEqual(f.get_file_properties().size, 512 * MiB)
        digest = hashlib.sha256()
        for piece in f.download_file(max_concurrency=4).chunks():
            digest.update(piece)
        self.assertEqual(digest.digest(), hashlib.sha256(data).digest())


if __name__ == "__main__":
    unittest.main()
