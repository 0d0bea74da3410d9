"""What differs between the cloud's answer and the emulator's.

Compared: the status; the JSON keys by path (array elements collapsed to `[]`); the type of
every value; the values that are the service's behaviour (states, enums, error codes, booleans,
numbers, settings, the names of the elements of named lists); the response headers that clients
read. Volatile values (times, GUIDs, ETags, keys, addresses, request ids, free-text messages,
URLs of the machine that answered) are compared by presence and type only.
"""
import re
from dataclasses import dataclass

from .cassette import json_or_none

GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
IPV4 = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
# A node's id, as the service named them (and the emulator does): tvm-<digits>_<n>-<time>[-p];
# and a pool's, in the name of the diagnosis archive of a job's logs (tvmps_<64 hex>).
NODE_ID = re.compile(r"tvm-\d+_\d+-\d{8}t\d{6}z(?:-p)?|tvmps_[0-9a-f]{64}")
# The machine that answered: the cloud's hosts (ARM's, a Batch account's), the Java records'
# stand-in and the emulator's.
ARM_BASE = re.compile(r"https?://(?:management\.azure\.com|localhost:1234|[a-z0-9]+\.[a-z0-9]+\.batch\.azure\.com"
                      r"|127\.\d+\.\d+\.\d+:\d+)")

# Keys whose values differ by nature: compared by presence and type.
VOLATILE_KEYS = {
    "message", "etag", "eTag", "ipAddress", "publicIPAddress", "privateIPAddress", "port", "nodeId",
    "downloadUrl", "lastModified", "requestId", "contentLength", "value@keys", "primaryEndpoints",
    "secondaryEndpoints", "statusOfPrimary", "statusOfSecondary", "primaryLocation",
    "secondaryLocation", "lastGeoFailoverTime", "lastEnabledTime",
    # Node hours follow from a run's start and end times: the emulator's jobs run in moments.
    "totalJobNodeHours",
}
# Headers clients read; the value of each is compared as its rule says.
HEADERS = ("azure-asyncoperation", "location", "retry-after", "x-ms-request-id", "content-type")


@dataclass
class Difference:
    kind: str      # status | header | missing | extra | type | value | length | element
    path: str      # JSON path (`a.b[].c`), a header name, or "status"
    cloud: object
    emulator: object

    def __str__(self):
        if self.kind in ("missing",):
            return f"{self.path}: the emulator has no such key (cloud {_short(self.cloud)})"
        if self.kind in ("extra",):
            return f"{self.path}: the emulator adds it ({_short(self.emulator)}); the cloud had none"
        return f"{self.path}: {self.kind} cloud {_short(self.cloud)}, emulator {_short(self.emulator)}"


def _short(value, limit=1500):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# ARM's own operation tokens (a resource group's delete): base64 of a job id, opaque.
ARM_TOKEN = re.compile(r"/operationresults/[A-Za-z0-9_-]{24,}")


def mask(text):
    text = ARM_BASE.sub("<arm>", text)
    text = ARM_TOKEN.sub("/operationresults/<token>", text)
    text = GUID.sub("<guid>", text)
    text = NODE_ID.sub("<node>", text)
    text = TIME.sub("<time>", text)
    return IPV4.sub("<ip>", text)


def _kind(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _volatile(key, parent_key):
    if key is None:
        return False
    if key in VOLATILE_KEYS or f"{key}@{parent_key}" in VOLATILE_KEYS:
        return True
    # Times differ by nature; maxWallClockTime is a duration the service chose, compared.
    return (key.endswith("Time") or key.endswith("time")) and key != "maxWallClockTime"


class Learned:
    """What the replay learns from answers: the emulator's GUIDs and URLs for the cloud's, so
    that later requests (a job's output path, a downloadUrl) name the emulator's."""

    def __init__(self):
        self.guids = {}
        self.urls = {}
        self.names = {}   # the cloud's node ids -> the emulator's

    def pair(self, key, cloud, emulator):
        if not isinstance(cloud, str) or not isinstance(emulator, str) or cloud == emulator:
            return
        if key == "downloadUrl":
            self.urls[cloud.split("?")[0]] = emulator
        if key == "nodeId":
            self.names.setdefault(cloud, emulator)
        cloud_ids, emulator_ids = GUID.findall(cloud), GUID.findall(emulator)
        if len(cloud_ids) == len(emulator_ids):
            for c, e in zip(cloud_ids, emulator_ids):
                if c != e:
                    self.guids.setdefault(c.lower(), e)

    def rewrite(self, text):
        if not text:
            return text
        for cloud, emulator in self.names.items():
            text = text.replace(cloud, emulator)
        if not self.guids:
            return text
        return GUID.sub(lambda m: self.guids.get(m.group(0).lower(), m.group(0)), text)


def compare_json(cloud, emulator, learned=None, path="", key=None, parent_key=None, volatile=False):
    """volatile: under a volatile key (primaryEndpoints.blob): keys and types only."""
    out = []
    volatile = volatile or _volatile(key, parent_key)
    ck, ek = _kind(cloud), _kind(emulator)
    if ck != ek:
        out.append(Difference("type", path or "(body)", ck, ek))
        return out
    if ck == "object":
        for name, value in cloud.items():
            sub = f"{path}.{name}" if path else name
            if name not in emulator:
                out.append(Difference("missing", sub, value, None))
            else:
                out += compare_json(value, emulator[name], learned, sub, name, key, volatile)
        for name, value in emulator.items():
            if name not in cloud:
                out.append(Difference("extra", f"{path}.{name}" if path else name, None, value))
        return out
    if ck == "array":
        return out + _compare_array(cloud, emulator, learned, path + "[]", key, volatile)
    if learned is not None:
        learned.pair(key, cloud, emulator)
    if volatile:
        return out
    if ck == "string":
        if mask(cloud) != mask(emulator):
            out.append(Difference("value", path, cloud, emulator))
    elif cloud != emulator:
        out.append(Difference("value", path, cloud, emulator))
    return out


def _named(items):
    return all(isinstance(x, dict) and isinstance(x.get("name"), str) for x in items) and items


def _compare_array(cloud, emulator, learned, path, key, volatile=False):
    out = []
    if _named(cloud) and _named(emulator):
        # Names that hold a node's id (execution-<nodeId>.log) are matched without it.
        by_name = {}
        for x in emulator:
            by_name.setdefault(NODE_ID.sub("<node>", x["name"]), []).append(x)
        cloud_names = {NODE_ID.sub("<node>", x["name"]) for x in cloud}
        for item in cloud:
            masked = NODE_ID.sub("<node>", item["name"])
            matches = by_name.get(masked)
            if matches:
                # One node's log for each of the cloud's, in order; a name listed twice (a
                # directory and a blob of that name) is matched by its last, as a dict would.
                match = matches.pop(0) if masked != item["name"] and len(matches) > 1 else matches[-1]
                out += compare_json(item, match, learned, path, None, key, volatile)
            else:
                out.append(Difference("element", path, item["name"], None))
        for item in emulator:
            if NODE_ID.sub("<node>", item["name"]) not in cloud_names:
                out.append(Difference("element", path, None, item["name"]))
        return _dedupe(out)
    if len(cloud) != len(emulator) and not volatile:
        out.append(Difference("length", path, len(cloud), len(emulator)))
    for c, e in zip(cloud, emulator):
        out += compare_json(c, e, learned, path, key, key, volatile)
    return _dedupe(out)


def _dedupe(differences):
    """One difference per (kind, path) among an array's elements: they are collapsed."""
    seen, out = set(), []
    for d in differences:
        marker = (d.kind, d.path, repr(d.cloud) if d.kind == "element" else "")
        if marker not in seen:
            seen.add(marker)
            out.append(d)
    return out


def compare_headers(cloud, emulator, kept=HEADERS, names=HEADERS):
    """kept: the headers the recording keeps at all (the Python SDK's recordings drop
    x-ms-request-id and Retry-After from every answer: their absence says nothing); names: the
    headers compared (ARM's by default)."""
    out = []
    for name in names:
        if name not in kept:
            continue
        c, e = cloud.get(name), emulator.get(name)
        if c is None and e is None:
            continue
        if c is None:
            out.append(Difference("header", name, None, e))
        elif e is None:
            out.append(Difference("header", name, c, None))
        elif name in ("azure-asyncoperation", "location", "dataserviceid") and mask(c) != mask(e):
            out.append(Difference("header", name, c, e))
        elif name == "content-type" and c.replace(" ", "").lower() != e.replace(" ", "").lower():
            out.append(Difference("header", name, c, e))
    return out


def compare_answer(recorded, answer, learned=None, kept=HEADERS, names=HEADERS):
    """The differences between a recorded exchange's answer and the emulator's (a requests
    response): the status alone when it differs (what follows from another status, an error body
    or no operation headers, says nothing more; the emulator's error code, ARM's or Batch's, goes
    with it), else the headers and the JSON body."""
    if recorded.status != answer.status_code:
        doc = json_or_none(answer.text)
        code = (doc.get("code") or (doc.get("error") or {}).get("code")) if isinstance(doc, dict) else None
        return [Difference("status", "status", recorded.status,
                           f"{answer.status_code} {code}" if code else answer.status_code)]
    out = compare_headers(recorded.response_headers, {k.lower(): v for k, v in answer.headers.items()}, kept, names)
    cloud_doc = json_or_none(recorded.response_body)
    emulator_doc = json_or_none(answer.text)
    if cloud_doc is not None or emulator_doc is not None:
        if cloud_doc is None and recorded.response_body.strip():
            out.append(Difference("type", "(body)", "text", "json"))
        else:
            out += compare_json(cloud_doc, emulator_doc, learned)
    return out

