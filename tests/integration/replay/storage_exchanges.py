"""The storage recordings' exchanges (vcrpy cassettes of the Python storage SDK's tests), with the
request and answer bodies as bytes, and the operation each request is (for grouping differences).
"""
import email.utils
import os
import urllib.parse
from dataclasses import dataclass

import yaml

from .cassette import _Loader, _one_value


@dataclass
class StorageExchange:
    index: int
    method: str
    service: str        # blob | file
    account: str        # as recorded (scrubbed)
    path: str           # percent-encoded, as recorded, without the account
    query: str          # raw, as recorded
    headers: dict       # lower-case names, one value each
    body: bytes
    date: float         # the request's x-ms-date, seconds since the epoch (0 when none)
    status: int
    response_headers: dict
    response_body: bytes

    def params(self):
        return {k.lower(): v for k, v in urllib.parse.parse_qsl(self.query, keep_blank_values=True)}


def _bytes(value):
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")


def host_account(host):
    """(service, account) of ACCOUNT.blob|file.core.windows.net, else None."""
    parts = host.lower().split(".")
    if len(parts) >= 4 and parts[2:4] == ["core", "windows"] and parts[1] in ("file", "blob"):
        return parts[1], parts[0]
    return None


def load(path):
    with open(path, encoding="utf-8") as f:
        doc = yaml.load(f, Loader=_Loader)
    out = []
    for i, interaction in enumerate(doc.get("interactions") or []):
        request, response = interaction["request"], interaction["response"]
        parsed = urllib.parse.urlsplit(request["uri"])
        where = host_account(parsed.netloc)
        if where is None:
            continue
        headers = _one_value(request.get("headers"))
        date = headers.get("x-ms-date")
        out.append(StorageExchange(
            index=i, method=request["method"].upper(), service=where[0], account=where[1],
            path=parsed.path or "/", query=parsed.query, headers=headers,
            body=_bytes(request.get("body")),
            date=email.utils.parsedate_to_datetime(date).timestamp() if date else 0.0,
            status=int(response["status"]["code"]), response_headers=_one_value(response.get("headers")),
            response_body=_bytes((response.get("body") or {}).get("string"))))
    # A request recorded without x-ms-date (a SAS request) was made when its neighbours were.
    known = [x.date for x in out if x.date]
    last = known[0] if known else 0.0
    for x in out:
        x.date = x.date or last
        last = x.date
    return out


def folder_files(folder):
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".yaml"))


def _level(x):
    segments = [s for s in x.path.split("/") if s]
    if not segments:
        return "account"
    if len(segments) == 1:
        return "share" if x.service == "file" else "container"
    if x.service == "file" and x.params().get("restype") == "directory":
        return "directory"
    return "file" if x.service == "file" else "blob"


def operation(x):
    """A short name of the operation a request is: `file PUT share comp=snapshot`, with the
    headers that choose among operations of one URL (a lease action, a copy source, a range write)."""
    p = x.params()
    words = [x.service, x.method, _level(x)]
    if p.get("restype") == "service":
        words[2] = "service"
    if "comp" in p:
        words.append(f"comp={p['comp']}")
    for name in ("x-ms-lease-action", "x-ms-write", "x-ms-page-write", "x-ms-blob-type"):
        if name in x.headers and x.method == "PUT":
            words.append(f"{name[5:]}={x.headers[name].lower()}")
    if "x-ms-copy-source" in x.headers:
        words.append("from-url" if p.get("comp") or "x-ms-requires-sync" in x.headers else "copy")
    for name in ("sharesnapshot", "snapshot", "versionid"):
        if name in p:
            words.append(f"@{name}")
    if "sig" in p:
        words.append("SAS")
    return " ".join(words)
