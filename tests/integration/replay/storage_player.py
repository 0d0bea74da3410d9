"""Replays the Storage service's recordings (storage-file-python, storage-blob-python) against one
emulator per folder and compares every answer with the cloud's (storage_compare).

- Each recording gets accounts of its own (the recorded, scrubbed name with the recording's
  number after it, made with `--account NAME:KEY`), so that recordings replay in parallel
  without seeing each other's shares and containers; the emulator's account names and URLs are
  written back as the cloud's before comparing.
- What the recorded account held that the recording did not make (other tests' shares and
  containers, shown by its listings) is made first.
- Each request goes as recorded (path, query, headers, body, `x-ms-version`) to the path-style
  endpoint, signed again: SharedKey over the request as sent, or, where the URL carried a SAS,
  the same SAS re-signed with the emulator's key (storage_signing), times moved to now. Copy
  sources (`x-ms-copy-source`) name the emulator's URL of the recording's account, their SAS
  re-signed the same way. Conditional headers' dates move by as long as has passed since the
  recording, so that a condition on "15 minutes ago" means the same.
- Where the recording waited (a lease or SAS to expire: 3 to 30 seconds between two requests'
  `x-ms-date`), the replay waits as long.
- Requests go over one keep-alive connection per recording and service.
"""
import base64
import hashlib
import email.utils
import http.client
import os
import re
import sys
import time
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from . import storage_exchanges, storage_soft_delete
from .storage_compare import compare
from .storage_signing import is_sas, resign_sas_query, shifted_http_date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from raw_storage import RawClient  # noqa: E402

# Not sent again: the recorder's and the connection's, and what is made anew for each request.
DROPPED = {"authorization", "connection", "accept-encoding", "content-length", "transfer-encoding", "x-ms-date",
           "host", "user-agent", "expect"}
SHIFTED_DATES = ("if-modified-since", "if-unmodified-since", "x-ms-source-if-modified-since",
                 "x-ms-source-if-unmodified-since")
URL_HEADERS = ("x-ms-copy-source", "x-ms-file-rename-source")
WAITED = (3.0, 30.0)
# How long the emulator, as the service, takes to delete a container kept by container soft delete
# (BlobStore::kContainerBeingDeleted), and a little more.
CONTAINER_BEING_DELETED = 31.0
LISTED_SNAPSHOT = re.compile(r"<Name>([^<]*)</Name><Snapshot>([^<]*)</Snapshot>")
LISTED_VERSION = re.compile(r"<(Snapshot|VersionId)>([^<]*)</\1>")
# Values a request names from an earlier answer: the emulator's are sent instead of the cloud's.
ARM_SUBSCRIPTION = "00000000-1111-2222-3333-444444444444"
LEARNED_ANSWERS = ("etag", "x-ms-snapshot", "x-ms-version-id")
LEARNED_HEADERS = ("if-match", "if-none-match", "x-ms-source-if-match", "x-ms-source-if-none-match",
                   "x-ms-copy-source", "x-ms-file-rename-source", "x-ms-deleted-share-version",
                   "x-ms-deleted-container-version")
LEARNED_QUERY = ("snapshot", "sharesnapshot", "prevsnapshot", "versionid")
CLOUD_URL = re.compile(r"https?://([a-z0-9]+)\.(blob|file)\.core\.windows\.net(/[^?\s]*)?(\?[^\s]*)?")


@dataclass
class Answer:
    recording: str
    index: int
    operation: str
    method: str
    path: str
    categories: list = field(default_factory=list)
    differences: list = field(default_factory=list)   # Difference objects
    seconds: float = 0.0

    @property
    def identical(self):
        return not self.differences

    @property
    def same_status(self):
        return not any(d.kind == "status" for d in self.differences)

    def where(self):
        return f"{self.recording}#{self.index}"


def account_key(name):
    return base64.b64encode(hashlib.sha512(name.encode()).digest()).decode()


def local_name(recorded, number):
    return f"{re.sub('[^a-z0-9]', '', recorded.lower())[:20]}{number:03d}"


class Connections:
    """One keep-alive HTTP connection per endpoint; a connection the emulator closed while idle
    is opened again and the request sent once more (it had not been read)."""

    def __init__(self, endpoints):
        self.endpoints = endpoints
        self.open = {}

    def send(self, service, method, target, headers, body):
        for attempt in (0, 1):
            conn = self.open.get(service)
            if conn is None:
                parsed = urllib.parse.urlsplit(self.endpoints[service])
                conn = self.open[service] = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
            try:
                conn.putrequest(method, target, skip_host=False, skip_accept_encoding=True)
                for k, v in headers.items():
                    conn.putheader(k, v)
                conn.endheaders(body if body else None)
                response = conn.getresponse()
                data = response.read()
                out = (response.status, {k.lower(): v for k, v in response.getheaders()}, data)
                if response.will_close:
                    conn.close()
                    self.open.pop(service, None)
                return out
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.CannotSendRequest):
                conn.close()
                self.open.pop(service, None)
                if attempt:
                    raise

    def close(self):
        for conn in self.open.values():
            conn.close()


class RecordingPlayer:
    def __init__(self, endpoints, path, name, number):
        self.endpoints = endpoints
        self.name = name
        self.exchanges = storage_exchanges.load(path)
        recorded = sorted({x.account for x in self.exchanges})
        self.accounts = {a: local_name(a, number) for a in recorded}
        # The account other accounts' names (unscrubbed copy sources) stand for.
        counts = {}
        for x in self.exchanges:
            counts[x.account] = counts.get(x.account, 0) + 1
        self.main_account = max(counts, key=counts.get) if counts else None
        self.connections = Connections(endpoints)
        self.learned = {}   # the cloud's ETags, snapshot times and version ids -> the emulator's
        self.last_modified = []  # (the cloud's Last-Modified, the emulator's) of each answer, in order
        self.share_snapshots = {}  # (share, the emulator's snapshot time) -> the cloud's
        self.sent_urls = {}  # a copy source as sent to the emulator -> as recorded (echoed back by copies)
        self.arm = None  # the emulator's ARM endpoint and certificate ("arm", "ca_cert")

    # -- the accounts ----------------------------------------------------------------------------
    def local_accounts(self):
        return [(name, account_key(name)) for name in self.accounts.values()]

    def _local(self, recorded):
        return self.accounts.get(recorded) or self.accounts[self.main_account]

    def _base(self, service, recorded):
        return f"{self.endpoints[service]}/{self._local(recorded)}"

    # -- the run ---------------------------------------------------------------------------------
    def run(self):
        try:
            self._prepare()
            out = []
            previous = None
            sent_at = time.monotonic()
            for x in self.exchanges:
                if previous is not None and previous.date and x.date:
                    gap = x.date - previous.date
                    if WAITED[0] <= gap <= WAITED[1]:
                        time.sleep(max(0.0, gap - (time.monotonic() - sent_at)))
                sent_at = time.monotonic()
                out.append(self._play(x))
                previous = x
            return out
        finally:
            self.connections.close()

    def _prepare(self):
        """Makes the shares and containers that the recorded account held before the recording
        began: those its first request found there (anything but a create that made it, or a
        ShareNotFound/ContainerNotFound), and those its listings show that it never made (what
        other tests had left in the shared account)."""
        from .storage_compare import error_code
        first, made = {}, set()
        for x in self.exchanges:
            segments = [s for s in x.path.split("/") if s]
            if not segments:
                continue
            key = (x.service, x.account, urllib.parse.unquote(segments[0]))
            creates = x.method == "PUT" and len(segments) == 1 and \
                x.params().get("restype") in ("share", "container") and "comp" not in x.params()
            if creates and x.status == 201:
                made.add(key)
            if key not in first:
                code = error_code(x.response_headers, x.response_body) if x.status >= 400 else None
                first[key] = not ((creates and x.status == 201) or code in ("ShareNotFound", "ContainerNotFound")
                                  or code == "ContainerBeingDeleted")
        wanted = [key for key, existed in first.items() if existed]
        # Leased by another test: listed as leased, or deleted with "LeaseIdMissing" by a recording
        # that never leased it.
        leased, leasing, broken = set(), set(), set()
        # Other tests' share snapshots that the listings show (not those this recording takes):
        # {(account, share, cloud time): leased}.
        own_snapshots = {x.response_headers.get("x-ms-snapshot") for x in self.exchanges}
        snapshots = {}
        for x in self.exchanges:
            segments = [s for s in x.path.split("/") if s]
            if len(segments) != 1:
                continue
            key = (x.service, x.account, urllib.parse.unquote(segments[0]))
            if x.params().get("comp") == "lease":
                leasing.add(key)
            elif x.method == "DELETE" and key not in leasing and key in first and first[key] and \
                    error_code(x.response_headers, x.response_body) == "LeaseIdMissing":
                leased.add(key)
        for x in self.exchanges:
            if x.method != "GET" or x.path.strip("/") or x.params().get("comp") != "list" or x.status != 200:
                continue
            try:
                root = ET.fromstring(x.response_body.lstrip(b"\xef\xbb\xbf"))
            except ET.ParseError:
                continue
            for item in root.iter("Share" if x.service == "file" else "Container"):
                name = item.findtext("Name")
                key = (x.service, x.account, name)
                snapshot = item.findtext("Snapshot")
                if name and snapshot and x.service == "file" and snapshot not in own_snapshots:
                    snapshots[(x.account, name, snapshot)] = item.findtext("Properties/LeaseState") == "leased"
                if name and key not in made and item.find("Snapshot") is None and \
                        not storage_soft_delete.is_deleted_item(item):
                    if key not in wanted:
                        wanted.append(key)
                    if item.findtext("Properties/LeaseState") == "leased":
                        leased.add(key)
                    elif item.findtext("Properties/LeaseState") == "broken":  # another test broke its lease
                        broken.add(key)
        self._turn_on_versioning()
        self._prepare_soft_delete()
        for service, account, name in wanted:
            restype = "share" if service == "file" else "container"
            local = self._local(account)
            client = RawClient(self.endpoints[service], account=local, key=account_key(local), version="2019-02-02")
            r = client.request("PUT", f"/{local}/{urllib.parse.quote(name)}", [("restype", restype)])
            if r.status not in (201, 409):
                raise RuntimeError(f"could not make {service} {name} of {account}: {r.status} {r.body[:200]}")
            if (service, account, name) in leased | broken:
                self._lease_for_ever(client, f"/{local}/{urllib.parse.quote(name)}", restype)
            if (service, account, name) in broken - leased:
                r = client.request("PUT", f"/{local}/{urllib.parse.quote(name)}", [("restype", restype), ("comp", "lease")],
                                   headers={"x-ms-version": "2020-02-10", "x-ms-lease-action": "break"})
                if r.status != 202:
                    raise RuntimeError(f"could not break the lease of {name}: {r.status} {r.body[:200]}")
        self._seed_service_properties()
        # Their snapshots, oldest first (the emulator names each by the time it takes it: the
        # answers' times are written back as the cloud's).
        for (account, name, snapshot), is_leased in sorted(snapshots.items(), key=lambda kv: kv[0][2]):
            local = self._local(account)
            client = RawClient(self.endpoints["file"], account=local, key=account_key(local), version="2019-02-02")
            path = f"/{local}/{urllib.parse.quote(name)}"
            r = client.request("PUT", path, [("restype", "share")])
            r = client.request("PUT", path, [("restype", "share"), ("comp", "snapshot")])
            if r.status != 201:
                raise RuntimeError(f"could not snapshot share {name} of {account}: {r.status} {r.body[:200]}")
            self.learned[snapshot] = r.headers["x-ms-snapshot"]
            self.share_snapshots[(name, r.headers["x-ms-snapshot"])] = snapshot
            if is_leased:
                self._lease_for_ever(client, path, "share", [("sharesnapshot", r.headers["x-ms-snapshot"])])

    def _turn_on_versioning(self):
        """Blob versioning on for the accounts whose answers name versions (the recorded account
        had it on), as a user turns it on: ARM's blobServices/default, isVersioningEnabled; and
        soft delete (deleteRetentionPolicy) and last access time tracking where the recording
        shows them on."""
        versioned = set()
        for x in self.exchanges:
            if x.service == "blob" and ("x-ms-version-id" in x.response_headers or b"<VersionId>" in x.response_body):
                versioned.add(x.account)
        # Blob soft delete, likewise: on for the accounts whose deletes were not permanent before
        # the recording set its own Blob service properties (other tests of the day had set it).
        retaining, setting, tracking = set(), set(), set()
        for x in self.exchanges:
            if x.service != "blob":
                continue
            # Last access time tracking, where answers name last access times.
            if "x-ms-last-access-time" in x.response_headers or b"<LastAccessTime>" in x.response_body:
                tracking.add(x.account)
            if x.method == "PUT" and x.params().get("comp") == "properties" and x.params().get("restype") == "service":
                setting.add(x.account)
            elif x.response_headers.get("x-ms-delete-type-permanent") == "false" and x.account not in setting:
                retaining.add(x.account)
        if not (versioned or retaining or tracking) or not self.arm:
            return
        self._arm("PUT", "", {"location": "eastus"}, "make the resource group", ok=(200, 201))
        for account in sorted(versioned | retaining | tracking):
            properties = {}
            if account in versioned:
                properties["isVersioningEnabled"] = True
            if account in retaining:
                properties["deleteRetentionPolicy"] = {"enabled": True, "days": 7}
            if account in tracking:
                properties["lastAccessTimeTrackingPolicy"] = {"enable": True}
            self._arm("PUT", f"/providers/Microsoft.Storage/storageAccounts/{self._local(account)}/blobServices/default",
                      {"properties": properties}, f"set the Blob settings of {account}")

    def _arm(self, method, path, body, what, ok=(200,)):
        """A request to ARM under the replay's resource group (PATH below it); fails the replay,
        saying what it was for, unless ARM answers a status of `ok`."""
        import requests
        group = f"/subscriptions/{ARM_SUBSCRIPTION}/resourceGroups/storage-replay"
        r = requests.request(method, f"{self.arm['arm']}{group}{path}?api-version=2021-04-01", json=body,
                             headers={"Authorization": "Bearer replay"}, verify=self.arm["ca_cert"], timeout=30)
        if r.status_code not in ok:
            raise RuntimeError(f"could not {what}: {r.status_code} {r.text[:200]}")
        return r

    @property
    def waits_to_prepare(self):
        """Whether the preparation waits (for other tests' deleted containers to be listed as
        deleted for longer than the service takes to delete one): such recordings go first."""
        return any(not recent for _, _, recent in storage_soft_delete.containers_deleted_by_others(self.exchanges))

    def _prepare_container_soft_delete(self):
        """Container soft delete on (ARM's blobServices/default containerDeleteRetentionPolicy) for
        the accounts whose recordings show it, and the deleted containers other tests left there
        made and deleted: those deleted long before the recording first (then the time the service
        takes to delete one is waited out), those it was still deleting last."""
        accounts = storage_soft_delete.container_soft_delete_accounts(self.exchanges)
        if not accounts or not self.arm:
            return
        self._arm("PUT", "", {"location": "eastus"}, "make the resource group", ok=(200, 201))
        for account in sorted(accounts):
            self._arm("PATCH", f"/providers/Microsoft.Storage/storageAccounts/{self._local(account)}/blobServices/default",
                      {"properties": {"containerDeleteRetentionPolicy": {"enabled": True, "days": 7}}},
                      f"turn container soft delete on for {account}")
        deleted = storage_soft_delete.containers_deleted_by_others(self.exchanges)
        older = [(a, n) for a, n, recent in deleted if not recent]
        for account, name in older:
            self._make_deleted_container(account, name)
        if older:
            time.sleep(CONTAINER_BEING_DELETED)
        for account, name, recent in deleted:
            if recent:
                self._make_deleted_container(account, name)

    def _make_deleted_container(self, account, name):
        """A container of that name made and deleted. While another of its name is being deleted
        (Create Container: 409 ContainerBeingDeleted for 30 s), a container of another name is
        made, deleted and restored under this one instead, which the 30 s do not hold up."""
        local = self._local(account)
        client = RawClient(self.endpoints["blob"], account=local, key=account_key(local), version="2019-12-12")
        path = f"/{local}/{urllib.parse.quote(name)}"
        r = client.request("PUT", path, [("restype", "container")])
        if r.status == 409 and r.headers.get("x-ms-error-code") == "ContainerBeingDeleted":
            other = f"{name[:40]}-{len(self.learned)}-{time.monotonic_ns() % 10**9}"
            client.request("PUT", f"/{local}/{other}", [("restype", "container")])
            client.request("DELETE", f"/{local}/{other}", [("restype", "container")])
            listing = client.request("GET", f"/{local}/", [("comp", "list"), ("include", "deleted"), ("prefix", other)])
            version = re.search(rb"<Version>([^<]+)</Version>", listing.body)
            r = client.request("PUT", path, [("restype", "container"), ("comp", "undelete")],
                               headers={"x-ms-deleted-container-name": other,
                                        "x-ms-deleted-container-version": version.group(1).decode() if version else ""})
        if r.status != 201:
            raise RuntimeError(f"could not make container {name} of {account}: {r.status} {r.body[:200]}")
        r = client.request("DELETE", path, [("restype", "container")])
        if r.status != 202:
            raise RuntimeError(f"could not delete container {name} of {account}: {r.status} {r.body[:200]}")

    def _prepare_soft_delete(self):
        """Share soft delete on (ARM's fileServices/default) for the accounts whose recordings
        show it, and the deleted shares other tests left there made and deleted."""
        self._prepare_container_soft_delete()
        accounts = storage_soft_delete.soft_delete_accounts(self.exchanges)
        if not accounts or not self.arm:
            return
        self._arm("PUT", "", {"location": "eastus"}, "make the resource group", ok=(200, 201))
        for account in sorted(accounts):
            self._arm("PATCH", f"/providers/Microsoft.Storage/storageAccounts/{self._local(account)}/fileServices/default",
                      {"properties": {"shareDeleteRetentionPolicy": {"enabled": True, "days": 7}}},
                      f"turn share soft delete on for {account}")
        for account, name in storage_soft_delete.deleted_by_others(self.exchanges):
            local = self._local(account)
            client = RawClient(self.endpoints["file"], account=local, key=account_key(local), version="2019-02-02")
            path = f"/{local}/{urllib.parse.quote(name)}"
            client.request("PUT", path, [("restype", "share")])
            r = client.request("DELETE", path, [("restype", "share")])
            if r.status != 202:
                raise RuntimeError(f"could not delete share {name} of {account}: {r.status} {r.body[:200]}")

    def _seed_service_properties(self):
        """The service properties the recorded account held before the recording (set by other
        tests): what its first Get Service Properties answered, less the elements the recording
        itself set before that, are set first."""
        seen, set_before = {}, {}
        for x in self.exchanges:
            params = x.params()
            if x.path.strip("/") or params.get("restype") != "service" or params.get("comp") != "properties":
                continue
            key = (x.service, x.account)
            if key in seen:
                continue
            try:
                if x.method == "PUT" and x.status == 202:
                    set_before.setdefault(key, set()).update(c.tag for c in ET.fromstring(x.body))
                elif x.method == "GET" and x.status == 200:
                    root = ET.fromstring(x.response_body.lstrip(b"\xef\xbb\xbf"))
                    seen[key] = [ET.tostring(c) for c in root if c.tag not in set_before.get(key, set())]
            except ET.ParseError:
                continue
        for (service, account), elements in seen.items():
            if not elements:
                continue
            local = self._local(account)
            client = RawClient(self.endpoints[service], account=local, key=account_key(local), version="2020-02-10")
            body = b"<StorageServiceProperties>" + b"".join(elements) + b"</StorageServiceProperties>"
            r = client.request("PUT", f"/{local}", [("restype", "service"), ("comp", "properties")], body=body)
            if r.status != 202:
                raise RuntimeError(f"could not set the {service} service properties of {account}: {r.status} {r.body[:200]}")

    @staticmethod
    def _lease_for_ever(client, path, restype, extra=()):
        """Another test's lease, held for ever (the recording's deletes of it are refused)."""
        r = client.request("PUT", path, [("restype", restype), ("comp", "lease"), *extra],
                           headers={"x-ms-version": "2020-02-10", "x-ms-lease-action": "acquire",
                                    "x-ms-lease-duration": "-1"})
        if r.status != 201:
            raise RuntimeError(f"could not lease {path}: {r.status} {r.body[:200]}")

    def _play(self, x):
        started = time.monotonic()
        delta = time.time() - x.date if x.date else 0.0
        local = self._local(x.account)
        key = account_key(local)
        raw_path = f"/{local}{x.path}"
        query = x.query
        headers = {k: v for k, v in x.headers.items() if k not in DROPPED}
        for name in SHIFTED_DATES:
            if name in headers:
                headers[name] = self._condition_date(headers[name], delta)
        for name in LEARNED_HEADERS:
            if name in headers:
                headers[name] = self._learned(headers[name])
        for name in URL_HEADERS:
            if name in headers:
                headers[name] = self._rewrite_url(headers[name], x.account, delta)
        query = self._learned_query(query)
        # A listing's marker names the account (`/ACCOUNT/container`, as the NextMarker answered).
        if query and "marker=" in query:
            for recorded, mine in self.accounts.items():
                query = query.replace(f"marker=%2F{recorded}%2F", f"marker=%2F{mine}%2F")
        body = x.body
        if x.method == "PUT" and x.params().get("comp") == "acl" and body:
            body = _shift_policy_times(body, delta)
        if x.method == "POST" and x.params().get("comp") == "batch" and body:
            body = _resign_batch(body, local, key, self.endpoints[x.service], self._learned_query)
        headers["x-ms-date"] = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
        headers["Content-Length"] = str(len(body))
        if query and is_sas(query):
            query = resign_sas_query(x.service, local, key, x.path, query, delta)
        else:
            pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
            client = RawClient(self.endpoints[x.service], account=local, key=key)
            headers["Authorization"] = client.sign(x.method, raw_path, pairs, headers)
        target = raw_path + ("?" + query if query else "")
        operation = storage_exchanges.operation(x)
        answer = Answer(self.name, x.index, operation, x.method, x.path)
        try:
            status, got_headers, got_body = self.connections.send(x.service, x.method, target, headers, body)
        except OSError as e:
            from .compare import Difference
            answer.differences.append(Difference("status", "status", x.status, f"no answer: {e}"))
            answer.categories = [f"no answer: {operation}"]
            return answer
        got_headers = {k: self._as_cloud(v) for k, v in got_headers.items()}
        self._learn(x.response_headers, got_headers)
        if x.service == "file" and x.response_headers.get("x-ms-snapshot") and got_headers.get("x-ms-snapshot"):
            share = urllib.parse.unquote(x.path.strip("/").split("/")[0])
            self.share_snapshots[(share, got_headers["x-ms-snapshot"])] = x.response_headers["x-ms-snapshot"]
        if x.params().get("comp") == "list":
            storage_soft_delete.learn_versions(x.response_body, got_body, self.learned)
        judged = compare(x, status, got_headers, self._as_cloud_bytes(got_body), operation)
        answer.categories = judged.categories
        answer.differences = judged.differences
        answer.seconds = time.monotonic() - started
        return answer

    # -- values learned from answers ------------------------------------------------------------
    def _learn(self, cloud, emulator):
        for name in LEARNED_ANSWERS:
            c, e = cloud.get(name), emulator.get(name)
            if c and e and c != e:
                self.learned[c] = e
        c, e = _http_date(cloud.get("last-modified")), _http_date(emulator.get("last-modified"))
        if c and e:
            self.last_modified.append((c, e))

    def _condition_date(self, value, delta):
        """A date condition (If-Modified-Since and the like) moved onto the emulator's clock. The
        tests derive them from a Last-Modified they read (itself, or 15 minutes either side): it
        is sent as the same distance from the emulator's Last-Modified in the nearest earlier
        answer, so that a replay faster than the recording (a resource made and tested in one
        second, a second apart when recorded) is asked what the cloud was asked. Without one,
        the request's own distance from now."""
        when = _http_date(value)
        if when is None or not self.last_modified:
            return shifted_http_date(value, delta)
        cloud, emulator = min(reversed(self.last_modified), key=lambda pair: abs((when - pair[0]).total_seconds()))
        if abs((when - cloud).total_seconds()) > 3600:
            return shifted_http_date(value, delta)
        return email.utils.format_datetime(emulator + (when - cloud), usegmt=True)

    def _learned(self, value):
        for cloud, emulator in self.learned.items():
            value = value.replace(cloud, emulator)
        return value

    def _learned_query(self, query):
        """A snapshot's time or a version id in the query (`snapshot`, `sharesnapshot`,
        `prevsnapshot`, `versionid`) as the emulator named it."""
        if not query or not self.learned:
            return query
        out = []
        for part in query.split("&"):
            name, _, value = part.partition("=")
            if name.lower() in LEARNED_QUERY and value:
                plain = urllib.parse.unquote(value)
                if plain in self.learned:
                    value = urllib.parse.quote(self.learned[plain], safe="")
                part = f"{name}={value}"
            out.append(part)
        return "&".join(out)

    # -- URLs ------------------------------------------------------------------------------------
    def _rewrite_url(self, value, default_account, delta):
        """A cloud URL (a copy source) as the emulator's URL of the recording's account, its SAS
        re-signed."""
        m = CLOUD_URL.match(value.strip())
        if not m:
            return value
        account, service, path, query = m.group(1), m.group(2), m.group(3) or "/", (m.group(4) or "")[1:]
        account = account if account in self.accounts else default_account
        local = self._local(account)
        query = self._learned_query(query)
        if query and is_sas(query):
            query = resign_sas_query(service, local, account_key(local), path, query, delta)
        sent = f"{self._base(service, account)}{path}" + (f"?{query}" if query else "")
        self.sent_urls[sent] = value.strip()
        return sent

    def _as_cloud(self, text):
        # A source URL echoed back (x-ms-copy-source) is the one the recording sent, whatever
        # account name its scrubbing left in it.
        for sent, recorded in self.sent_urls.items():
            text = text.replace(sent, recorded)
        for recorded, local in self.accounts.items():
            for service in ("blob", "file"):
                text = text.replace(f"{self.endpoints[service]}/{local}",
                                    f"https://{recorded}.{service}.core.windows.net")
            text = text.replace(local, recorded)
        return text

    def _as_cloud_bytes(self, data):
        if not data or not (data.lstrip(b"\xef\xbb\xbf").startswith(b"<")):
            return data
        text = self._as_cloud(data.decode("utf-8", "replace"))
        if self.share_snapshots:  # a listing's share snapshots by the times the cloud gave them
            def cloud_time(m):
                snapshot = self.share_snapshots.get((m.group(1), m.group(2)), m.group(2))
                return f"<Name>{m.group(1)}</Name><Snapshot>{snapshot}</Snapshot>"
            text = LISTED_SNAPSHOT.sub(cloud_time, text)
        if self.learned:  # a listing's blob snapshots and versions by the names the cloud gave them
            cloud_of = {emulator: cloud for cloud, emulator in self.learned.items()}
            text = LISTED_VERSION.sub(lambda m: f"<{m.group(1)}>{cloud_of.get(m.group(2), m.group(2))}</{m.group(1)}>",
                                      text)
        return text.encode("utf-8")


def _resign_batch(body, account, key, endpoint, learned_query=lambda q: q):
    """A Blob Batch body's parts as a client of the emulator's path-style endpoint sends them: each
    part's path under the account (its snapshot or version as the emulator named it), dated now and
    signed with SharedKey (a recorded bearer token too: the emulator's account key stands for the
    recorded identity)."""
    text = body.decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    client = RawClient(endpoint, account=account, key=key)

    def part(m):
        method, target, lines = m.group(1), m.group(2), m.group(3)
        path, _, query = target.partition("?")
        query = learned_query(query)
        path = f"/{account}{path}" if not path.startswith(f"/{account}/") else path
        headers = {}
        for line in lines.split(newline):
            if not line:
                continue
            name, _, value = line.partition(":")
            if name.lower() not in ("authorization", "x-ms-date"):
                headers[name.strip()] = value.strip()
        headers["x-ms-date"] = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
        headers["Authorization"] = client.sign(method, path, urllib.parse.parse_qsl(query, keep_blank_values=True),
                                               headers)
        head = newline.join(f"{k}: {v}" for k, v in headers.items())
        return f"{method} {path}?{query} HTTP/1.1{newline}{head}{newline}"
    pattern = re.compile(rf"^(DELETE|PUT|GET|HEAD) (\S+) HTTP/1\.1{newline}((?:[^\r\n]+{newline})*)", re.M)
    return pattern.sub(part, text).encode("utf-8")


def _shift_policy_times(body, delta):
    """A stored access policy's Start and Expiry moved as the SAS times are."""
    from .storage_signing import shifted_time

    def moved(m):
        return f"<{m.group(1)}>{shifted_time(m.group(2), delta) or m.group(2)}</{m.group(1)}>"
    text = body.decode("utf-8", "replace")
    return re.sub(r"<(Start|Expiry)>([^<]+)</\1>", moved, text).encode("utf-8")


def replay_folder(folder, emulator_factory, selection=None, workers=4):
    """[Answer] for every recording of folder (whose file name matches the selection glob),
    against one emulator made by emulator_factory(extra_args)."""
    import concurrent.futures
    from .known import matches  # noqa: F401
    from . import known
    files = storage_exchanges.folder_files(folder)
    label = os.path.basename(folder.rstrip("/"))
    players = []
    for number, path in enumerate(files):
        name = f"{label}/{os.path.basename(path)}"
        if selection and not known.matches(name, selection):
            continue
        players.append((number, path, name))
    if not players:
        return []
    # The accounts come from the recordings; the player needs the endpoints to exist first.
    loaded = [RecordingPlayer({"blob": "", "file": ""}, path, name, number) for number, path, name in players]
    args = []
    for p in loaded:
        for account, key in p.local_accounts():
            args += ["--account", f"{account}:{key}"]
    with emulator_factory(args) as emu:
        for p in loaded:
            p.endpoints = {"blob": emu.endpoints["blob"], "file": emu.endpoints["file"]}
            p.connections = Connections(p.endpoints)
            p.arm = {"arm": emu.endpoints["arm"], "ca_cert": emu.endpoints["ca_cert"]}
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            # Those whose preparation waits start first, so that others replay meanwhile.
            futures = {id(p): pool.submit(p.run) for p in sorted(loaded, key=lambda p: not p.waits_to_prepare)}
            results = [futures[id(p)].result() for p in loaded]
    return [a for r in results for a in r]


def _http_date(value):
    """An RFC 1123 date as a datetime, or None."""
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
