"""Soft-deleted shares in the storage recordings: the recorded accounts whose tests list deleted
shares or undelete one had share soft delete on; the deleted shares other tests left there are
made (created and deleted) before a recording; a deleted share's version, which a later Undelete
Share names, is the emulator's once a listing has shown both."""
import urllib.parse
import xml.etree.ElementTree as ET


def _segments(x):
    return [s for s in x.path.split("/") if s]


def _listing(body):
    try:
        return ET.fromstring(body.lstrip(b"\xef\xbb\xbf"))
    except ET.ParseError:
        return None


def soft_delete_accounts(exchanges):
    """The recorded accounts whose File requests show share soft delete."""
    out = set()
    for x in exchanges:
        params = x.params()
        if x.service == "file" and (params.get("comp") == "undelete" or
                                    (params.get("comp") == "list" and "deleted" in params.get("include", ""))):
            out.add(x.account)
    return out


def deleted_by_others(exchanges):
    """(account, share) of the deleted shares a listing shows that the recording did not delete
    before it (another test's), in the order first listed."""
    out, deleted_here = [], set()
    for x in exchanges:
        segments = _segments(x)
        if x.service != "file":
            continue
        if x.method == "DELETE" and len(segments) == 1 and x.status == 202:
            deleted_here.add((x.account, urllib.parse.unquote(segments[0])))
        if segments or x.method != "GET" or x.params().get("comp") != "list" or x.status != 200:
            continue
        root = _listing(x.response_body)
        if root is None:
            continue
        for item in root.iter("Share"):
            key = (x.account, item.findtext("Name"))
            if item.findtext("Deleted") == "true" and key not in deleted_here and key not in out:
                out.append(key)
    return out


def is_deleted_item(item):
    return item.findtext("Deleted") == "true"


def learn_versions(cloud_body, emulator_body, learned):
    """Each deleted share's version in the cloud's listing -> the emulator's, by name and order."""
    cloud, mine = _listing(cloud_body or b""), _listing(emulator_body or b"")
    if cloud is None or mine is None:
        return

    def versions(root):
        found = {}
        for item in root.iter("Share"):
            if is_deleted_item(item) and item.findtext("Version"):
                found.setdefault(item.findtext("Name"), []).append(item.findtext("Version"))
        return found

    theirs, ours = versions(cloud), versions(mine)
    for name, listed in theirs.items():
        for c, e in zip(sorted(listed), sorted(ours.get(name, []))):
            if c != e:
                learned[c] = e
