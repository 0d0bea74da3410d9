"""Recorded exchanges: vcrpy cassettes (Python SDK and az CLI tests) and Java session records."""
import ast
import json
import os
import urllib.parse
from dataclasses import dataclass, field

import yaml

ARM_HOSTS = ("management.azure.com", "localhost:1234")


@dataclass
class Exchange:
    index: int
    method: str
    url: str            # as recorded
    host: str
    path: str           # percent-encoded, as recorded
    query: str          # raw query string
    headers: dict       # request headers, lower-case names, one value each
    body: object        # request body: str, or None when none was sent or recorded
    status: int
    response_headers: dict
    response_body: str  # '' when the answer had none
    body_recorded: bool = True  # False for Java records, which keep no request bodies

    @property
    def is_arm(self):
        return self.host in ARM_HOSTS

    @property
    def storage_service(self):
        """('file' | 'blob', account) for a storage data-plane request, else None."""
        parts = self.host.split(".")
        if len(parts) >= 4 and parts[2:4] == ["core", "windows"] and parts[1] in ("file", "blob"):
            return parts[1], parts[0]
        return None

    def query_params(self):
        return urllib.parse.parse_qs(self.query, keep_blank_values=True)

    def api_version(self):
        return (self.query_params().get("api-version") or [None])[0]


class _Loader(yaml.SafeLoader):
    """Python 2 cassettes (the az CLI's) tag strings !!python/unicode."""


_Loader.add_constructor("tag:yaml.org,2002:python/unicode", lambda loader, node: loader.construct_scalar(node))
_Loader.add_constructor("tag:yaml.org,2002:python/str", lambda loader, node: loader.construct_scalar(node))


def _text(value):
    """A recorded body as text: vcrpy keeps bytes, the CLI's cassettes sometimes the repr of bytes."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    # Some cassettes hold the repr of bytes, some the repr of that repr.
    while isinstance(value, str) and value[:2] in ("b'", 'b"'):
        try:
            value = ast.literal_eval(value).decode("utf-8", "replace")
        except (ValueError, SyntaxError):
            break
    return str(value)


def _one_value(headers):
    out = {}
    for name, value in (headers or {}).items():
        if isinstance(value, list):
            value = value[0] if value else ""
        out[name.lower()] = str(value)
    return out


def _split(url):
    parsed = urllib.parse.urlsplit(url)
    return parsed.netloc, parsed.path, parsed.query


def _from_vcr(path):
    with open(path, encoding="utf-8") as f:
        doc = yaml.load(f, Loader=_Loader)
    out = []
    for i, interaction in enumerate(doc.get("interactions") or []):
        request, response = interaction["request"], interaction["response"]
        host, url_path, query = _split(request["uri"])
        body = _text(request.get("body"))
        out.append(Exchange(
            index=i, method=request["method"].upper(), url=request["uri"], host=host, path=url_path,
            query=query, headers=_one_value(request.get("headers")), body=body or None,
            status=int(response["status"]["code"]), response_headers=_one_value(response.get("headers")),
            response_body=_text((response.get("body") or {}).get("string")) or ""))
    return out


def _from_java(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    out = []
    for i, record in enumerate(doc.get("networkCallRecords") or []):
        response = dict(record.get("Response") or {})
        status = int(response.pop("StatusCode", 0))
        body = response.pop("Body", "") or ""
        # The Java recorder wrote `retry-after: 0` into every answer (and 0 over any value the
        # service sent) so that its playback never waits: the header is the recorder's, not
        # the cloud's.
        response.pop("retry-after", None)
        host, url_path, query = _split(record["Uri"])
        out.append(Exchange(
            index=i, method=record["Method"].upper(), url=record["Uri"], host=host, path=url_path,
            query=query, headers=_one_value(record.get("Headers")), body=None, status=status,
            response_headers=_one_value(response), response_body=body, body_recorded=False))
    return out


def load(path):
    """The exchanges of one recording, in the order they were made."""
    if path.endswith(".json"):
        return _from_java(path)
    return _from_vcr(path)


def recordings(root):
    """{folder: [recording paths]} for every ARM recording folder under root (the Batch data
    plane's and the Storage services' recordings are not ARM's)."""
    out = {}
    for folder in sorted(os.listdir(root)):
        full = os.path.join(root, folder)
        if not os.path.isdir(full) or folder.startswith(("batch-", "storage-")):
            continue
        files = sorted(os.path.join(full, name) for name in os.listdir(full)
                       if name.endswith((".yaml", ".json")))
        if files:
            out[folder] = files
    return out


def steps(exchanges):
    """(first, last, wait_loop) for each step of a replay: a run of identical GETs is a client's
    wait loop, one step whose answer is the last one's."""
    i, n = 0, len(exchanges)
    while i < n:
        x = exchanges[i]
        j = i
        while x.method == "GET" and j + 1 < n and exchanges[j + 1].method == "GET" and exchanges[j + 1].url == x.url:
            j += 1
        yield x, exchanges[j], j > i
        i = j + 1


def json_or_none(text):
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
