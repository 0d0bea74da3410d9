"""A raw Blob/File REST client with its own SharedKey signing, for requests that the SDKs would
never send (malformed headers, bodies and paths)."""
import base64
import datetime
import hashlib
import hmac
import http.client
import re
import urllib.parse

from harness import DEV_ACCOUNT, DEV_KEY

STANDARD = ["Content-Encoding", "Content-Language", "Content-Length", "Content-MD5", "Content-Type",
            "Date", "If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range"]


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def code(self):
        return self.headers.get("x-ms-error-code")

    @property
    def message(self):
        match = re.search(rb"<Message>(.*?)</Message>", self.body, re.S)
        return match.group(1).decode() if match else ""


class RawClient:
    def __init__(self, endpoint, account=DEV_ACCOUNT, key=DEV_KEY, version="2021-06-08"):
        parsed = urllib.parse.urlparse(endpoint)
        self.host, self.port = parsed.hostname, parsed.port
        self.account, self.key, self.version = account, base64.b64decode(key), version

    def sign(self, method, raw_path, query, headers):
        lower = {k.lower(): v for k, v in headers.items()}
        values = []
        for name in STANDARD:
            value = lower.get(name.lower(), "")
            values.append("" if name == "Content-Length" and value == "0" else value)
        ms = "".join(f"{k}:{v.strip()}\n" for k, v in sorted(lower.items()) if k.startswith("x-ms-"))
        resource = f"/{self.account}{raw_path}"
        grouped = {}
        for k, v in query:
            grouped.setdefault(k.lower(), []).append(v)
        for k in sorted(grouped):
            resource += f"\n{k}:{','.join(sorted(grouped[k]))}"
        text = method + "\n" + "\n".join(values) + "\n" + ms + resource
        digest = hmac.new(self.key, text.encode(), hashlib.sha256).digest()
        return f"SharedKey {self.account}:{base64.b64encode(digest).decode()}"

    def request(self, method, raw_path, query=(), body=b"", headers=None, sign=True, raw_query=None):
        """raw_path is sent as given (already percent-encoded where it must be)."""
        h = {"x-ms-version": self.version,
             "x-ms-date": datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT"),
             "Content-Length": str(len(body))}
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        if sign and "Authorization" not in h:
            h["Authorization"] = self.sign(method, raw_path, list(query), h)
        target = raw_path
        if raw_query is not None:
            target += "?" + raw_query
        elif query:
            target += "?" + urllib.parse.urlencode(list(query))
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.putrequest(method, target, skip_accept_encoding=True)
            for k, v in h.items():
                connection.putheader(k, v)
            connection.endheaders()
            if body:
                connection.send(body)
            response = connection.getresponse()
            return Response(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            connection.close()
