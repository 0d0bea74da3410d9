"""The SAS permission matrix: every Blob and File operation the emulator serves, against every
subset of the permission letters, through an account SAS, a container or share SAS and a blob or
file SAS (the SDK's own generate_*_sas functions sign them). Each answer is compared with what
"Create an account SAS" and "Create a service SAS" say (the tables below are this test's own
reading of those pages, not the emulator's), and a refused request must leave everything as it
was: the account's containers or shares, their metadata and ACLs, every blob or file with its
metadata, etag and staged blocks.

The same tables are in fake_storage/README.md ("Shared access signatures")."""
import datetime
import http.client
import itertools
import re
import unittest
import urllib.parse

from azure.storage.blob import generate_account_sas as blob_account_sas
from azure.storage.blob import generate_blob_sas, generate_container_sas
from azure.storage.fileshare import generate_account_sas as file_account_sas
from azure.storage.fileshare import generate_file_sas, generate_share_sas

import harness
from raw_storage import RawClient, Response

EXPIRY = datetime.datetime(2099, 1, 1)
ACCOUNT = harness.DEV_ACCOUNT

# (name, level, account SAS letters, service SAS letters, service SAS scope, create-new-only, target exists,
#  method, path below the account, query, headers, body, status on success)
# Letters: any one grants the operation; "" : no SAS of that kind may (403 AuthorizationFailure).
# Scope: "none" (a service SAS never grants it), "container" (a container or share SAS only), "any".
BLOB_LETTERS = "racwdl"
BLOB_OPS = [
    ("ListContainers", "s", "l", "", "none", False, True, "GET", "", {"comp": "list"}, {}, b"", 200),
    ("GetAccountInformation", "*", "racwdl", "", "none", False, True,
     "GET", "", {"restype": "account", "comp": "properties"}, {}, b"", 200),
    ("CreateContainer", "c", "cw", "", "none", False, False, "PUT", "/fresh", {"restype": "container"}, {}, b"", 201),
    ("GetContainerProperties", "c", "r", "", "none", False, True, "GET", "/mat", {"restype": "container"}, {}, b"", 200),
    ("GetContainerMetadata", "c", "r", "", "none", False, True,
     "GET", "/mat", {"restype": "container", "comp": "metadata"}, {}, b"", 200),
    ("SetContainerMetadata", "c", "w", "", "none", False, True,
     "PUT", "/mat", {"restype": "container", "comp": "metadata"}, {"x-ms-meta-changed": "yes"}, b"", 200),
    ("GetContainerACL", "c", "", "", "none", False, True, "GET", "/mat", {"restype": "container", "comp": "acl"}, {}, b"", 200),
    ("SetContainerACL", "c", "", "", "none", False, True,
     "PUT", "/mat", {"restype": "container", "comp": "acl"}, {"x-ms-blob-public-access": "container"}, b"", 200),
    ("DeleteContainer", "c", "d", "", "none", False, True, "DELETE", "/mat", {"restype": "container"}, {}, b"", 202),
    # Restore Container makes the container again: c or w, as Create Container (the service's page
    # names an account SAS and no letter). "gone": a container deleted with soft delete on, made for
    # each try (BlobSasMatrixTest.call).
    ("RestoreContainer", "c", "cw", "", "none", False, True,
     "PUT", "/gone", {"restype": "container", "comp": "undelete"}, {}, b"", 201),
    ("ListBlobs", "c", "l", "l", "container", False, True,
     "GET", "/mat", {"restype": "container", "comp": "list"}, {}, b"", 200),
    ("PutBlob (new)", "o", "cw", "cw", "any", True, False,
     "PUT", "/mat/fresh", {}, {"x-ms-blob-type": "BlockBlob"}, b"new", 201),
    ("PutBlob (existing)", "o", "cw", "cw", "any", True, True,
     "PUT", "/mat/b", {}, {"x-ms-blob-type": "BlockBlob"}, b"replaced", 201),
    ("CopyBlob (new)", "o", "cw", "cw", "any", True, False, "PUT", "/mat/fresh", {}, {"x-ms-copy-source": "SOURCE"}, b"", 202),
    ("CopyBlob (existing)", "o", "cw", "cw", "any", True, True, "PUT", "/mat/b2", {}, {"x-ms-copy-source": "SOURCE"}, b"", 202),
    ("PutBlobFromURL (new)", "o", "cw", "cw", "any", True, False,
     "PUT", "/mat/fresh", {}, {"x-ms-copy-source": "SOURCE", "x-ms-blob-type": "BlockBlob"}, b"", 201),
    ("PutBlobFromURL (existing)", "o", "cw", "cw", "any", True, True,
     "PUT", "/mat/b2", {}, {"x-ms-copy-source": "SOURCE", "x-ms-blob-type": "BlockBlob"}, b"", 201),
    ("CopyBlobFromURL (new)", "o", "cw", "cw", "any", True, False,
     "PUT", "/mat/fresh", {}, {"x-ms-copy-source": "SOURCE", "x-ms-requires-sync": "true"}, b"", 202),
    ("PutBlock", "o", "w", "w", "any", False, True,
     "PUT", "/mat/b", {"comp": "block", "blockid": "YmxvY2sx"}, {}, b"block", 201),
    ("PutBlockFromURL", "o", "w", "w", "any", False, True,
     "PUT", "/mat/b", {"comp": "block", "blockid": "YmxvY2sx"}, {"x-ms-copy-source": "SOURCE"}, b"", 201),
    ("PutBlockList", "o", "w", "w", "any", False, True, "PUT", "/mat/b", {"comp": "blocklist"}, {},
     b'<?xml version="1.0" encoding="utf-8"?><BlockList></BlockList>', 201),
    ("GetBlockList", "o", "r", "r", "any", False, True, "GET", "/mat/b", {"comp": "blocklist", "blocklisttype": "all"}, {}, b"", 200),
    ("GetBlob", "o", "r", "r", "any", False, True, "GET", "/mat/b", {}, {}, b"", 200),
    ("GetBlobProperties", "o", "r", "r", "any", False, True, "HEAD", "/mat/b", {}, {}, b"", 200),
    ("SetBlobProperties", "o", "w", "w", "any", False, True,
     "PUT", "/mat/b", {"comp": "properties"}, {"x-ms-blob-content-type": "text/changed"}, b"", 200),
    ("SetBlobMetadata", "o", "w", "w", "any", False, True,
     "PUT", "/mat/b", {"comp": "metadata"}, {"x-ms-meta-changed": "yes"}, b"", 200),
    ("GetBlobMetadata", "o", "r", "r", "any", False, True, "GET", "/mat/b", {"comp": "metadata"}, {}, b"", 200),
    ("DeleteBlob", "o", "d", "d", "any", False, True, "DELETE", "/mat/b", {}, {}, b"", 202),
    # Undelete Blob: 'w' (the service's tables name no letter; Azurite's choice); a live blob
    # with nothing deleted answers 200 too.
    ("UndeleteBlob", "o", "w", "w", "any", False, True, "PUT", "/mat/b", {"comp": "undelete"}, {}, b"", 200),
    # Get Account Information on a blob's URL: any letter, and the blob's own SAS too.
    ("GetAccountInformation (blob)", "*", "racwdl", "racwdl", "any", False, True,
     "GET", "/mat/b", {"restype": "account", "comp": "properties"}, {}, b"", 200),
]

FILE_LETTERS = "rcwdl"
SMB = {"x-ms-file-permission": "inherit", "x-ms-file-attributes": "None", "x-ms-file-creation-time": "now",
       "x-ms-file-last-write-time": "now"}
FILE_OPS = [
    ("ListShares", "s", "l", "", "none", False, True, "GET", "", {"comp": "list"}, {}, b"", 200),
    ("GetFileServiceProperties", "s", "r", "", "none", False, True,
     "GET", "", {"restype": "service", "comp": "properties"}, {}, b"", 200),
    ("SetFileServiceProperties", "s", "w", "", "none", False, True,
     "PUT", "", {"restype": "service", "comp": "properties"}, {},
     b'<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors /></StorageServiceProperties>', 202),
    ("CreateShare", "c", "cw", "", "none", False, False, "PUT", "/fresh", {"restype": "share"}, {}, b"", 201),
    ("GetShareProperties", "c", "r", "", "none", False, True, "GET", "/sha", {"restype": "share"}, {}, b"", 200),
    ("GetShareMetadata", "c", "r", "", "none", False, True, "GET", "/sha", {"restype": "share", "comp": "metadata"}, {}, b"", 200),
    ("SetShareMetadata", "c", "w", "", "none", False, True,
     "PUT", "/sha", {"restype": "share", "comp": "metadata"}, {"x-ms-meta-changed": "yes"}, b"", 200),
    ("SetShareProperties", "c", "w", "", "none", False, True,
     "PUT", "/sha", {"restype": "share", "comp": "properties"}, {"x-ms-share-quota": "7"}, b"", 200),
    ("GetShareStats", "c", "r", "", "none", False, True, "GET", "/sha", {"restype": "share", "comp": "stats"}, {}, b"", 200),
    ("DeleteShare", "c", "d", "", "none", False, True,
     "DELETE", "/sha", {"restype": "share"}, {"x-ms-delete-snapshots": "include"}, b"", 202),
    ("ListDirectoriesAndFiles", "c", "l", "l", "container", False, True,
     "GET", "/sha", {"restype": "directory", "comp": "list"}, {}, b"", 200),
    ("CreateDirectory", "o", "cw", "cw", "container", False, False, "PUT", "/sha/fresh", {"restype": "directory"}, SMB, b"", 201),
    ("GetDirectoryProperties", "o", "r", "r", "container", False, True, "GET", "/sha/d", {"restype": "directory"}, {}, b"", 200),
    ("SetDirectoryMetadata", "o", "w", "w", "container", False, True,
     "PUT", "/sha/d", {"restype": "directory", "comp": "metadata"}, {"x-ms-meta-changed": "yes"}, b"", 200),
    ("SetDirectoryProperties", "o", "w", "w", "container", False, True,
     "PUT", "/sha/d", {"restype": "directory", "comp": "properties"}, SMB, b"", 200),
    ("DeleteDirectory", "o", "d", "d", "container", False, True, "DELETE", "/sha/d2", {"restype": "directory"}, {}, b"", 202),
    ("CreateFile (new)", "o", "cw", "cw", "any", True, False,
     "PUT", "/sha/fresh", {}, {"x-ms-type": "file", "x-ms-content-length": "3", **SMB}, b"", 201),
    ("CreateFile (existing)", "o", "cw", "cw", "any", True, True,
     "PUT", "/sha/f", {}, {"x-ms-type": "file", "x-ms-content-length": "3", **SMB}, b"", 201),
    ("PutRange", "o", "w", "w", "any", False, True,
     "PUT", "/sha/f", {"comp": "range"}, {"x-ms-range": "bytes=0-3", "x-ms-write": "update"}, b"XXXX", 201),
    ("GetFile", "o", "r", "r", "any", False, True, "GET", "/sha/f", {}, {}, b"", 200),
    ("GetFileProperties", "o", "r", "r", "any", False, True, "HEAD", "/sha/f", {}, {}, b"", 200),
    ("ListRanges", "o", "r", "r", "any", False, True, "GET", "/sha/f", {"comp": "rangelist"}, {}, b"", 200),
    ("SetFileProperties", "o", "w", "w", "any", False, True,
     "PUT", "/sha/f", {"comp": "properties"}, {"x-ms-content-type": "text/changed", **SMB}, b"", 200),
    ("SetFileMetadata", "o", "w", "w", "any", False, True,
     "PUT", "/sha/f", {"comp": "metadata"}, {"x-ms-meta-changed": "yes"}, b"", 200),
    ("GetFileMetadata", "o", "r", "r", "any", False, True, "GET", "/sha/f", {"comp": "metadata"}, {}, b"", 200),
    ("DeleteFile", "o", "d", "d", "any", False, True, "DELETE", "/sha/f", {}, {}, b"", 202),
    # Copy File: the destination's letters, as Create File (the source is read with its own SAS).
    ("CopyFile (new)", "o", "cw", "cw", "any", True, False, "PUT", "/sha/fresh", {}, {"x-ms-copy-source": "SOURCE"}, b"", 202),
    ("CopyFile (existing)", "o", "cw", "cw", "any", True, True, "PUT", "/sha/f", {}, {"x-ms-copy-source": "SOURCE"}, b"", 202),
    # From a blob: the same letters (BLOBSOURCE: a blob read with its own SAS).
    ("CopyFile from a blob (new)", "o", "cw", "cw", "any", True, False,
     "PUT", "/sha/fresh", {}, {"x-ms-copy-source": "BLOBSOURCE"}, b"", 202),
    ("CopyFile from a blob (existing)", "o", "cw", "cw", "any", True, True,
     "PUT", "/sha/f", {}, {"x-ms-copy-source": "BLOBSOURCE"}, b"", 202),
    # Put Range From URL: a write of the destination (w); the source is read with its own SAS.
    ("PutRangeFromURL", "o", "w", "w", "any", False, True, "PUT", "/sha/f", {"comp": "range"},
     {"x-ms-copy-source": "SOURCE", "x-ms-range": "bytes=0-3", "x-ms-source-range": "bytes=0-3", "x-ms-write": "update"},
     b"", 201),
    # Lease File: a write of the file (w), as Lease Blob; the documentation names no letter.
    ("LeaseFile", "o", "w", "w", "any", False, True,
     "PUT", "/sha/f", {"comp": "lease"}, {"x-ms-lease-action": "acquire", "x-ms-lease-duration": "-1"}, b"", 201),
    # Share snapshots ("SNAP": the snapshot of /sha that reset() takes). Taking one is a write of
    # the share (an account SAS only, as for the share's other operations); a snapshot is read with
    # the letters that read the share, and a share or file SAS of the share reaches its snapshots.
    ("SnapshotShare", "c", "cw", "", "none", False, True, "PUT", "/sha", {"restype": "share", "comp": "snapshot"}, {}, b"", 201),
    ("GetShareProperties (snapshot)", "c", "r", "", "none", False, True,
     "GET", "/sha", {"restype": "share", "sharesnapshot": "SNAP"}, {}, b"", 200),
    ("DeleteShare (snapshot)", "c", "d", "", "none", False, True,
     "DELETE", "/sha", {"restype": "share", "sharesnapshot": "SNAP"}, {}, b"", 202),
    ("ListDirectoriesAndFiles (snapshot)", "c", "l", "l", "container", False, True,
     "GET", "/sha", {"restype": "directory", "comp": "list", "sharesnapshot": "SNAP"}, {}, b"", 200),
    ("GetDirectoryProperties (snapshot)", "o", "r", "r", "container", False, True,
     "GET", "/sha/d", {"restype": "directory", "sharesnapshot": "SNAP"}, {}, b"", 200),
    ("GetFile (snapshot)", "o", "r", "r", "any", False, True, "GET", "/sha/f", {"sharesnapshot": "SNAP"}, {}, b"", 200),
    ("GetFileProperties (snapshot)", "o", "r", "r", "any", False, True, "HEAD", "/sha/f", {"sharesnapshot": "SNAP"}, {}, b"", 200),
    ("ListRanges (snapshot)", "o", "r", "r", "any", False, True,
     "GET", "/sha/f", {"comp": "rangelist", "sharesnapshot": "SNAP"}, {}, b"", 200),
    # A share's stored access policies: the account owner's only, as a container's.
    ("GetShareACL", "c", "", "", "none", False, True, "GET", "/sha", {"restype": "share", "comp": "acl"}, {}, b"", 200),
    ("SetShareACL", "c", "", "", "none", False, True, "PUT", "/sha", {"restype": "share", "comp": "acl"}, {}, b"", 200),
    # A share's permissions, as its other properties: an account SAS only; creating one takes c or
    # w, reading one r (choices: the documentation names no letters).
    ("CreatePermission", "c", "cw", "", "none", False, True, "PUT", "/sha", {"restype": "share", "comp": "filepermission"},
     {"Content-Type": "application/json"}, b'{"permission": "O:SYG:SYD:(A;;FA;;;SY)"}', 201),
    ("GetPermission", "c", "r", "", "none", False, True, "GET", "/sha", {"restype": "share", "comp": "filepermission"},
     {"x-ms-file-permission-key": "5724850820508509333*16704459309046467611"}, b"", 200),
    # Handles (none is ever open here): listing them takes l, closing them w; a share SAS (choices).
    ("ListHandles (share)", "c", "l", "l", "container", False, True, "GET", "/sha", {"comp": "listhandles"}, {}, b"", 200),
    ("ListHandles (file)", "o", "l", "l", "container", False, True, "GET", "/sha/f", {"comp": "listhandles"}, {}, b"", 200),
    ("ForceCloseHandles (directory)", "o", "w", "w", "container", False, True,
     "PUT", "/sha/d", {"comp": "forceclosehandles"}, {"x-ms-handle-id": "*"}, b"", 200),
    # A share's tier is set as its other properties (w, an account SAS only).
    ("SetShareProperties (tier)", "c", "w", "", "none", False, True,
     "PUT", "/sha", {"restype": "share", "comp": "properties"}, {"x-ms-access-tier": "Cool"}, b"", 200),
]


def subsets(letters):
    """Every subset of `letters`, each in the documented order."""
    for size in range(len(letters) + 1):
        for combination in itertools.combinations(letters, size):
            yield "".join(combination)


def expected(op, kind, permissions, overwrite_code):
    """What the documentation says the service answers: (status, error code or None)."""
    _, level, account_letters, service_letters, scope, create_new_only, exists = op[:7]
    if not permissions:
        return 403, "AuthenticationFailed"  # sp is a required field of every SAS
    if kind == "account":
        if not account_letters:
            return 403, "AuthorizationFailure"
        granted = set(permissions) & set(account_letters)
    else:
        if scope == "none" or not service_letters:
            return 403, "AuthorizationFailure"
        if kind == "object" and scope != "any":
            return 403, "AuthorizationResourceTypeMismatch"
        granted = set(permissions) & set(service_letters)
    if not granted:
        return 403, "AuthorizationPermissionMismatch"
    if create_new_only and exists and granted == {"c"}:
        return 403, overwrite_code
    return op[12], None


class KeepAlive(RawClient):
    """RawClient over one keep-alive connection (the matrix sends tens of thousands of requests)."""

    def __init__(self, endpoint):
        super().__init__(endpoint)
        self.connection = None

    def send(self, method, path, query=(), headers=None, body=b"", sas=None):
        headers = dict(headers or {})
        headers.setdefault("x-ms-version", self.version)
        headers["x-ms-date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
        headers["Content-Length"] = str(len(body))
        raw_path = "/" + ACCOUNT + path
        query = list(query.items()) if isinstance(query, dict) else list(query)
        target = raw_path + ("?" + urllib.parse.urlencode(query) if query else "")
        if sas is not None:
            target += ("&" if query else "?") + sas
        else:
            headers["Authorization"] = self.sign(method, raw_path, query, headers)
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                self.connection.putrequest(method, target, skip_accept_encoding=True)
                for k, v in headers.items():
                    self.connection.putheader(k, v)
                self.connection.endheaders()
                if body:
                    self.connection.send(body)
                response = self.connection.getresponse()
                return Response(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.connection.close()
                self.connection = None
                if attempt == 1:
                    raise

    def ok(self, method, path, query=(), headers=None, body=b"", expect=(200, 201, 202)):
        r = self.send(method, path, query, headers, body)
        assert r.status in expect, (method, path, query, r.status, r.body)
        return r


class MatrixCase:
    """One service's matrix: its fixture, its snapshot, the SAS of each kind."""
    share_snapshot = None
    letters = ""
    ops = []
    overwrite_code = ""

    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator().start()
        cls.client = KeepAlive(cls.emu.endpoints[cls.service])
        cls.key = harness.DEV_KEY

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert code == 0, f"emulator exited with {code}"

    def run_matrix(self):
        self.reset()
        failures = []
        checked = 0
        for op in self.ops:
            kinds = ["account"]
            if op[1] != "s" and op[1] != "*":
                kinds.append("container")
            if op[1] == "o":
                kinds.append("object")
            for kind in kinds:
                for permissions in subsets(self.letters):
                    want_status, want_code = expected(op, kind, permissions, self.overwrite_code)
                    before = self.snapshot() if want_code else None
                    r = self.call(op, self.sas(op, kind, permissions))
                    checked += 1
                    got = (r.status, r.code if r.status >= 400 else None)
                    if got != (want_status, want_code):
                        failures.append(f"{op[0]} {kind} sp={permissions!r}: {got} != {(want_status, want_code)} {r.message}")
                    if want_code:
                        after = self.snapshot()
                        if after != before:
                            failures.append(f"{op[0]} {kind} sp={permissions!r} was refused but changed the account")
                    if r.status < 400 and op[7] != "GET" and op[7] != "HEAD":
                        self.reset()
            # The signed resource type and the signed service of an account SAS.
            if op[2] and op[1] in "sco":
                wrong_level = "".join(x for x in "sco" if x != op[1])
                r = self.call(op, self.account_sas(self.letters, wrong_level))
                if (r.status, r.code) != (403, "AuthorizationResourceTypeMismatch"):
                    failures.append(f"{op[0]} srt={wrong_level}: {(r.status, r.code)}")
                r = self.call(op, self.other_service_sas(self.letters))
                if (r.status, r.code) != (403, "AuthorizationServiceMismatch"):
                    failures.append(f"{op[0]} other service: {(r.status, r.code)}")
        self.assertEqual(failures, [], f"{len(failures)} of {checked} answers differ:\n" + "\n".join(failures[:60]))
        # Every operation x kind x subset was tried.
        self.assertGreater(checked, len(self.ops) * 2 ** len(self.letters))

    def call(self, op, sas):
        _, _, _, _, _, _, _, method, path, query, headers, body, _ = op
        sources = {"SOURCE": "copy_source", "BLOBSOURCE": "blob_copy_source"}  # (the File matrix's alone has the second)
        headers = {k: (getattr(self, sources[v])() if v in sources else v) for k, v in headers.items()}
        query = {k: (self.share_snapshot if v == "SNAP" else v) for k, v in query.items()}
        return self.client.send(method, path, query, headers, body, sas=sas)


class BlobSasMatrixTest(MatrixCase, unittest.TestCase):
    service = "blob"
    letters = BLOB_LETTERS
    ops = BLOB_OPS
    overwrite_code = "UnauthorizedBlobOverwrite"
    gone = None  # (name, version) of the deleted container Restore Container is tried on
    deleted_made = 0

    def call(self, op, sas):
        if op[0] != "RestoreContainer":
            return super().call(op, sas)
        name, version = self.deleted_to_restore()
        r = self.client.send("PUT", "/" + name, op[9],
                             {"x-ms-deleted-container-name": name, "x-ms-deleted-container-version": version}, sas=sas)
        if r.status == 201:
            self.gone = None
        return r

    def deleted_to_restore(self):
        if self.gone is None:
            self.gone = self.deleted_container()
        return self.gone

    def deleted_container(self):
        """A container deleted while container soft delete was on (ARM's blobServices/default;
        off again after, so that the other operations' deletes are for good): (name, version)."""
        type(self).deleted_made += 1
        name = f"gone{self.deleted_made}"
        group = f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/sasmatrix"
        service = f"{group}/providers/Microsoft.Storage/storageAccounts/{ACCOUNT}/blobServices/default"
        harness.arm_call(self.emu.endpoints, "PUT", group, {"location": "eastus"}, api_version="2021-04-01")
        for enabled in (True, False):
            r = harness.arm_call(self.emu.endpoints, "PATCH", service,
                                 {"properties": {"containerDeleteRetentionPolicy": {"enabled": enabled}}},
                                 api_version="2021-04-01")
            assert r.status_code == 200, r.text
            if enabled:
                self.client.ok("PUT", "/" + name, {"restype": "container"})
                self.client.ok("DELETE", "/" + name, {"restype": "container"})
        listing = self.client.ok("GET", "", {"comp": "list", "include": "deleted", "prefix": name}).body.decode()
        return name, re.search(r"<Version>([^<]+)</Version>", listing).group(1)

    def reset(self):
        c = self.client
        listing = c.ok("GET", "", {"comp": "list"}).body.decode()
        for name in ("mat", "fresh"):
            if f"<Name>{name}</Name>" in listing:
                c.ok("DELETE", "/" + name, {"restype": "container"})
        c.ok("PUT", "/mat", {"restype": "container"}, {"x-ms-meta-kept": "1"})
        c.ok("PUT", "/mat/b", {}, {"x-ms-blob-type": "BlockBlob", "x-ms-meta-kept": "1"}, b"original")
        c.ok("PUT", "/mat/b2", {}, {"x-ms-blob-type": "BlockBlob"}, b"second")

    def snapshot(self):
        c = self.client
        state = [c.ok("GET", "", {"comp": "list", "include": "metadata"}).body]
        for name in ("mat", "fresh"):
            r = c.send("GET", "/" + name, {"restype": "container", "comp": "acl"})
            state.append((r.status, r.headers.get("x-ms-blob-public-access"), r.headers.get("etag")))
            if r.status == 200:
                state.append(c.ok("GET", "/" + name, {"restype": "container", "comp": "list", "include": "metadata"}).body)
        state.append(c.send("GET", "/mat/b", {"comp": "blocklist", "blocklisttype": "all"}).body)
        return state

    def sas(self, op, kind, permissions):
        path = op[8].split("/")
        container = path[1] if len(path) > 1 else "mat"
        if op[0] == "RestoreContainer":
            container = self.deleted_to_restore()[0]
        if kind == "account":
            return self.account_sas(permissions, "sco")
        if kind == "container":
            return generate_container_sas(ACCOUNT, container, account_key=self.key, permission=permissions, expiry=EXPIRY)
        return generate_blob_sas(ACCOUNT, container, path[2], account_key=self.key, permission=permissions, expiry=EXPIRY)

    def account_sas(self, permissions, resource_types):
        return blob_account_sas(ACCOUNT, self.key, resource_types, permissions, EXPIRY)

    def other_service_sas(self, permissions):
        return file_account_sas(ACCOUNT, self.key, "sco", permissions, EXPIRY)

    def copy_source(self):
        # The source is readable on its own (a SAS of its own): only the destination's SAS varies.
        sas = generate_blob_sas(ACCOUNT, "mat", "b", account_key=self.key, permission="r", expiry=EXPIRY)
        return f"{self.emu.endpoints['blob']}/{ACCOUNT}/mat/b?{sas}"

    def test_every_operation_against_every_permission_subset(self):
        self.run_matrix()


class FileSasMatrixTest(MatrixCase, unittest.TestCase):
    service = "file"
    letters = FILE_LETTERS
    ops = FILE_OPS
    overwrite_code = "AuthorizationPermissionMismatch"

    def reset(self):
        c = self.client
        listing = c.ok("GET", "", {"comp": "list"}).body.decode()
        for name in ("sha", "fresh"):
            if f"<Name>{name}</Name>" in listing:
                c.ok("DELETE", "/" + name, {"restype": "share"}, {"x-ms-delete-snapshots": "include"})
        c.ok("PUT", "/sha", {"restype": "share"}, {"x-ms-meta-kept": "1", "x-ms-share-quota": "5"})
        c.ok("PUT", "/sha/d", {"restype": "directory"}, {"x-ms-meta-kept": "1", **SMB})
        c.ok("PUT", "/sha/d2", {"restype": "directory"}, SMB)
        c.ok("PUT", "/sha/f", {}, {"x-ms-type": "file", "x-ms-content-length": "8", "x-ms-meta-kept": "1", **SMB})
        c.ok("PUT", "/sha/f", {"comp": "range"}, {"x-ms-range": "bytes=0-7", "x-ms-write": "update"}, b"original")
        self.share_snapshot = c.ok("PUT", "/sha", {"restype": "share", "comp": "snapshot"}).headers["x-ms-snapshot"]
        blobs = RawClient(self.emu.endpoints["blob"])
        blobs.request("PUT", f"/{ACCOUNT}/blobsource", [("restype", "container")])
        r = blobs.request("PUT", f"/{ACCOUNT}/blobsource/b", [], headers={"x-ms-blob-type": "BlockBlob"}, body=b"from a blob")
        assert r.status == 201, r.body

    def snapshot(self):
        c = self.client
        state = [c.ok("GET", "", {"comp": "list", "include": "metadata,snapshots"}).body]
        for name in ("sha", "fresh"):
            r = c.send("GET", "/" + name, {"restype": "share"})
            state.append((r.status, r.headers.get("etag"), r.headers.get("x-ms-share-quota")))
        if state[-2][0] == 200:
            for path, query in (("/sha", {"restype": "directory", "comp": "list"}),
                                ("/sha/d", {"restype": "directory"}), ("/sha/d2", {"restype": "directory"}),
                                ("/sha/fresh", {"restype": "directory"}), ("/sha/f", {}), ("/sha/fresh", {})):
                r = c.send("GET", path, query)
                state.append((path, r.status, r.headers.get("etag"), r.headers.get("content-type"),
                              r.headers.get("x-ms-lease-state"),
                              sorted((k, v) for k, v in r.headers.items() if k.startswith("x-ms-meta-")),
                              r.body if r.status == 200 else r.code))
        return state

    def sas(self, op, kind, permissions):
        path = op[8].split("/")
        share = path[1] if len(path) > 1 else "sha"
        if kind == "account":
            return self.account_sas(permissions, "sco")
        if kind == "container":
            return generate_share_sas(ACCOUNT, share, account_key=self.key, permission=permissions, expiry=EXPIRY)
        return generate_file_sas(ACCOUNT, share, path[2:], account_key=self.key, permission=permissions, expiry=EXPIRY)

    def account_sas(self, permissions, resource_types):
        return file_account_sas(ACCOUNT, self.key, resource_types, permissions, EXPIRY)

    def copy_source(self):
        # The source is readable on its own (a SAS of its own): only the destination's SAS varies.
        sas = generate_file_sas(ACCOUNT, "sha", ["f"], account_key=self.key, permission="r", expiry=EXPIRY)
        return f"{self.emu.endpoints['file']}/{ACCOUNT}/sha/f?{sas}"

    def blob_copy_source(self):
        sas = generate_blob_sas(ACCOUNT, "blobsource", "b", account_key=self.key, permission="r", expiry=EXPIRY)
        return f"{self.emu.endpoints['blob']}/{ACCOUNT}/blobsource/b?{sas}"

    def other_service_sas(self, permissions):
        return blob_account_sas(ACCOUNT, self.key, "sco", permissions, EXPIRY)

    def test_every_operation_against_every_permission_subset(self):
        self.run_matrix()


if __name__ == "__main__":
    unittest.main()
