"""Replays a recording of the azure-batch SDK's tests (the Batch data plane) against the
emulator's Batch endpoint and compares every answer with the cloud's.

- What the tests' preparers made before recording is made first, as batch_preparers.py made it:
  the pools a recording uses but does not add (as the cloud's first answer about the pool shows
  it, else standard_d2_v2 on Ubuntu 18.04 (or cloudServiceConfiguration where the cloud's nodes had
  its RDP forwarder) with a task-user account; as many dedicated nodes as the
  cloud's first node list of the pool showed) and the jobs it uses
  but does not add (on the recording's one pool, or an auto pool on cloudServiceConfiguration as
  the preparer's default). The cloud's node ids are paired with the emulated nodes' in order.
- Requests go to the emulator's Batch endpoint signed with devbatchaccount1's key, with the
  recorded body and conditional headers, the cloud's node ids replaced by the emulator's.
- A run of identical GETs is a client's wait loop: polled until the emulator reaches the state of
  the cloud's last answer (or a timeout); a single GET is polled briefly the same way.
"""
import json
import re
import time
import urllib.parse

import requests
from azure.batch.batch_auth import SharedKeyAuth

from . import cassette
from .compare import Difference, Learned, compare_answer
from .player import play_recording

DEV_ACCOUNT = "devbatchaccount1"
DEV_KEY = "QmF0Y2hFbXVsYXRvckRldkFjY291bnRLZXktbm90LWEtc2VjcmV0LWxvb3BiYWNrLW9ubHktMDAwMDAwMDAwMA=="
# The headers a Batch client reads: compared by presence, URLs masked, content-type as is.
HEADERS = ("request-id", "etag", "last-modified", "location", "dataserviceid", "content-type", "dataserviceversion")
STATE_KEYS = {"state", "allocationState", "currentDedicatedNodes", "currentLowPriorityNodes", "schedulingState",
              "startTaskInfo.state"}
SENT_HEADERS = ("content-type", "if-match", "if-none-match", "if-modified-since", "if-unmodified-since", "range")
POOL_PATH = re.compile(r"^/pools/([^/]+)")
JOB_PATH = re.compile(r"^/jobs/([^/]+)")
WAIT_LOOP_TIMEOUT = 15.0
SINGLE_GET_TIMEOUT = 2.0


class PreparationFailed(Exception):
    pass


def _decoded(path):
    return urllib.parse.unquote(path)


def _json(text):
    doc = cassette.json_or_none(text)
    return doc if isinstance(doc, dict) else {}


class BatchPlayer:
    def __init__(self, endpoints, recording_path, name, wait_loop_timeout=WAIT_LOOP_TIMEOUT):
        self.base = endpoints["batch"]
        self.name = name
        self.wait_loop_timeout = wait_loop_timeout
        self.exchanges = cassette.load(recording_path)
        self.session = requests.Session()
        self.session.trust_env = False
        self.auth = SharedKeyAuth("authorization", DEV_ACCOUNT, DEV_KEY)
        self.learned = Learned()
        self.steps = []

    # -- preparation -----------------------------------------------------------------------------
    def _send(self, method, path, body=None, headers=None):
        sent = {"Content-Type": "application/json; odata=minimalmetadata; charset=utf-8"} if body is not None else {}
        sent.update(headers or {})
        separator = "&" if "?" in path else "?"
        url = f"{self.base}{path}{separator}api-version=2022-10-01.16.0" if "api-version=" not in path else self.base + path
        data = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
        return self.session.request(method, url, data=data, headers=sent, auth=self.auth, timeout=30)

    def _used(self, pattern, add_path):
        added = {_json(x.body).get("id") for x in self.exchanges
                 if x.method == "POST" and x.path == add_path and x.status == 201}
        used = []
        for x in self.exchanges:
            m = pattern.match(_decoded(x.path))
            if m and m.group(1) not in added and m.group(1) not in used:
                used.append(m.group(1))
        return used

    def _cloud_nodes(self, pool_id):
        """The node ids of the cloud's first node list of the pool, in order (None: no list)."""
        for x in self.exchanges:
            if x.method == "GET" and _decoded(x.path) == f"/pools/{pool_id}/nodes" and x.status == 200:
                return [n.get("id") for n in _json(x.response_body).get("value", [])]
        return None

    def _pool_size(self, pool_id):
        nodes = self._cloud_nodes(pool_id)
        if nodes is not None:
            return len(nodes)
        for x in self.exchanges:
            if x.method == "GET" and _decoded(x.path) == f"/pools/{pool_id}" and x.status == 200:
                return int(_json(x.response_body).get("currentDedicatedNodes") or 0)
        return 0

    def _recorded_pool(self, pool_id):
        """The cloud's first answer to a GET of the pool; else what its nodes show of it (their
        vmSize), or {}."""
        for x in self.exchanges:
            if x.method == "GET" and _decoded(x.path) == f"/pools/{pool_id}" and x.status == 200:
                return _json(x.response_body)
        for x in self.exchanges:
            if x.method == "GET" and _decoded(x.path) == f"/pools/{pool_id}/nodes" and x.status == 200:
                nodes = _json(x.response_body).get("value") or [{}]
                shown = {"vmSize": nodes[0]["vmSize"]} if "vmSize" in nodes[0] else {}
                # A node reached through the cloud service's RDP forwarder is a cloudServiceConfiguration pool's.
                endpoints = (nodes[0].get("endpointConfiguration") or {}).get("inboundEndpoints") or []
                if any("RemoteForwarder" in e.get("name", "") for e in endpoints):
                    shown["cloudServiceConfiguration"] = {"osFamily": "5"}
                return shown
        return {}

    def _prepare(self):
        pools = self._used(POOL_PATH, "/pools")
        for pool_id in pools:
            size = self._pool_size(pool_id)
            # The preparer's pool, in the shape the cloud showed it where a GET of it was recorded
            # (the preparer changed over the years); passwords are never shown: the preparer's.
            recorded = self._recorded_pool(pool_id)
            body = {"id": pool_id, "displayName": recorded.get("displayName", "test_pool"),
                    "vmSize": recorded.get("vmSize", "standard_d2_v2"),
                    "virtualMachineConfiguration": recorded.get("virtualMachineConfiguration", {
                        "imageReference": {"publisher": "Canonical", "offer": "UbuntuServer", "sku": "18.04-LTS"},
                        "nodeAgentSKUId": "batch.node.ubuntu 18.04"}),
                    "userAccounts": [dict(u, password="kt#_gahr!@aGERDXA")
                                     for u in recorded.get("userAccounts", [{"name": "task-user",
                                                                             "elevationLevel": "admin"}])],
                    "targetDedicatedNodes": size}
            if "cloudServiceConfiguration" in recorded:
                del body["virtualMachineConfiguration"]
                body["cloudServiceConfiguration"] = recorded["cloudServiceConfiguration"]
            answer = self._send("POST", "/pools", body)
            if answer.status_code != 201:
                raise PreparationFailed(f"pool {pool_id}: {answer.status_code} {answer.text[:500]}")
            self._wait_for_nodes(pool_id, size)
        for job_id in self._used(JOB_PATH, "/jobs"):
            if len(pools) == 1:
                pool_info = {"poolId": pools[0]}
            else:
                pool_info = {"autoPoolSpecification": {"poolLifetimeOption": "job", "pool": {
                    "vmSize": "small", "cloudServiceConfiguration": {"osFamily": "5"}}}}
            answer = self._send("POST", "/jobs", {"id": job_id, "poolInfo": pool_info})
            if answer.status_code != 201:
                raise PreparationFailed(f"job {job_id}: {answer.status_code} {answer.text[:500]}")

    def _wait_for_nodes(self, pool_id, size, timeout=30.0):
        deadline = time.monotonic() + timeout
        while True:
            nodes = self._send("GET", f"/pools/{pool_id}/nodes").json().get("value", [])
            if len(nodes) == size and all(n.get("state") == "idle" for n in nodes):
                break
            if time.monotonic() > deadline:
                raise PreparationFailed(f"pool {pool_id}: {len(nodes)} of {size} nodes idle after {timeout:.0f} s")
            time.sleep(0.1)
        cloud = self._cloud_nodes(pool_id) or []
        for cloud_id, node in zip(cloud, nodes):
            self.learned.names.setdefault(cloud_id, node["id"])

    # -- the run ---------------------------------------------------------------------------------
    def run(self):
        self.steps = play_recording(self.name, self.exchanges, self._prepare, self._step,
                                    (PreparationFailed, requests.RequestException, ValueError))
        return self.steps

    def _step(self, x, last, step, wait_loop):
        path = self.learned.rewrite(x.path) + ("?" + x.query if x.query else "")
        headers = {name: x.headers[name] for name in SENT_HEADERS if name in x.headers}
        headers.update({k: v for k, v in x.headers.items() if k.startswith("ocp-") and k != "ocp-date"})
        body = None if x.body is None else self.learned.rewrite(x.body).encode()
        if x.method in ("GET", "HEAD"):
            timeout = self.wait_loop_timeout if wait_loop else SINGLE_GET_TIMEOUT
            deadline = time.monotonic() + timeout
            while True:
                answer = self._send(x.method, path, headers=headers)
                differences = self._compare(last, answer, learn=False)
                if not self._state_differences(differences) or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        else:
            answer = self._send(x.method, path, body=body, headers=headers)
        step.differences = self._compare(last, answer)

    @staticmethod
    def _state_differences(differences):
        return [d for d in differences
                if d.kind == "status" or (d.kind == "value" and d.path.replace("[]", "").rsplit(".", 1)[-1] in STATE_KEYS)]

    def _compare(self, recorded, answer, learn=True):
        out = compare_answer(recorded, answer, self.learned if learn else None, kept=HEADERS, names=HEADERS)
        # A file's content (not JSON) is compared as it is.
        if (recorded.status == answer.status_code and recorded.method == "GET"
                and cassette.json_or_none(recorded.response_body) is None
                and cassette.json_or_none(answer.text) is None and recorded.response_body != answer.text):
            out.append(Difference("value", "(content)", recorded.response_body[:200], answer.text[:200]))
        return out
