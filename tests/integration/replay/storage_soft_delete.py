"""Soft-deleted shares and containers in the storage recordings: the recorded accounts whose tests
list deleted shares (containers) or undelete one had share (container) soft delete on; the
deleted shares and containers other tests left there are made (created and deleted) before a
recording; a deleted share's or container's version, which a later Undelete Share or Restore
Container names, is the emulator's once a listing has shown both."""
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


def container_soft_delete_accounts(exchanges):
    """The recorded accounts whose Blob requests show container soft delete: Restore Container,
    or List Containers with include=deleted."""
    out = set()
    for x in exchanges:
        params = x.params()
        if x.service != "blob":
            continue
        restores = params.get("restype") == "container" and params.get("comp") == "undelete"
        lists = not _segments(x) and params.get("comp") == "list" and "deleted" in params.get("include", "")
        if restores or lists:
            out.add(x.account)
    return out


def containers_deleted_by_others(exchanges):
    """(account, container, recent) of the deleted containers other tests left: those a listing
    shows that the recording did not delete (in the order first listed), and those whose first
    request the cloud answered ContainerBeingDeleted (another run had just deleted them: recent).
    A recent one is listed as still being deleted; the others as deleted for longer."""
    from .storage_compare import error_code
    out, seen, made_here = [], set(), set()
    listed = {}  # (account, container, recent) -> the most versions one listing showed
    for x in exchanges:
        segments = _segments(x)
        if x.service != "blob":
            continue
        if len(segments) == 1:
            key = (x.account, urllib.parse.unquote(segments[0]))
            if key not in seen and x.status == 409 and \
                    error_code(x.response_headers, x.response_body) == "ContainerBeingDeleted":
                out.append((key[0], key[1], True))
            seen.add(key)
            if x.method == "PUT" and x.status == 201 and x.params().get("restype") == "container":
                made_here.add(key)
        if segments or x.method != "GET" or x.params().get("comp") != "list" or x.status != 200:
            continue
        root = _listing(x.response_body)
        if root is None:
            continue
        counts = {}
        for item in root.iter("Container"):
            key = (x.account, item.findtext("Name"))
            if not is_deleted_item(item) or key in made_here or any(k[:2] == key for k in out):
                continue
            entry = (*key, item.findtext("Properties/LeaseState") == "leased")
            counts[entry] = counts.get(entry, 0) + 1
        for entry, count in counts.items():
            listed[entry] = max(listed.get(entry, 0), count)
    return out + [entry for entry, count in listed.items() for _ in range(count)]


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
    """Each deleted share's (container's) version in the cloud's listing -> the emulator's, by name
    and order."""
    cloud, mine = _listing(cloud_body or b""), _listing(emulator_body or b"")
    if cloud is None or mine is None:
        return

    def versions(root):
        found = {}
        for item in (*root.iter("Share"), *root.iter("Container")):
            if is_deleted_item(item) and item.findtext("Version"):
                found.setdefault(item.findtext("Name"), []).append(item.findtext("Version"))
        return found

    theirs, ours = versions(cloud), versions(mine)
    for name, listed in theirs.items():
        for c, e in zip(sorted(listed), sorted(ours.get(name, []))):
            if c != e:
                learned[c] = e
