"""Signing a recorded storage request again for the emulator's account: SharedKey over the request
as sent, and a recorded SAS re-signed as a SAS of the same fields with the emulator's key (its
times moved by as long as has passed since the recording, so that a SAS valid for an hour then is
valid for an hour now, and one that had expired has expired).

String-to-sign formats of the versions recorded (2018-11-09 to 2020-04-08), from the service's
"Create an account SAS" and "Create a service SAS" pages.
"""
import base64
import datetime
import hashlib
import hmac
import urllib.parse

SAS_TIMES = ("st", "se")


def _sign(key, text):
    return base64.b64encode(hmac.new(base64.b64decode(key), text.encode("utf-8"), hashlib.sha256).digest()).decode()


def shifted_time(value, delta):
    """An ISO 8601 time (a SAS's st/se) moved by delta seconds; None when it is not one."""
    text = value.strip()
    for layout in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%MZ", "%Y-%m-%d"):
        try:
            when = datetime.datetime.strptime(text, layout).replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            continue
        return (when + datetime.timedelta(seconds=delta)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def shifted_http_date(value, delta):
    """An RFC 1123 date (If-Modified-Since and the like) moved by delta seconds."""
    import email.utils
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return value
    return email.utils.format_datetime(when + datetime.timedelta(seconds=delta), usegmt=True)


def sas_string_to_sign(service, account, path, fields):
    """service: blob | file; path: the decoded path after the account (`/share/dir/file`);
    fields: the SAS's query fields (decoded)."""
    f = lambda name: fields.get(name, "")  # noqa: E731
    if "ss" in fields:  # an account SAS
        return "\n".join([account, f("sp"), f("ss"), f("srt"), f("st"), f("se"), f("sip"), f("spr"), f("sv")]) + "\n"
    segments = [s for s in path.split("/") if s]
    sr = f("sr")
    if sr in ("c", "s"):
        segments = segments[:1]
    resource = f"/{service}/{account}/" + "/".join(segments)
    lines = [f("sp"), f("st"), f("se"), resource, f("si"), f("sip"), f("spr"), f("sv")]
    if service == "blob" and f("sv") >= "2018-11-09":
        stamp = fields.get("versionid", "") if sr == "bv" else fields.get("snapshot", "") if sr == "bs" else ""
        lines += [sr, stamp]
    lines += [f("rscc"), f("rscd"), f("rsce"), f("rscl"), f("rsct")]
    return "\n".join(lines)


def resign_sas_query(service, account, key, path, raw_query, delta):
    """The raw query with its SAS's st/se moved by delta and sig made with key; the other fields
    as they were sent, in their order."""
    pairs = [p.split("=", 1) if "=" in p else [p, None] for p in raw_query.split("&") if p != ""]
    decoded = {k.lower(): urllib.parse.unquote_plus(v or "") for k, v in pairs}
    fields = dict(decoded)
    for name in SAS_TIMES:
        if name in fields:
            moved = shifted_time(fields[name], delta)
            if moved:
                fields[name] = moved
    fields["sig"] = _sign(key, sas_string_to_sign(service, account, urllib.parse.unquote(path), fields))
    out = []
    for k, v in pairs:
        name = k.lower()
        if name in SAS_TIMES or name == "sig":
            out.append(f"{k}={urllib.parse.quote(fields[name], safe='')}")
        else:
            out.append(k if v is None else f"{k}={v}")
    return "&".join(out)


def is_sas(raw_query):
    return any(p.lower().startswith("sig=") for p in raw_query.split("&"))
