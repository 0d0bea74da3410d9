"""x-ms-file-permission on Create File, Create Directory and their Set Properties: `inherit`,
`preserve` or an SDDL security descriptor of at most 8 KiB; anything else is the service's
400 FileInvalidPermission (an oversized one 400 InvalidHeaderValue), with nothing made or changed."""
import unittest

from harness import DEV_ACCOUNT, StorageTestCase
from raw_storage import RawClient

SMB = {"x-ms-file-attributes": "none", "x-ms-file-creation-time": "now", "x-ms-file-last-write-time": "now"}
SDDL = "O:S-1-5-21-1-2-3-500G:S-1-5-21-1-2-3-513D:(A;;FA;;;SY)"


class FilePermissions(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.raw = RawClient(self.endpoints["file"], version="2019-02-02")
        self.share = self.id().rsplit(".", 1)[1].replace("_", "-")[:60].strip("-").lower()
        self.assertEqual(self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.share}", [("restype", "share")]).status, 201)
        self.addCleanup(lambda: self.raw.request("DELETE", f"/{DEV_ACCOUNT}/{self.share}", [("restype", "share")]))

    def create(self, name, permission, directory=False):
        headers = {**SMB, "x-ms-file-permission": permission}
        if directory:
            return self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.share}/{name}", [("restype", "directory")],
                                    headers=headers)
        return self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.share}/{name}", [],
                                headers={**headers, "x-ms-type": "file", "x-ms-content-length": "16"})

    def test_permissions_checked_before_anything_is_made(self):
        for permission, expected in (("abcde", (400, "FileInvalidPermission")), ("", (400, "FileInvalidPermission")),
                                     ("O:" + "A" * 9000, (400, "InvalidHeaderValue"))):
            for directory in (False, True):
                r = self.create("thing", permission, directory)
                self.assertEqual((r.status, r.code), expected, (permission[:10], directory))
                self.assertEqual(self.raw.request("HEAD", f"/{DEV_ACCOUNT}/{self.share}/thing").status, 404)
        for permission in ("Inherit", "inherit", SDDL):
            self.assertEqual(self.create("f-" + str(len(permission)), permission).status, 201, permission)
        self.assertEqual(self.create("dir", SDDL, directory=True).status, 201)
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.share}/f-7", [("comp", "properties")],
                             headers={**SMB, "x-ms-file-attributes": "preserve", "x-ms-file-permission": "bad"})
        self.assertEqual((r.status, r.code), (400, "FileInvalidPermission"))
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.share}/f-7", [("comp", "properties")],
                             headers={"x-ms-file-attributes": "preserve", "x-ms-file-creation-time": "preserve",
                                      "x-ms-file-last-write-time": "preserve", "x-ms-file-permission": "preserve"})
        self.assertEqual(r.status, 200, r.body)


if __name__ == "__main__":
    unittest.main()
