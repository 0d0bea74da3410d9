"""Malformed and invalid storage requests get the service's status and error code, store
nothing, and never bring the emulator down."""
import base64
import hashlib
import os
import socket
import unittest

from harness import DEV_ACCOUNT, StorageTestCase
from raw_storage import RawClient

A = "/" + DEV_ACCOUNT


class BlobBadInput(StorageTestCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.blob = RawClient(cls.endpoints["blob"])
        assert cls.blob.request("PUT", f"{A}/bad", [("restype", "container")]).status == 201
        assert cls.blob.request("PUT", f"{A}/bad/kept", body=b"0123456789",
                                headers={"x-ms-blob-type": "BlockBlob"}).status == 201

    def tearDown(self):
        r = self.blob.request("GET", f"{A}/bad/kept")
        self.assertEqual((r.status, r.body), (200, b"0123456789"), "stored data changed")

    def expect(self, response, status, code):
        self.assertEqual((response.status, response.code), (status, code), response.body[:500])
        if status >= 400 and response.body:
            self.assertIn(f"<Code>{code}</Code>".encode(), response.body)

    def missing(self, name):
        self.assertEqual(self.blob.request("HEAD", f"{A}/bad/{name}").status, 404, f"{name} was stored")

    def test_malformed_block_list(self):
        block = base64.b64encode(b"b1").decode()
        self.blob.request("PUT", f"{A}/bad/bl", [("comp", "block"), ("blockid", block)], body=b"x")
        for body in (b"<BlockList><Latest>", b"not xml at all", b"<Other><Latest>x</Latest></Other>",
                     b"<BlockList><Bogus>x</Bogus></BlockList>",
                     b"<BlockList><Latest><x/></Latest></BlockList>"):
            r = self.blob.request("PUT", f"{A}/bad/bl", [("comp", "blocklist")], body=body)
            self.expect(r, 400, "InvalidXmlDocument")
        r = self.blob.request("PUT", f"{A}/bad/bl", [("comp", "blocklist")],
                              body=b"<BlockList><Latest>bm9wZQ==</Latest></BlockList>")
        self.expect(r, 400, "InvalidBlockList")
        self.missing("bl")

    def test_missing_and_invalid_headers(self):
        self.expect(self.blob.request("PUT", f"{A}/bad/nt", body=b"x"), 400, "MissingRequiredHeader")
        # A page blob needs its size; an append or page blob is created empty; no other type exists.
        self.expect(self.blob.request("PUT", f"{A}/bad/pg", body=b"x", headers={"x-ms-blob-type": "PageBlob"}),
                    400, "MissingRequiredHeader")
        self.expect(self.blob.request("PUT", f"{A}/bad/pg", body=b"x", headers={"x-ms-blob-type": "AppendBlob"}),
                    400, "InvalidHeaderValue")
        self.expect(self.blob.request("PUT", f"{A}/bad/pg", body=b"", headers={"x-ms-blob-type": "TapeBlob"}),
                    400, "InvalidHeaderValue")
        self.expect(self.blob.request("PUT", f"{A}/bad/pg", body=b"",
                                      headers={"x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": "-512"}),
                    400, "InvalidHeaderValue")
        self.expect(self.blob.request("PUT", f"{A}/bad/pg", body=b"",
                                      headers={"x-ms-blob-type": "BlockBlob", "x-ms-tags": "a=1&a=2"}),
                    400, "DuplicateTagNames")
        self.expect(self.blob.request("PUT", f"{A}/bad/pg", body=b"",
                                      headers={"x-ms-blob-type": "BlockBlob", "x-ms-access-tier": "Lukewarm"}),
                    400, "InvalidHeaderValue")
        # A copy source on another server: the emulator reaches none.
        self.expect(self.blob.request("PUT", f"{A}/bad/cp",
                                      headers={"x-ms-copy-source": f"http://example.invalid:1/{A[1:]}/bad/x"}),
                    404, "CannotVerifyCopySource")
        self.expect(self.blob.request("PUT", f"{A}/bad/v", body=b"x",
                                      headers={"x-ms-blob-type": "BlockBlob", "x-ms-version": "banana"}),
                    400, "InvalidHeaderValue")
        self.expect(self.blob.request("PUT", f"{A}/bad/m", body=b"x",
                                      headers={"x-ms-blob-type": "BlockBlob", "x-ms-meta-1bad": "v"}),
                    400, "InvalidMetadata")
        self.expect(self.blob.request("GET", f"{A}/bad/kept", headers={"If-Modified-Since": "yesterday"}),
                    400, "InvalidHeaderValue")
        for name in ("nt", "pg", "v", "m"):
            self.missing(name)

    def test_content_md5_mismatch_stores_nothing(self):
        wrong = base64.b64encode(b"0" * 16).decode()
        r = self.blob.request("PUT", f"{A}/bad/md5", body=b"payload",
                              headers={"x-ms-blob-type": "BlockBlob", "Content-MD5": wrong})
        self.expect(r, 400, "Md5Mismatch")
        self.missing("md5")
        # Not 128 bits in base64: InvalidMd5, whichever MD5 header carries it.
        for header, value in [("Content-MD5", "not-base64"), ("Content-MD5", base64.b64encode(b"0000").decode()),
                              ("x-ms-blob-content-md5", base64.b64encode(b"0000").decode())]:
            r = self.blob.request("PUT", f"{A}/bad/md5", body=b"payload",
                                  headers={"x-ms-blob-type": "BlockBlob", header: value})
            self.expect(r, 400, "InvalidMd5")
        r = self.blob.request("PUT", f"{A}/bad/md5", [("comp", "block"), ("blockid", "YQ==")], body=b"payload",
                              headers={"Content-MD5": base64.b64encode(b"0000").decode()})
        self.expect(r, 400, "InvalidMd5")
        # x-ms-blob-content-md5 is what the body is checked against when both are sent.
        right = base64.b64encode(hashlib.md5(b"payload").digest()).decode()
        r = self.blob.request("PUT", f"{A}/bad/md5", body=b"payload",
                              headers={"x-ms-blob-type": "BlockBlob", "Content-MD5": wrong, "x-ms-blob-content-md5": right})
        self.assertEqual(r.status, 201, r.body)
        r = self.blob.request("PUT", f"{A}/bad/md5", body=b"payload",
                              headers={"x-ms-blob-type": "BlockBlob", "Content-MD5": right, "x-ms-blob-content-md5": wrong})
        self.expect(r, 400, "Md5Mismatch")

    def test_wrong_keys_and_malformed_authorization(self):
        wrong = RawClient(self.endpoints["blob"], key=base64.b64encode(b"k" * 64).decode())
        r = wrong.request("PUT", f"{A}/bad/wk", body=b"x", headers={"x-ms-blob-type": "BlockBlob"})
        self.expect(r, 403, "AuthenticationFailed")
        self.assertIn("string to sign", r.message)
        for auth in ("SharedKey nocolon", "SharedKey other:abc", "Bearer abc", "SharedKey "):
            r = self.blob.request("PUT", f"{A}/bad/wk", body=b"x",
                                  headers={"x-ms-blob-type": "BlockBlob", "Authorization": auth})
            self.expect(r, 403, "AuthenticationFailed")
        r = self.blob.request("PUT", f"{A}/bad/wk", body=b"x", sign=False, headers={"x-ms-blob-type": "BlockBlob"})
        self.expect(r, 401, "NoAuthenticationInformation")
        self.missing("wk")

    def test_tampered_and_incomplete_sas(self):
        for query in ("sv=2021-06-08&ss=b&srt=sco&sp=rwdlac&se=2099-01-01T00:00:00Z&sig=AAAA",
                      "sig=abc", "sv=2021-06-08&sr=b&sp=r&se=2099-01-01&sig=%ZZ"):
            r = self.blob.request("GET", f"{A}/bad/kept", sign=False, raw_query=query)
            self.assertIn(r.status, (400, 403), query)
            self.assertIn(r.code, ("AuthenticationFailed", "InvalidUri"), query)

    def test_names_over_the_limits(self):
        r = self.blob.request("PUT", f"{A}/{'c' * 64}", [("restype", "container")])
        self.expect(r, 400, "InvalidResourceName")
        for name in ("UPPER", "a--b", "-ab", "ab"):
            self.expect(self.blob.request("PUT", f"{A}/{name}", [("restype", "container")]), 400,
                        "InvalidResourceName")
        r = self.blob.request("PUT", f"{A}/bad/{'n' * 1025}", body=b"x", headers={"x-ms-blob-type": "BlockBlob"})
        self.expect(r, 400, "InvalidResourceName")

    def test_paths_that_try_to_escape(self):
        for raw in ("%00evil", "a%00b", "%ff%fe", "bad%zz"):
            r = self.blob.request("PUT", f"{A}/bad/{raw}", body=b"x", headers={"x-ms-blob-type": "BlockBlob"})
            self.expect(r, 400, "InvalidUri")
        # Dots are legal in blob names and never reach the filesystem.
        for raw in ("..%2F..%2F..%2Fescape", "%2e%2e/%2e%2e/escape2"):
            r = self.blob.request("PUT", f"{A}/bad/{raw}", body=b"inside", headers={"x-ms-blob-type": "BlockBlob"})
            self.assertEqual(r.status, 201)
            self.assertEqual(self.blob.request("GET", f"{A}/bad/{raw}").body, b"inside")
        location = os.path.dirname(self.emu.endpoints["ca_cert"].rstrip("/"))
        for escaped in ("escape", "escape2"):
            for base in (location, os.path.dirname(location), "/"):
                self.assertFalse(os.path.exists(os.path.join(base, escaped)))

    def test_ranges_past_the_end_and_malformed(self):
        r = self.blob.request("GET", f"{A}/bad/kept", headers={"x-ms-range": "bytes=100-200"})
        self.expect(r, 416, "InvalidRange")
        self.assertEqual(r.headers.get("content-range"), "bytes */10")
        for value in ("bytes=abc", "bytes=5-1", "items=0-1", "bytes=-5"):
            self.expect(self.blob.request("GET", f"{A}/bad/kept", headers={"x-ms-range": value}),
                        400, "InvalidHeaderValue")
        r = self.blob.request("GET", f"{A}/bad/kept", headers={"Range": "bytes=2-4"})
        self.assertEqual((r.status, r.body), (206, b"234"))
        # A malformed standard Range is ignored: the whole blob, no Content-Range.
        r = self.blob.request("GET", f"{A}/bad/kept", headers={"Range": "bytes=0--1"})
        self.assertEqual((r.status, len(r.body), r.headers.get("content-range")), (200, 10, None))

    def test_bad_query_values(self):
        for value in ("0", "abc", "-1"):
            r = self.blob.request("GET", f"{A}/bad", [("restype", "container"), ("comp", "list"), ("maxresults", value)])
            self.expect(r, 400, "InvalidQueryParameterValue")
        r = self.blob.request("PUT", f"{A}/bad/blk", [("comp", "block"), ("blockid", "***")], body=b"x")
        self.expect(r, 400, "InvalidQueryParameterValue")
        r = self.blob.request("PUT", f"{A}/bad/blk", [("comp", "block")], body=b"x")
        self.expect(r, 400, "MissingRequiredQueryParameter")
        r = self.blob.request("POST", f"{A}/bad/kept", [("comp", "frobnicate")])
        self.expect(r, 400, "UnsupportedHttpVerb")

    def test_unknown_account(self):
        r = RawClient(self.endpoints["blob"], account="nosuchacct").request("GET", "/nosuchacct/x", [("restype", "container")])
        self.expect(r, 404, "ResourceNotFound")

    def test_garbage_on_the_socket(self):
        port = int(self.endpoints["blob"].rsplit(":", 1)[1])
        for payload, status in ((b"\x00\xff\x13garbage\r\n\r\n", b"400"),
                                (b"GET " + b"A" * 100000 + b" HTTP/1.1\r\n\r\n", b"431"),
                                (b"PUT /devstoreaccount1/bad/x HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
                                 b"400"),
                                # Refused by authentication before its (malformed) body is read.
                                (b"PUT /devstoreaccount1/bad/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                                 b"401"),
                                (self.signed_head("PUT", f"{A}/bad/x", {"Transfer-Encoding": "chunked",
                                                                        "x-ms-blob-type": "BlockBlob"}) + b"zz\r\n",
                                 b"400")):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(payload)
                answer = s.recv(4096)
                self.assertTrue(answer.startswith(b"HTTP/1.1 " + status), (payload[:60], answer[:100]))
        self.missing("x")

    def signed_head(self, method, path, headers):
        headers = {"x-ms-version": "2021-06-08", "x-ms-date": self.blob.request("GET", f"{A}/bad/kept").headers["date"],
                   **headers}
        headers["Authorization"] = self.blob.sign(method, path, [], headers)
        return (f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode()

    def test_a_body_cut_short_stores_nothing(self):
        """A client that goes away in the middle of its upload leaves the blob as it was."""
        port = int(self.endpoints["blob"].rsplit(":", 1)[1])
        for name in ("kept", "cut"):
            path = f"{A}/bad/{name}"
            headers = {"x-ms-version": "2021-06-08", "x-ms-blob-type": "BlockBlob", "Content-Length": "100000",
                       "x-ms-date": self.blob.request("GET", f"{A}/bad/kept").headers["date"]}
            headers["Authorization"] = self.blob.sign("PUT", path, [], headers)
            head = f"PUT {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(head.encode() + b"z" * 5000)
                s.shutdown(socket.SHUT_WR)
                try:
                    s.recv(4096)
                except OSError:
                    pass
        self.missing("cut")


class FileBadInput(StorageTestCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.file = RawClient(cls.endpoints["file"])
        assert cls.file.request("PUT", f"{A}/share", [("restype", "share")]).status == 201
        create = {"x-ms-type": "file", "x-ms-content-length": "10"}
        assert cls.file.request("PUT", f"{A}/share/ten", headers=create).status == 201

    def expect(self, response, status, code):
        self.assertEqual((response.status, response.code), (status, code), response.body[:500])

    def test_paths_that_try_to_escape_the_share(self):
        for raw in ("..%2F..%2Fescape", "%2e%2e%2Fescape", "a%2F..%2F..%2Fescape", "..", "dir%5Cfile",
                    "a%3Ab", "x%7Cy"):
            r = self.file.request("PUT", f"{A}/share/{raw}", headers={"x-ms-type": "file", "x-ms-content-length": "1"})
            self.expect(r, 400, "InvalidResourceName")
        r = self.file.request("PUT", f"{A}/share/a%00b", headers={"x-ms-type": "file", "x-ms-content-length": "1"})
        self.expect(r, 400, "InvalidUri")
        # An absolute-looking path stays inside the share: its parent does not exist there.
        r = self.file.request("PUT", f"{A}/share//etc/passwd", headers={"x-ms-type": "file", "x-ms-content-length": "1"})
        self.expect(r, 404, "ParentNotFound")
        location = os.path.dirname(self.emu.endpoints["ca_cert"])
        location = os.path.dirname(location)
        self.assertFalse(os.path.exists(os.path.join(location, "escape")))
        self.assertFalse(os.path.exists(os.path.join(location, "storage", "escape")))

    def test_names_over_the_limits(self):
        r = self.file.request("PUT", f"{A}/share/{'n' * 256}", headers={"x-ms-type": "file", "x-ms-content-length": "1"})
        self.expect(r, 400, "InvalidResourceName")
        self.expect(self.file.request("PUT", f"{A}/SHARE", [("restype", "share")]), 400, "InvalidResourceName")

    def test_ranges(self):
        put = {"x-ms-write": "update", "x-ms-range": "bytes=8-11"}
        self.expect(self.file.request("PUT", f"{A}/share/ten", [("comp", "range")], body=b"abcd", headers=put),
                    416, "InvalidRange")
        big = {"x-ms-write": "update", "x-ms-range": f"bytes=0-{4 * 1024 * 1024}"}
        r = self.file.request("PUT", f"{A}/share/ten", [("comp", "range")], body=b"x" * (4 * 1024 * 1024 + 1), headers=big)
        self.assertIn(r.status, (413, 416))
        mismatch = {"x-ms-write": "update", "x-ms-range": "bytes=0-3"}
        self.expect(self.file.request("PUT", f"{A}/share/ten", [("comp", "range")], body=b"ab", headers=mismatch),
                    400, "InvalidHeaderValue")
        self.expect(self.file.request("PUT", f"{A}/share/ten", [("comp", "range")], body=b"abcd",
                                      headers={"x-ms-range": "bytes=0-3"}), 400, "MissingRequiredHeader")
        self.expect(self.file.request("GET", f"{A}/share/ten", headers={"x-ms-range": "bytes=10-20"}), 416, "InvalidRange")
        r = self.file.request("GET", f"{A}/share/ten")
        self.assertEqual(r.body, b"\0" * 10, "a refused range write changed the file")

    def test_missing_headers(self):
        self.expect(self.file.request("PUT", f"{A}/share/nolen", headers={"x-ms-type": "file"}), 400, "MissingRequiredHeader")
        self.expect(self.file.request("PUT", f"{A}/share/notype", headers={"x-ms-content-length": "1"}), 400,
                    "MissingRequiredHeader")
        self.expect(self.file.request("PUT", f"{A}/share/badlen",
                                      headers={"x-ms-type": "file", "x-ms-content-length": "12x"}), 400,
                    "InvalidHeaderValue")
        self.expect(self.file.request("PUT", f"{A}/share/attr", headers={"x-ms-type": "file", "x-ms-content-length": "1",
                                                                          "x-ms-file-attributes": "Bogus"}),
                    400, "InvalidHeaderValue")
        self.expect(self.file.request("PUT", f"{A}/quota", [("restype", "share")], headers={"x-ms-share-quota": "0"}),
                    400, "InvalidHeaderValue")


if __name__ == "__main__":
    unittest.main()
