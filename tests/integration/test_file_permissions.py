"""x-ms-file-permission on Create File, Create Directory and their Set Properties: `inherit`,
`preserve` or an SDDL security descriptor of at most 8 KiB; anything else is the service's
400 FileInvalidPermission (an oversized one 400 InvalidHeaderValue), with nothing made or changed.
Create Permission and Get Permission: a share's permissions by key, and the keys files and
directories answer."""
import json
import unittest

from azure.core.exceptions import HttpResponseError
from azure.storage.fileshare import ContentSettings, ShareServiceClient

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


    def test_create_and_get_permission_with_the_sdk(self):
        share = ShareServiceClient.from_connection_string(self.conn).get_share_client(self.share)
        given = ("O:S-1-5-21-2127521184-1604012920-1887927527-21560751G:S-1-5-21-2127521184-1604012920-1887927527-513"
                 "D:AI(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x1200a9;;;S-1-5-21-397955417-626881126-188441444-3053964)")
        key = share.create_permission_for_share(given)
        self.assertRegex(key, r"^\d+\*\d+$")
        returned = share.get_permission_for_share(key)
        self.assertEqual(returned, given)
        self.assertEqual(share.create_permission_for_share(returned), key, "the same permission, the same key")
        # A file made with the key answers it; one made with the SDDL itself too; Set Properties changes it.
        f = share.get_file_client("f")
        f.create_file(16, permission_key=key)
        self.assertEqual(f.get_file_properties().permission_key, key)
        g = share.get_file_client("g")
        g.create_file(16, file_permission=SDDL)
        g_key = g.get_file_properties().permission_key
        self.assertNotEqual(g_key, key)
        self.assertEqual(share.get_permission_for_share(g_key), SDDL)
        f.set_http_headers(ContentSettings(), permission_key=g_key)
        self.assertEqual(f.get_file_properties().permission_key, g_key)
        d = share.create_directory("d", file_permission=SDDL)
        self.assertEqual(d.get_directory_properties().permission_key, g_key)
        # Inherited permissions: the default keys of a file and of a directory, which Get Permission reads.
        plain = share.get_file_client("plain")
        plain.create_file(1)
        plain_dir = share.create_directory("plain-dir")
        file_key = plain.get_file_properties().permission_key
        dir_key = plain_dir.get_directory_properties().permission_key
        self.assertNotEqual(file_key, dir_key)
        for default in (file_key, dir_key):
            self.assertTrue(share.get_permission_for_share(default).startswith("O:"))
        # A listing names each entry's key (x-ms-version 2020-04-08).
        listed = {e["name"]: e for e in share.list_directories_and_files(include=["PermissionKey"])}
        self.assertEqual(listed["g"].permission_key, g_key)

    def test_permission_refusals_store_nothing(self):
        def create(body):
            return self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.share}", [("restype", "share"), ("comp", "filepermission")],
                                    headers={"Content-Type": "application/json"}, body=body)
        def get(key):
            return self.raw.request("GET", f"/{DEV_ACCOUNT}/{self.share}", [("restype", "share"), ("comp", "filepermission")],
                                    headers={"x-ms-file-permission-key": key})
        for body, expected in ((json.dumps({"permission": "abcde"}).encode(), (400, "FileInvalidPermission")),
                               (json.dumps({"permission": "O:SYD:(A;;FA;;;SY"}).encode(), (400, "FileInvalidPermission")),
                               (b"not json", (400, "InvalidInput")),
                               (json.dumps({"sddl": SDDL}).encode(), (400, "InvalidInput")),
                               (json.dumps({"permission": "O:SYD:" + "(A;;FA;;;SY)" * 6000}).encode(),
                                (413, "RequestBodyTooLarge"))):
            r = create(body)
            self.assertEqual((r.status, r.code), expected, body[:40])
        made = create(json.dumps({"permission": SDDL}).encode())
        self.assertEqual(made.status, 201, made.body)
        key = made.headers["x-ms-file-permission-key"]
        self.assertEqual(json.loads(get(key).body), {"permission": SDDL})
        # A key the share does not hold, a malformed key, none at all; another share's permission.
        for bad, expected in (("1*2", (400, "InvalidHeaderValue")), ("not-a-key", (400, "InvalidHeaderValue"))):
            r = get(bad)
            self.assertEqual((r.status, r.code), expected, bad)
        r = self.raw.request("GET", f"/{DEV_ACCOUNT}/{self.share}", [("restype", "share"), ("comp", "filepermission")])
        self.assertEqual((r.status, r.code), (400, "MissingRequiredHeader"))
        other = self.share + "-other"
        self.assertEqual(self.raw.request("PUT", f"/{DEV_ACCOUNT}/{other}", [("restype", "share")]).status, 201)
        self.addCleanup(lambda: self.raw.request("DELETE", f"/{DEV_ACCOUNT}/{other}", [("restype", "share")]))
        r = self.raw.request("GET", f"/{DEV_ACCOUNT}/{other}", [("restype", "share"), ("comp", "filepermission")],
                             headers={"x-ms-file-permission-key": key})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        r = self.raw.request("GET", f"/{DEV_ACCOUNT}/missing-share", [("restype", "share"), ("comp", "filepermission")],
                             headers={"x-ms-file-permission-key": key})
        self.assertEqual((r.status, r.code), (404, "ShareNotFound"))
        # A file made with a key the share does not hold is refused and not made; both headers too.
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{other}/f", [],
                             headers={**SMB, "x-ms-type": "file", "x-ms-content-length": "1", "x-ms-file-permission-key": key})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        r = self.raw.request("PUT", f"/{DEV_ACCOUNT}/{self.share}/f", [],
                             headers={**SMB, "x-ms-type": "file", "x-ms-content-length": "1", "x-ms-file-permission-key": key,
                                      "x-ms-file-permission": "inherit"})
        self.assertEqual((r.status, r.code), (400, "InvalidHeaderValue"))
        for share in (self.share, other):
            self.assertEqual(self.raw.request("HEAD", f"/{DEV_ACCOUNT}/{share}/f").status, 404)

    def test_copy_takes_the_sources_permission_or_the_one_named(self):
        svc = ShareServiceClient.from_connection_string(self.conn)
        share = svc.get_share_client(self.share)
        src = share.get_file_client("src")
        src.create_file(8, file_permission=SDDL)
        key = src.get_file_properties().permission_key
        other = svc.create_share(self.share + "-copy")
        self.addCleanup(lambda: svc.delete_share(self.share + "-copy"))
        dst = other.get_file_client("dst")
        dst.start_copy_from_url(src.url, file_permission="source")
        self.assertEqual(dst.get_file_properties().permission_key, key)
        self.assertEqual(other.get_permission_for_share(key), SDDL, "the permission went with the copy")
        dst.start_copy_from_url(src.url)
        self.assertNotEqual(dst.get_file_properties().permission_key, key, "no mode: the default permission")
        with self.assertRaises(HttpResponseError) as caught:
            dst.start_copy_from_url(src.url, permission_key="1*2")
        self.assertEqual(caught.exception.error_code, "InvalidHeaderValue")
        with self.assertRaises(HttpResponseError) as caught:
            other.get_permission_for_share("1*2")
        self.assertEqual(caught.exception.error_code, "InvalidHeaderValue")


if __name__ == "__main__":
    unittest.main()
