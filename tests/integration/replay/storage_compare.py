"""What differs between the Storage service's recorded answer and the emulator's: the status and
error code, the headers the cloud sent (and the service headers the emulator adds), the XML
body's elements and values, and a download's bytes.

Volatile values (times, ETags, file ids, permission keys, copy ids, request ids, free-text
messages, opaque markers) are compared by presence only. Each difference has a category, the
line it is counted under in the replay's breakdown.
"""
import re
import xml.etree.ElementTree as ET

from .compare import Difference, mask

# Headers whose values differ by nature: compared by presence.
VOLATILE_HEADERS = {
    "date", "etag", "last-modified", "x-ms-file-creation-time", "x-ms-file-last-write-time",
    "x-ms-file-change-time", "x-ms-file-id", "x-ms-file-parent-id", "x-ms-file-permission-key",
    "x-ms-copy-id", "x-ms-copy-completion-time", "x-ms-snapshot", "x-ms-version-id",
    "x-ms-creation-time", "x-ms-share-next-allowed-quota-downgrade-time",
    "x-ms-access-tier-change-time", "x-ms-last-access-time", "x-ms-lease-time",
    "x-ms-copy-status-description", "content-length",
}
# Not compared at all: the connection's, the recorder's, and headers the recording left out of
# most answers (request ids), so that their absence says nothing.
IGNORED_HEADERS = {"server", "transfer-encoding", "connection", "keep-alive", "x-ms-request-id",
                   "x-ms-client-request-id", "vary"}
# Headers that the emulator adding is a difference (the service's own); others it may add.
COMPARED_EXTRA = re.compile(r"^(x-ms-|content-md5$|content-range$|accept-ranges$|content-type$)")

# XML elements whose text differs by nature.
VOLATILE_ELEMENTS = {
    "Etag", "Last-Modified", "Creation-Time", "CreationTime", "LastWriteTime", "ChangeTime",
    "LastAccessTime", "LastModified", "FileId", "ParentId", "PermissionKey", "NextMarker", "Message",
    "AuthenticationErrorDetail", "RequestId", "CopyId", "CopyCompletionTime", "Snapshot", "VersionId",
    "AccessTierChangeTime", "DeletedTime", "NextAllowedQuotaDowngradeTime", "Version",
    "HandleId", "OpenTime", "LastReconnectTime", "ClientIp", "SessionId", "Value", "SignedOid",
    "SignedTid", "SignedStart", "SignedExpiry", "Start", "Expiry", "CopyStatusDescription",
    "LastSyncTime", "ExceptionDetails", "ExceptionMessage", "StackTrace", "QueryParameterValue",
    "Date",
}
# Elements of a list told apart by these children (a share and its snapshots share a name, and
# so do a deleted share and the share made again after it).
KEYS = ("Name", "Snapshot", "VersionId", "Deleted")


def error_code(headers, body):
    code = headers.get("x-ms-error-code")
    if code:
        return code
    m = re.search(rb"<Code>([^<]*)</Code>", body or b"")
    return m.group(1).decode() if m else None


class Judged:
    """The differences of one answer, each with its category."""

    def __init__(self):
        self.items = []   # (category, Difference)

    def add(self, category, difference):
        self.items.append((category, difference))

    @property
    def differences(self):
        return [d for _, d in self.items]

    @property
    def categories(self):
        return sorted({c for c, _ in self.items})


def compare(recorded, status, headers, body, operation):
    """recorded: a StorageExchange; status, headers (lower-case names), body: the emulator's
    answer, with the emulator's account and URLs already written as the cloud's."""
    out = Judged()
    cloud_code = error_code(recorded.response_headers, recorded.response_body) if recorded.status >= 400 else None
    emulator_code = error_code(headers, body) if status >= 400 else None
    if recorded.status != status:
        what = "operation not served" if status in (400, 404, 405, 501) and recorded.status < 300 and \
            emulator_code in ("UnsupportedQueryParameter", "InvalidQueryParameterValue", "UnsupportedHttpVerb",
                              "InvalidHeaderValue", "UnsupportedHeader", "InvalidUri", "ResourceNotFound",
                              "NotImplemented", None) else "status"
        out.add(f"{what}: {operation} (cloud {recorded.status} {cloud_code or ''}, emulator {status} "
                f"{emulator_code or ''})".replace(" )", ")").replace("  ", " "),
                Difference("status", "status", f"{recorded.status} {cloud_code or ''}".strip(),
                           f"{status} {emulator_code or ''}".strip()))
        return out
    if cloud_code != emulator_code:
        out.add(f"error code: {operation} (cloud {cloud_code}, emulator {emulator_code})",
                Difference("status", "x-ms-error-code", cloud_code, emulator_code))
        return out
    _compare_headers(recorded.response_headers, headers, out)
    _compare_body(recorded, headers, body, out, operation)
    return out


def _without_boundary(content_type):
    return re.sub(r";\s*boundary=.*", "", content_type).replace(" ", "").lower()


def _compare_headers(cloud, emulator, out, prefix=""):
    for name, value in cloud.items():
        if name in IGNORED_HEADERS:
            continue
        mine = emulator.get(name)
        if mine is None:
            out.add(f"{prefix}missing header {name}", Difference("header", name, value, None))
        elif name in VOLATILE_HEADERS:
            continue
        elif name == "content-type":
            # A multipart answer's boundary is its own.
            if _without_boundary(value) != _without_boundary(mine):
                out.add(f"{prefix}header value {name}", Difference("header", name, value, mine))
        elif mask(value) != mask(mine):
            out.add(f"{prefix}header value {name}", Difference("header", name, value, mine))
    for name, mine in emulator.items():
        if name not in cloud and name not in IGNORED_HEADERS and COMPARED_EXTRA.match(name) and \
                name not in ("x-ms-version", "x-ms-date"):
            out.add(f"{prefix}extra header {name}", Difference("header", name, None, mine))


def _xml(body):
    text = body.lstrip(b"\xef\xbb\xbf").strip()
    if not text.startswith(b"<"):
        return None
    try:
        return ET.fromstring(text)
    except ET.ParseError:
        return None


def _compare_body(recorded, headers, body, out, operation):
    cloud_body = recorded.response_body
    if recorded.method == "HEAD":
        return
    if recorded.response_headers.get("content-type", "").startswith("multipart/mixed"):
        _compare_batch(cloud_body, body, out, operation)
        return
    cloud_xml = _xml(cloud_body)
    if cloud_xml is not None:
        mine = _xml(body)
        if mine is None:
            out.add(f"body shape: {operation}", Difference("type", "(body)", "xml", body[:200]))
            return
        _compare_element(cloud_xml, mine, cloud_xml.tag, out)
        return
    if cloud_body != body:
        what = "content" if cloud_body else "body"
        out.add(f"{what} differs: {operation}",
                Difference("value", "(content)", cloud_body[:120], body[:120]))


def _key(element):
    return tuple((k, (element.findtext(k) or "")) for k in KEYS if element.find(k) is not None)


def _leaf(element):
    return len(element) == 0


def _compare_element(cloud, mine, path, out):
    for name, value in cloud.attrib.items():
        if name not in mine.attrib:
            out.add(f"body missing attribute {path}@{name}", Difference("missing", f"{path}@{name}", value, None))
        elif mask(_endpoint(value)) != mask(_endpoint(mine.attrib[name])):
            out.add(f"body value {path}@{name}", Difference("value", f"{path}@{name}", value, mine.attrib[name]))
    for name, value in mine.attrib.items():
        if name not in cloud.attrib:
            out.add(f"body extra attribute {path}@{name}", Difference("extra", f"{path}@{name}", None, value))
    if _leaf(cloud) and _leaf(mine):
        if cloud.tag in VOLATILE_ELEMENTS:
            return
        c, m = (cloud.text or "").strip(), (mine.text or "").strip()
        if mask(c) != mask(m):
            out.add(f"body value {path}", Difference("value", path, c, m))
        return
    cloud_groups, mine_groups = _groups(cloud), _groups(mine)
    for tag, items in cloud_groups.items():
        sub = f"{path}.{tag}"
        if tag not in mine_groups:
            out.add(f"body missing element {sub}", Difference("missing", sub, _short(items[0]), None))
            continue
        theirs = mine_groups[tag]
        if all(_key(i) for i in items + theirs):
            # Items of one key (the deleted versions of a container) are matched in order.
            by_key = {}
            for i in theirs:
                by_key.setdefault(_key(i), []).append(i)
            for item in items:
                same = by_key.get(_key(item))
                if not same:
                    out.add(f"body element not listed {sub}", Difference("element", sub, _name(item), None))
                else:
                    _compare_element(item, same.pop(0), sub, out)
            for item in (i for same in by_key.values() for i in same):
                out.add(f"body element listed in addition {sub}", Difference("element", sub, None, _name(item)))
            continue
        if len(items) != len(theirs):
            out.add(f"body length {sub}", Difference("length", sub, len(items), len(theirs)))
        for c, m in zip(items, theirs):
            _compare_element(c, m, sub, out)
    for tag, items in mine_groups.items():
        if tag not in cloud_groups:
            sub = f"{path}.{tag}"
            out.add(f"body extra element {sub}", Difference("extra", sub, None, _short(items[0])))


def _groups(element):
    out = {}
    for child in element:
        out.setdefault(child.tag, []).append(child)
    return out


def _name(element):
    return "/".join(v for _, v in _key(element))


def _short(element):
    text = ET.tostring(element, encoding="unicode")
    return text if len(text) < 300 else text[:300] + "..."


ENDPOINT = re.compile(r"https://[a-z0-9]+\.(blob|file)\.core\.windows\.net")


def _endpoint(value):
    return ENDPOINT.sub(r"https://ACCOUNT.\1.core.windows.net", value)


def batch_parts(body):
    """[(status, {header: value})] of a Blob Batch answer's parts."""
    out = []
    text = body.decode("utf-8", "replace").replace("\r\n", "\n")
    for m in re.finditer(r"^HTTP/1\.1 (\d{3})[^\n]*\n((?:[^\n]+\n)*)", text, re.M):
        headers = {}
        for line in m.group(2).splitlines():
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        out.append((int(m.group(1)), headers))
    return out


def _compare_batch(cloud_body, body, out, operation):
    cloud, mine = batch_parts(cloud_body), batch_parts(body)
    if len(cloud) != len(mine):
        out.add(f"batch parts: {operation}", Difference("length", "(parts)", len(cloud), len(mine)))
    for i, ((cs, ch), (ms, mh)) in enumerate(zip(cloud, mine)):
        if cs != ms or ch.get("x-ms-error-code") != mh.get("x-ms-error-code"):
            out.add(f"batch part status: {operation} (cloud {cs} {ch.get('x-ms-error-code') or ''}, "
                    f"emulator {ms} {mh.get('x-ms-error-code') or ''})".replace(" ,", ",").replace(" )", ")"),
                    Difference("status", f"part {i}", f"{cs} {ch.get('x-ms-error-code') or ''}".strip(),
                               f"{ms} {mh.get('x-ms-error-code') or ''}".strip()))
        else:
            _compare_headers(ch, mh, out, prefix="batch part ")
