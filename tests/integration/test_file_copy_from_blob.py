"""Copy File from a blob (start_copy_from_url with a blob's URL): a blob of this emulator, of any
account it holds, read with its own SAS, from a public container, or with the key of the account
that signs the copy; complete at once (x-ms-copy-status success, the copy properties on the copy),
the blob's bytes, content headers and metadata; a blob that cannot be read or is not there is
CannotVerifyCopySource, and nothing is made."""
import datetime
import unittest

from azure.core.exceptions import HttpResponseError
from azure.storage.blob import BlobSasPermissions, BlobServiceClient, generate_blob_sas
from azure.storage.blob import ContentSettings as BlobContentSettings
from azure.storage.fileshare import ShareServiceClient

from harness import DEV_ACCOUNT, DEV_KEY, Emulator, StorageTestCase, connection_string
from raw_storage import RawClient

OTHER = "blobsource"
OTHER_KEY = "YmxvYnNvdXJjZWtleWJsb2Jzb3VyY2VrZXlibG9ic291cmNla2V5YmxvYnNvdXJj"
EXPIRY = datetime.datetime(2099, 1, 1)


class FileCopyFromBlob(StorageTestCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.emu = Emulator(args=["--account", f"{OTHER}:{OTHER_KEY}"]).start()
        cls.endpoints = cls.emu.endpoints
        cls.conn = connection_string(cls.endpoints)

    def setUp(self):
        self.name = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.files = ShareServiceClient.from_connection_string(self.conn)
        self.share = self.files.create_share(self.name)
        self.addCleanup(lambda: self.files.delete_share(self.name))
        self.blobs = BlobServiceClient.from_connection_string(self.conn)
        self.container = self.blobs.create_container(self.name)
        self.addCleanup(lambda: self.blobs.delete_container(self.name))
        self.blob = self.container.upload_blob("model.pt", b"w" * 5000, metadata={"epoch": "3"},
                                               content_settings=BlobContentSettings(content_type="application/x-pt"))

    def sas_url(self, blob, account=DEV_ACCOUNT, key=DEV_KEY, permission="r"):
        sas = generate_blob_sas(account, blob.container_name, blob.blob_name, account_key=key,
                                permission=BlobSasPermissions.from_string(permission), expiry=EXPIRY)
        return f"{blob.url}?{sas}"

    def test_a_blob_with_its_sas_is_copied_at_once(self):
        dst = self.share.get_file_client("model.pt")
        url = self.sas_url(self.blob)
        copy = dst.start_copy_from_url(url)
        self.assertEqual(copy["copy_status"], "success")
        self.assertTrue(copy["copy_id"])
        self.assertEqual(dst.download_file().readall(), b"w" * 5000)
        props = dst.get_file_properties()
        self.assertEqual(props.content_settings.content_type, "application/x-pt")
        self.assertEqual(props.metadata, {"epoch": "3"})
        self.assertEqual((props.copy.status, props.copy.id, props.copy.source, props.copy.progress),
                         ("success", copy["copy_id"], url, "5000/5000"))
        self.assertIn("Archive", props.file_attributes)
        self.assertEqual([(r["start"], r["end"]) for r in dst.get_ranges()], [(0, 4999)])
        # The request's metadata wins; a blob's snapshot is a source too.
        snapshot = self.blob.create_snapshot()
        self.blob.upload_blob(b"newer", overwrite=True)
        old = self.container.get_blob_client("model.pt", snapshot=snapshot["snapshot"])
        dst.start_copy_from_url(self.sas_url(self.blob) + "&snapshot=" + snapshot["snapshot"], metadata={"k": "v"})
        self.assertEqual(dst.download_file().readall(), b"w" * 5000)
        self.assertEqual(dst.get_file_properties().metadata, {"k": "v"})
        self.assertTrue(old.url)

    def test_public_blobs_the_signing_accounts_own_and_other_accounts(self):
        # Signed with the account's key: its own private blob without a SAS.
        dst = self.share.get_file_client("own")
        self.assertEqual(dst.start_copy_from_url(self.blob.url)["copy_status"], "success")
        self.assertEqual(dst.download_file().readall(), b"w" * 5000)
        # Another account's blob: with its SAS, or in a public container; else not found.
        other = BlobServiceClient(self.endpoints["blob"] + "/" + OTHER, credential={"account_name": OTHER,
                                                                                   "account_key": OTHER_KEY})
        private = other.create_container(self.name + "-p")
        public = other.create_container(self.name + "-q", public_access="blob")
        self.addCleanup(lambda: other.delete_container(self.name + "-p"))
        self.addCleanup(lambda: other.delete_container(self.name + "-q"))
        hidden = private.upload_blob("b", b"hidden")
        shown = public.upload_blob("b", b"shown")
        target = self.share.get_file_client("from-other")
        target.start_copy_from_url(self.sas_url(hidden, OTHER, OTHER_KEY))
        self.assertEqual(target.download_file().readall(), b"hidden")
        target.start_copy_from_url(shown.url)
        self.assertEqual(target.download_file().readall(), b"shown")
        with self.assertRaises(HttpResponseError) as caught:
            self.share.get_file_client("never").start_copy_from_url(hidden.url)
        self.assertEqual((caught.exception.status_code, caught.exception.error_code), (404, "CannotVerifyCopySource"))

    def test_refusals_make_nothing(self):
        raw = RawClient(self.endpoints["file"])
        path = f"/{DEV_ACCOUNT}/{self.name}/never"
        cases = (
            (self.sas_url(self.blob, permission="w"), (403, "CannotVerifyCopySource")),
            (self.sas_url(self.container.get_blob_client("missing")), (404, "CannotVerifyCopySource")),
            (f"{self.endpoints['blob']}/nosuchaccount/c/b", (404, "CannotVerifyCopySource")),
            (f"https://{DEV_ACCOUNT}.blob.core.windows.net/{self.name}/missing", (404, "CannotVerifyCopySource")),
        )
        for url, expected in cases:
            r = raw.request("PUT", path, [], headers={"x-ms-copy-source": url})
            self.assertEqual((r.status, r.code), expected, url)
            self.assertEqual(raw.request("HEAD", path).status, 404, url)
        # The cloud's name for the account's Blob endpoint reaches the same blob.
        r = raw.request("PUT", f"/{DEV_ACCOUNT}/{self.name}/by-cloud-name",
                        [], headers={"x-ms-copy-source": f"https://{DEV_ACCOUNT}.blob.core.windows.net/{self.name}/model.pt"})
        self.assertEqual((r.status, r.headers.get("x-ms-copy-status")), (202, "success"), r.body)
        # A SAS for https only reads the blob through an https URL (the cloud's name for it, as az
        # writes a source), not through this emulator's http one.
        https_only = generate_blob_sas(DEV_ACCOUNT, self.name, "model.pt", account_key=DEV_KEY, permission="r",
                                       expiry=EXPIRY, protocol="https")
        r = raw.request("PUT", path, [], headers={"x-ms-copy-source": f"{self.blob.url}?{https_only}"})
        self.assertEqual((r.status, r.code), (403, "CannotVerifyCopySource"))
        self.assertEqual(raw.request("HEAD", path).status, 404)
        r = raw.request("PUT", path, [], headers={
            "x-ms-copy-source": f"https://{DEV_ACCOUNT}.blob.core.windows.net/{self.name}/model.pt?{https_only}"})
        self.assertEqual(r.status, 202, r.body)
        raw.request("DELETE", path)
        # An archived blob is refused; Abort Copy File finds nothing pending after a copy.
        self.blob.set_standard_blob_tier("Archive")
        r = raw.request("PUT", path, [], headers={"x-ms-copy-source": self.sas_url(self.blob)})
        self.assertEqual((r.status, r.code), (409, "BlobArchived"))
        self.assertEqual(raw.request("HEAD", path).status, 404)
        copied = self.share.get_file_client("by-cloud-name")
        with self.assertRaises(HttpResponseError) as caught:
            copied.abort_copy(copied.get_file_properties().copy.id)
        self.assertEqual((caught.exception.status_code, caught.exception.error_code), (409, "NoPendingCopyOperation"))


if __name__ == "__main__":
    unittest.main()
