"""The Blob service's answers as the cloud gives them: the transactional checksums each write
answers, headers by x-ms-version, and listings' MaxResults, as the Storage service's recordings
show them (tests/integration/test_storage_replay.py replays those)."""
import base64
import hashlib
import unittest

from harness import DEV_ACCOUNT, ContainerPerTest
from raw_storage import RawClient
from test_blob_kinds import crc64

OLD, SEALING = "2019-02-02", "2019-12-12"


def md5(data):
    return base64.b64encode(hashlib.md5(data).digest()).decode()


class BlobAnswers(ContainerPerTest, unittest.TestCase):
    def client(self, version=OLD):
        return RawClient(self.endpoints["blob"], version=version)

    def put(self, blob, data, query=(), headers=None, version=OLD):
        r = self.client(version).request("PUT", self.path(blob), list(query), body=data, headers=headers)
        self.assertEqual(r.status, 201, r.body)
        return r

    def test_put_blob_answers_the_bodys_crc64_and_md5(self):
        data = b"hello world"
        r = self.put("b", data, headers={"x-ms-blob-type": "BlockBlob"})
        self.assertEqual(r.headers.get("x-ms-content-crc64"), crc64(data))
        self.assertEqual(r.headers.get("content-md5"), md5(data))

    def test_put_block_answers_the_md5_sent_else_the_crc64(self):
        data = b"a" * 1000
        plain = self.put("b", data, [("comp", "block"), ("blockid", "MQ==")])
        self.assertEqual(plain.headers.get("x-ms-content-crc64"), crc64(data))
        self.assertNotIn("content-md5", plain.headers)
        with_md5 = self.put("b", data, [("comp", "block"), ("blockid", "Mg==")], headers={"Content-MD5": md5(data)})
        self.assertEqual(with_md5.headers.get("content-md5"), md5(data))
        self.assertNotIn("x-ms-content-crc64", with_md5.headers)

    def test_put_block_list_answers_the_crc64_of_the_list_sent(self):
        self.put("b", b"x", [("comp", "block"), ("blockid", "MQ==")])
        body = b"<?xml version='1.0' encoding='utf-8'?>\n<BlockList><Latest>MQ==</Latest></BlockList>"
        r = self.put("b", body, [("comp", "blocklist")])
        self.assertEqual(r.headers.get("x-ms-content-crc64"), crc64(body))

    def test_append_block_with_md5_answers_no_crc64(self):
        self.put("a", b"", headers={"x-ms-blob-type": "AppendBlob"})
        data = b"abc"
        r = self.put("a", data, [("comp", "appendblock")], headers={"Content-MD5": md5(data)})
        self.assertEqual(r.headers.get("content-md5"), md5(data))
        self.assertNotIn("x-ms-content-crc64", r.headers)
        self.assertEqual(self.put("a", data, [("comp", "appendblock")]).headers.get("x-ms-content-crc64"), crc64(data))

    def test_append_blob_properties_name_sealing_from_2019_12_12(self):
        self.put("a", b"", headers={"x-ms-blob-type": "AppendBlob"})
        self.assertNotIn("x-ms-blob-sealed", self.client(OLD).request("HEAD", self.path("a")).headers)
        self.assertEqual(self.client(SEALING).request("HEAD", self.path("a")).headers.get("x-ms-blob-sealed"), "false")

    def test_listings_name_max_results_only_when_asked(self):
        self.put("b", b"x", headers={"x-ms-blob-type": "BlockBlob"})
        for path, query in ((self.path(), [("restype", "container"), ("comp", "list")]),
                            (f"/{DEV_ACCOUNT}/", [("comp", "list"), ("prefix", self.name)])):
            plain = self.client().request("GET", path, query)
            self.assertEqual(plain.status, 200, plain.body)
            self.assertNotIn(b"<MaxResults>", plain.body)
            asked = self.client().request("GET", path, query + [("maxresults", "2")])
            self.assertIn(b"<MaxResults>2</MaxResults>", asked.body)

    def test_batch_parts_are_answered_at_the_batchs_version(self):
        from azure.storage.blob import BlobServiceClient
        container = BlobServiceClient.from_connection_string(self.conn, api_version=SEALING).get_container_client(self.name)
        for name in ("a", "b"):
            container.upload_blob(name, b"x")
        parts = list(container.delete_blobs("a", "b"))
        self.assertEqual([p.status_code for p in parts], [202, 202])
        self.assertEqual([p.headers.get("x-ms-version") for p in parts], [SEALING, SEALING])

    def test_put_blob_from_url_writes_a_blob_not_a_copy(self):
        from azure.storage.blob import BlobSasPermissions, generate_blob_sas
        import datetime
        from harness import DEV_KEY
        self.container.upload_blob("src", b"abc")
        sas = generate_blob_sas(DEV_ACCOUNT, self.name, "src", account_key=DEV_KEY, permission=BlobSasPermissions(read=True),
                                expiry=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1))
        source = f"{self.endpoints['blob']}/{DEV_ACCOUNT}/{self.name}/src?{sas}"
        self.container.get_blob_client("put").upload_blob_from_url(source)
        self.container.get_blob_client("copied").start_copy_from_url(source)
        put = self.client(SEALING).request("HEAD", self.path("put")).headers
        self.assertEqual(self.client(SEALING).request("GET", self.path("put")).body, b"abc")
        self.assertFalse([h for h in put if h.startswith("x-ms-copy-")], put)
        self.assertEqual(self.client(SEALING).request("HEAD", self.path("copied")).headers.get("x-ms-copy-status"), "success")

    def test_containers_name_the_accounts_encryption_scope(self):
        props = self.client().request("GET", self.path(), [("restype", "container")]).headers
        self.assertEqual((props.get("x-ms-default-encryption-scope"), props.get("x-ms-deny-encryption-scope-override")),
                         ("$account-encryption-key", "false"))
        listed = self.client().request("GET", f"/{DEV_ACCOUNT}/", [("comp", "list"), ("prefix", self.name)]).body
        self.assertIn(b"<DefaultEncryptionScope>$account-encryption-key</DefaultEncryptionScope>"
                      b"<DenyEncryptionScopeOverride>false</DenyEncryptionScopeOverride>", listed)

    def test_put_block_list_sets_the_tier_it_names(self):
        self.put("b", b"x", [("comp", "block"), ("blockid", "MQ==")])
        body = b"<?xml version='1.0' encoding='utf-8'?>\n<BlockList><Latest>MQ==</Latest></BlockList>"
        self.put("b", body, [("comp", "blocklist")], headers={"x-ms-access-tier": "Cool"})
        props = self.client().request("HEAD", self.path("b")).headers
        self.assertEqual(props.get("x-ms-access-tier"), "Cool")
        self.assertNotIn("x-ms-access-tier-inferred", props)  # said only of an inferred tier
        self.assertIn("x-ms-access-tier-change-time", props)
        self.put("c", b"x", [("comp", "block"), ("blockid", "MQ==")])
        bad = self.client().request("PUT", self.path("c"), [("comp", "blocklist")], body=body,
                                    headers={"x-ms-access-tier": "Lukewarm"})
        self.assertEqual((bad.status, bad.code), (400, "InvalidHeaderValue"))
        self.assertEqual(self.client().request("HEAD", self.path("c")).status, 404)


if __name__ == "__main__":
    unittest.main()
