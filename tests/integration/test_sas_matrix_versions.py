"""The SAS permission matrix of blob versions (test_sas_matrix's machinery, on an account with
versioning on): a version is read with the letters that read its blob, through a blob SAS of the
version (sr=bv) too; deleting one takes x (delete version), which deletes neither the blob nor
grants anything else; the blob itself is deleted with d alone. Every subset of racwdlx, through an
account SAS, a container SAS and a blob or version SAS."""
import unittest

from azure.storage.blob import generate_blob_sas, generate_container_sas

import harness
from test_sas_matrix import ACCOUNT, EXPIRY, MatrixCase, blob_account_sas, file_account_sas

LETTERS = "racwdlx"
# The rows, as test_sas_matrix's; VERSION: the previous version of /mat/b that reset() makes.
OPS = [
    ("ListBlobs (versions)", "c", "l", "l", "container", False, True,
     "GET", "/mat", {"restype": "container", "comp": "list", "include": "versions"}, {}, b"", 200),
    ("GetBlob (version)", "o", "r", "r", "any", False, True, "GET", "/mat/b", {"versionid": "VERSION"}, {}, b"", 200),
    ("GetBlobProperties (version)", "o", "r", "r", "any", False, True,
     "HEAD", "/mat/b", {"versionid": "VERSION"}, {}, b"", 200),
    ("GetBlobMetadata (version)", "o", "r", "r", "any", False, True,
     "GET", "/mat/b", {"comp": "metadata", "versionid": "VERSION"}, {}, b"", 200),
    ("SetBlobTier (version)", "o", "w", "w", "any", False, True,
     "PUT", "/mat/b", {"comp": "tier", "versionid": "VERSION"}, {"x-ms-access-tier": "Cool"}, b"", 200),
    ("DeleteBlob (version)", "o", "x", "x", "any", False, True,
     "DELETE", "/mat/b", {"versionid": "VERSION"}, {}, b"", 202),
    ("DeleteBlob", "o", "d", "d", "any", False, True, "DELETE", "/mat/b", {}, {}, b"", 202),
]
API = "2021-04-01"


class BlobVersionSasMatrixTest(MatrixCase, unittest.TestCase):
    service = "blob"
    letters = LETTERS
    ops = OPS
    overwrite_code = "UnauthorizedBlobOverwrite"
    version = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        group = f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/sas"
        assert harness.arm_call(cls.emu.endpoints, "PUT", group, {"location": "eastus"}, api_version=API).ok
        r = harness.arm_call(cls.emu.endpoints, "PUT",
                             f"{group}/providers/Microsoft.Storage/storageAccounts/{ACCOUNT}/blobServices/default",
                             {"properties": {"isVersioningEnabled": True}}, api_version=API)
        assert r.status_code == 200, r.text

    def reset(self):
        c = self.client
        if b"<Name>mat</Name>" in c.ok("GET", "", {"comp": "list"}).body:
            c.ok("DELETE", "/mat", {"restype": "container"})
        c.ok("PUT", "/mat", {"restype": "container"})
        headers = {"x-ms-blob-type": "BlockBlob", "x-ms-meta-kept": "1"}
        self.version = c.ok("PUT", "/mat/b", {}, headers, b"original").headers["x-ms-version-id"]
        c.ok("PUT", "/mat/b", {}, headers, b"current")

    def snapshot(self):
        c = self.client
        listing = c.ok("GET", "/mat", {"restype": "container", "comp": "list", "include": "versions,metadata"}).body
        tier = c.send("HEAD", "/mat/b", {"versionid": self.version}).headers.get("x-ms-access-tier")
        return [listing, tier]

    def call(self, op, sas):
        op = list(op)
        op[9] = {k: (self.version if v == "VERSION" else v) for k, v in op[9].items()}
        return super().call(tuple(op), sas)

    def sas(self, op, kind, permissions):
        if kind == "account":
            return self.account_sas(permissions, "sco")
        if kind == "container":
            return generate_container_sas(ACCOUNT, "mat", account_key=self.key, permission=permissions, expiry=EXPIRY)
        version = self.version if "versionid" in op[9] else None
        return generate_blob_sas(ACCOUNT, "mat", "b", version_id=version, account_key=self.key,
                                 permission=permissions, expiry=EXPIRY)

    def account_sas(self, permissions, resource_types):
        return blob_account_sas(ACCOUNT, self.key, resource_types, permissions, EXPIRY)

    def other_service_sas(self, permissions):
        return file_account_sas(ACCOUNT, self.key, "sco", permissions, EXPIRY)

    def test_every_version_operation_against_every_permission_subset(self):
        self.run_matrix()


if __name__ == "__main__":
    unittest.main()
