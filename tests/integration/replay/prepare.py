"""What the recorded tests' preparers made before recording, made again on the emulator.

The Python SDK tests made their resource group and storage account (ResourceGroupPreparer,
StorageAccountPreparer), the share `share` in it, the workspace `workspace` and, for the job tests,
the cluster the jobs run on (tests/helpers.py: STANDARD_D1, low priority, the share mounted at
`azfiles`, user demoUser). None of that is in the recordings; everything is read from them: the
names, the location, the cluster ids the jobs name, the node counts they ask for.
"""
import json
import re
import time

from .cassette import json_or_none

GROUP = re.compile(r"/subscriptions/([^/]+)/resourcegroups/([^/?]+)", re.I)
STORAGE_HOST = re.compile(r"https?://([a-z0-9]{3,24})\.(?:file|blob)\.core\.windows\.net", re.I)
LOCATION = re.compile(r"/locations/([^/]+)/", re.I)
BATCHAI = "Microsoft.BatchAI"


class PreparationFailed(Exception):
    pass


class Arm:
    """Raw calls to the emulator's ARM endpoint (requests, trusting its certificate)."""

    def __init__(self, session, base):
        self.session, self.base = session, base

    def call(self, method, path, body=None, api_version=None):
        url = self.base + path
        if api_version:
            url += ("&" if "?" in url else "?") + "api-version=" + api_version
        data = json.dumps(body) if body is not None else None
        headers = {"Authorization": "Bearer replay-token"}
        if data is not None:
            headers["Content-Type"] = "application/json; charset=utf-8"
        return self.session.request(method, url, data=data, headers=headers, timeout=30)

    def wait_operation(self, response, timeout=30):
        """Polls a 202's operation to its end; returns the last answer."""
        url = response.headers.get("Azure-AsyncOperation") or response.headers.get("Location")
        if response.status_code != 202 or not url:
            return response
        deadline = time.monotonic() + timeout
        while True:
            answer = self.session.get(url, headers={"Authorization": "Bearer replay-token"}, timeout=30)
            doc = json_or_none(answer.text) or {}
            if answer.status_code != 202 and doc.get("status") not in ("InProgress", "Accepted"):
                return answer
            if time.monotonic() > deadline:
                raise PreparationFailed(f"operation {url} did not end in {timeout} s")
            time.sleep(0.05)


def _bodies(exchanges):
    for x in exchanges:
        doc = json_or_none(x.body)
        if doc is not None:
            yield x, doc


def _walk(doc):
    if isinstance(doc, dict):
        yield doc
        for v in doc.values():
            yield from _walk(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _walk(v)


def _unknown_subscription(exchanges):
    """Whether the recording's test ran against a subscription the cloud did not know (its first
    answer says SubscriptionNotFound): nothing is made there first."""
    for x in exchanges:
        if x.is_arm:
            return x.status == 404 and "SubscriptionNotFound" in x.response_body
    return False


def location_of(exchanges):
    for _, doc in _bodies(exchanges):
        if isinstance(doc, dict) and isinstance(doc.get("location"), str):
            return doc["location"]
    for x in exchanges:
        m = LOCATION.search(x.path)
        if m:
            return m.group(1)
    return "northeurope"


def batchai_version(exchanges):
    for x in exchanges:
        if BATCHAI.lower() in x.path.lower() and x.api_version():
            return x.api_version()
    return "2018-05-01"


def _recorded_resource(exchanges, pattern):
    """The last resource document the cloud answered for a path matching `pattern`: a GET of it,
    or its element in a list; None if the recording shows none."""
    rx = re.compile(pattern, re.I)
    found = None
    for x in exchanges:
        doc = json_or_none(x.response_body) if x.is_arm and x.status == 200 else None
        if not isinstance(doc, dict):
            continue
        items = doc["value"] if isinstance(doc.get("value"), list) else [doc]
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("id"), str) and rx.search(item["id"]):
                found = item
    return found


def _storage_version(exchanges):
    """The Microsoft.Storage api-version the recording's client spoke (2017-10-01 when none)."""
    for x in exchanges:
        if "/microsoft.storage/" in x.path.lower() and x.api_version():
            return x.api_version()
    return "2017-10-01"


def _created(exchanges, pattern):
    """Whether the recording itself PUTs a resource whose path matches pattern."""
    rx = re.compile(pattern, re.I)
    return any(x.method == "PUT" and rx.search(x.path) for x in exchanges if x.is_arm)


class Prepared:
    def __init__(self):
        self.keys = {}          # account -> the emulator's key
        self.cloud_keys = {}    # the cloud's key -> the emulator's
        self.location = None
        self.made = []          # what was made, for the report


# The job tests' ClusterPreparer arguments where they are not the default (as many nodes as the
# biggest job, waited for): tests/test_mgmt_batchai_jobs.py.
CLUSTER_PREPARERS = {
    "test_queued_job_termination": 0,       # ClusterPreparer(target_nodes=0, wait=False)
    "test_password_less_ssh": 2,
    "test_password_less_ssh_in_container": 2,
}


def _preparer_nodes(recording, default):
    test = recording.rsplit(".", 2)[-2] if recording.count(".") >= 2 else recording
    return CLUSTER_PREPARERS.get(test, default)


def prepare(arm, file_client_factory, exchanges, recording=""):
    """Makes the preparers' resources; returns Prepared."""
    out = Prepared()
    out.location = location_of(exchanges)
    groups = {}
    for x in exchanges:
        if x.is_arm:
            m = GROUP.search(x.path)
            if m:
                groups.setdefault(m.group(2).lower(), (m.group(1), m.group(2)))
    for key, (sub, name) in groups.items():
        if _created(exchanges, rf"/resourcegroups/{re.escape(name)}$") or _unknown_subscription(exchanges):
            continue
        # With the tags the recording shows on it (the az CLI's preparer tagged its groups).
        body = {"location": out.location}
        recorded = _recorded_resource(exchanges, rf"/resourcegroups/{re.escape(name)}$")
        if recorded and isinstance(recorded.get("tags"), dict):
            body["tags"] = recorded["tags"]
        r = arm.call("PUT", f"/subscriptions/{sub}/resourcegroups/{name}", body, "2017-05-10")
        if r.status_code not in (200, 201):
            raise PreparationFailed(f"resource group {name}: {r.status_code} {r.text[:200]}")
        out.made.append(f"resource group {name}")

    accounts = set()
    for x in exchanges:
        service = x.storage_service
        if service:
            accounts.add(service[1].lower())
    for _, doc in _bodies(exchanges):
        for node in _walk(doc):
            if isinstance(node.get("accountName"), str):
                accounts.add(node["accountName"].lower())
            for value in node.values():
                if isinstance(value, str):
                    for m in STORAGE_HOST.finditer(value):
                        accounts.add(m.group(1).lower())
    first_group = next(iter(groups.values()), None)
    if not accounts and first_group and _job_clusters_to_make(exchanges):
        # The job tests' StorageAccountPreparer named its account psdk + the suffix of the test's
        # group (the cluster tests' recordings show it: group ..._deletion4c3c15bb, psdk4c3c15bb).
        accounts.add("psdk" + first_group[1][-8:].lower())
    for account in sorted(accounts):
        if _created(exchanges, rf"/storageaccounts/{re.escape(account)}$"):
            continue
        if first_group is None:
            raise PreparationFailed("a storage account but no resource group to make it in")
        sub, group = first_group
        base = f"/subscriptions/{sub}/resourceGroups/{group}/providers/Microsoft.Storage/storageAccounts/{account}"
        # At the api-version the recording's client spoke (its default for supportsHttpsTrafficOnly
        # changed in 2019), with the flag the recorded account shows where it shows one.
        version = _storage_version(exchanges)
        body = {"sku": {"name": "Standard_LRS"}, "kind": "Storage", "location": out.location}
        recorded = _recorded_resource(exchanges, rf"/storageaccounts/{re.escape(account)}$")
        https_only = ((recorded or {}).get("properties") or {}).get("supportsHttpsTrafficOnly")
        if isinstance(https_only, bool):
            body["properties"] = {"supportsHttpsTrafficOnly": https_only}
        r = arm.wait_operation(arm.call("PUT", base, body, version))
        if r.status_code not in (200, 201):
            raise PreparationFailed(f"storage account {account}: {r.status_code} {r.text[:200]}")
        keys = arm.call("POST", base + "/listKeys", None, version).json()["keys"]
        out.keys[account] = keys[0]["value"]
        out.made.append(f"storage account {account}")
        if not any(x.method == "PUT" and x.storage_service == ("file", account) and "restype=share" in x.query
                   and x.path == "/share" for x in exchanges):
            code = file_client_factory(account, out.keys[account]).request(
                "PUT", f"/{account}/share", [("restype", "share")]).status
            if code not in (201, 409):
                raise PreparationFailed(f"share {account}/share: {code}")
            out.made.append(f"share {account}/share")
    _prepare_clusters(arm, exchanges, out, recording)
    _prepare_experiments(arm, exchanges)
    return out


def _prepare_experiments(arm, exchanges):
    """The experiment a 2018-05-01 job is created in, where the recording does not create it."""
    version = batchai_version(exchanges)
    for x in exchanges:
        m = re.search(r"^(.*/workspaces/[^/]+/experiments/[^/]+)/jobs/[^/]+$", x.path, re.I)
        if x.method == "PUT" and x.is_arm and m and not _created(exchanges, re.escape(m.group(1)) + "$"):
            r = arm.call("PUT", m.group(1), {}, version)
            if r.status_code not in (200, 201):
                raise PreparationFailed(f"experiment {m.group(1)}: {r.status_code} {r.text[:200]}")
            return


def _prepare_clusters(arm, exchanges, out, recording):
    """The cluster the job tests' ClusterPreparer made: one per cluster id the jobs name that the
    recording does not create, with as many nodes as its biggest job needs."""
    version = batchai_version(exchanges)
    for cluster_id, nodes in _job_clusters_to_make(exchanges).items():
        _make_cluster(arm, out, version, cluster_id, _preparer_nodes(recording, nodes))


def _job_clusters_to_make(exchanges):
    """{cluster id: nodes} for the clusters the jobs name that the recording does not create."""
    wanted = {}
    for x, doc in _bodies(exchanges):
        if x.method != "PUT" or "/jobs/" not in x.path.lower():
            continue
        props = doc.get("properties") or {}
        cluster = (props.get("cluster") or {}).get("id")
        if isinstance(cluster, str):
            wanted[cluster] = max(wanted.get(cluster, 1), int(props.get("nodeCount") or 1))
    return {c: n for c, n in wanted.items()
            if not _created(exchanges, re.escape(c.split("/subscriptions/")[-1]) + "$")}


def _make_cluster(arm, out, version, cluster_id, nodes):
    account = next(iter(out.keys), None)
    if account is None:
        raise PreparationFailed(f"cluster {cluster_id}: no storage account to mount")
    mount = {"azureFileUrl": f"https://{account}.file.core.windows.net/share", "relativeMountPath": "azfiles",
             "accountName": account, "credentials": {"accountKey": out.keys[account]}}
    props = {"vmSize": "STANDARD_D1", "vmPriority": "lowpriority",
             "scaleSettings": {"manual": {"targetNodeCount": nodes}},
             "nodeSetup": {"mountVolumes": {"azureFileShares": [mount]}},
             "userAccountSettings": {"adminUserName": "demoUser", "adminUserPassword": "Dem0Pa$$w0rd"}}
    body = {"properties": props}
    if "/workspaces/" in cluster_id.lower():
        workspace = cluster_id[:cluster_id.lower().index("/clusters/")]
        r = arm.call("PUT", workspace, {"location": out.location}, version)
        if r.status_code not in (200, 201):
            raise PreparationFailed(f"workspace {workspace}: {r.status_code} {r.text[:200]}")
    else:
        body["location"] = out.location
    r = arm.wait_operation(arm.call("PUT", cluster_id, body, version))
    if r.status_code != 200:
        raise PreparationFailed(f"cluster {cluster_id}: {r.status_code} {r.text[:300]}")
    deadline = time.monotonic() + 30
    while True:
        doc = arm.call("GET", cluster_id, None, version).json()
        counts = doc.get("properties", {}).get("nodeStateCounts", {})
        if counts.get("idleNodeCount") == nodes:
            break
        if time.monotonic() > deadline:
            raise PreparationFailed(f"cluster {cluster_id}: {nodes} idle nodes not reached: {counts}")
        time.sleep(0.05)
    out.made.append(f"cluster {cluster_id.rsplit('/', 1)[-1]} ({nodes} nodes)")


def rewrite_keys(doc, prepared):
    """Storage keys in a request body: the cloud's replaced by the emulator's for that account."""
    for node in _walk(doc):
        for holder in ("credentials", "credentialsInfo"):
            creds = node.get(holder)
            if isinstance(creds, dict) and isinstance(creds.get("accountKey"), str):
                account = str(node.get("accountName") or "").lower()
                cloud = creds["accountKey"]
                if cloud in prepared.cloud_keys:
                    creds["accountKey"] = prepared.cloud_keys[cloud]
                elif account in prepared.keys:
                    creds["accountKey"] = prepared.keys[account]
    return doc
