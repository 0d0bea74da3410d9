"""Sends a recording's requests to the emulator in order and compares every answer with the
cloud's.

- The cloud's long-running-operation polls (GETs of an earlier answer's `Azure-AsyncOperation` or
  `Location` URL) poll the emulator's own operation instead, until it reaches the status the cloud's
  last poll showed.
- A run of identical GETs is a client's wait loop: it is one answer, polled until the emulator
  reaches the state of the cloud's last one (states, node counts, the status code).
- Storage data-plane requests go to the Blob/File endpoints, signed with the emulator's key for the
  account (or, for a URL a listOutputFiles answer gave, sent to the emulator's URL as it is).
- Requests made with values learned from earlier answers (a job's output path GUID, an operation
  id) name the emulator's values.
- A client follows a list's nextLink: the cloud's next page is asked at the nextLink the emulator
  gave in its place, and not at all where the emulator's page had none (the client would have
  stopped there; the pages after it are not counted).
"""
import json
import os
import re
import sys
import time
import urllib.parse
from dataclasses import dataclass, field

import requests

from . import cassette, java_bodies
from .compare import Difference, Learned, compare_answer
from .prepare import Arm, PreparationFailed, prepare, rewrite_keys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from raw_storage import RawClient  # noqa: E402

# The keys whose values say which state a resource, a list or an operation is in.
STATE_KEYS = {"provisioningState", "allocationState", "executionState", "currentNodeCount", "idleNodeCount",
              "runningNodeCount", "preparingNodeCount", "unusableNodeCount", "leavingNodeCount", "status"}
CLOUD_NODE_ADDRESS = re.compile(r"\b10\.0\.0\.\d{1,3}\b")
WAIT_LOOP_TIMEOUT = 15.0
SINGLE_GET_TIMEOUT = 2.0


@dataclass
class Step:
    recording: str
    index: int          # the recorded exchange whose answer was compared (the last of a run)
    first: int          # the first recorded exchange of the step
    method: str
    path: str           # as recorded, without the query
    counted: bool = True
    differences: list = field(default_factory=list)
    note: str = ""
    seconds: float = 0.0

    def where(self):
        return f"{self.recording}#{self.index}"


def play_recording(name, exchanges, prepare, play, failures):
    """Runs prepare(), then play(first, last, step, wait_loop) for each step of the recording
    (cassette.steps), timed; a request that got no answer is a difference of status, and a
    preparation that failed with one of `failures` the one step. The steps, in order."""
    try:
        prepare()
    except failures as e:
        step = Step(name, 0, 0, "-", "(preparation)")
        step.differences.append(Difference("status", "preparation", "made", str(e)[:1500]))
        return [step]
    out = []
    for x, last, wait_loop in cassette.steps(exchanges):
        step = Step(name, last.index, x.index, x.method, x.path)
        started = time.monotonic()
        try:
            play(x, last, step, wait_loop)
        except requests.RequestException as e:
            step.differences.append(Difference("status", "status", last.status, f"no answer: {e}"))
        step.seconds = time.monotonic() - started
        out.append(step)
    return out


def _state_differences(differences):
    """The differences that say the emulator has not reached the cloud's state yet. A state that
    differs only in case is reached (the September 2017 preview capitalised its states: a listed
    difference, which the comparison after the wait reports)."""
    def same_but_case(d):
        return d.kind == "value" and isinstance(d.cloud, str) and isinstance(d.emulator, str) and \
            d.cloud.lower() == d.emulator.lower()
    # A state key the emulator adds or lacks (the September 2017 preview had no leavingNodeCount)
    # is not a state to wait for: only values differ on the way.
    return [d for d in differences
            if d.kind == "status" or (d.kind == "value" and d.path.rsplit(".", 1)[-1].replace("[]", "") in STATE_KEYS
                                      and not same_but_case(d))]


class Player:
    def __init__(self, endpoints, recording_path, name, wait_loop_timeout=WAIT_LOOP_TIMEOUT):
        self.endpoints = endpoints
        self.name = name                       # folder/file
        self.wait_loop_timeout = wait_loop_timeout
        self.exchanges = cassette.load(recording_path)
        self.session = requests.Session()
        self.session.verify = endpoints["ca_cert"]
        self.session.trust_env = False  # REQUESTS_CA_BUNDLE would override verify
        self.arm = Arm(self.session, endpoints["arm"])
        self.learned = Learned()
        self.operations = {}                   # recorded LRO URL (normalized) -> (header, emulator URL)
        self.next_links = {}                   # the cloud's nextLink (normalized) -> the emulator's, or None
        self.prepared = None
        self.steps = []
        self.kept_headers = {h for x in self.exchanges if x.is_arm for h in x.response_headers}
        self.node_addresses = {}               # the cloud's node address -> the emulated node's

    # -- the run ---------------------------------------------------------------------------------
    def run(self):
        def prepared():
            self.prepared = prepare(self.arm, self._file_client, self.exchanges, self.name)
        self.steps = play_recording(self.name, self.exchanges, prepared, self._play,
                                    (PreparationFailed, requests.RequestException, KeyError, ValueError))
        return self.steps

    def _play(self, x, last, step, wait_loop):
        if x.is_arm:
            self._arm_step(x, last, step, wait_loop=wait_loop)
        elif x.storage_service:
            self._storage_step(x, step)
        else:
            step.counted = False
            step.note = "not an Azure endpoint"

    # -- ARM -------------------------------------------------------------------------------------
    @staticmethod
    def _normalized(url):
        parts = urllib.parse.urlsplit(url)
        return (parts.path.lower(), parts.query.lower())

    def _arm_step(self, x, last, step, wait_loop):
        key = self._normalized(x.url)
        if x.method == "GET" and key in self.operations:
            header, url = self.operations[key]
            if url is None:
                step.counted = False
                step.note = f"the emulator gave no {header} to poll"
                return
            self._poll(url, last, step, self.wait_loop_timeout)
            return
        url = self.endpoints["arm"] + self.learned.rewrite(x.path) + ("?" + x.query if x.query else "")
        if key in self.next_links:
            url = self.next_links[key]
            if url is None:
                step.counted = False
                step.note = "a next page after the emulator's last: a client stops at a page without nextLink"
                self._learn_next_link(last, None)
                return
        body = self._body(x)
        headers = {"Authorization": "Bearer replay-token"}
        if body is not None:
            headers["Content-Type"] = x.headers.get("content-type", "application/json; charset=utf-8")
        if x.method == "GET":
            answer = self._poll(url, last, step, self.wait_loop_timeout if wait_loop else SINGLE_GET_TIMEOUT)
            self._learn_next_link(last, answer)
            return
        answer = self.session.request(x.method, url, data=body, headers=headers, timeout=30)
        step.differences = self._compare(last, answer)
        self._learn_next_link(last, answer)
        for header in ("azure-asyncoperation", "location"):
            recorded = last.response_headers.get(header)
            if recorded:
                self.operations[self._normalized(recorded)] = (header, answer.headers.get(header))
        if x.path.lower().endswith("/listkeys") and answer.status_code == 200:
            self._learn_keys(last, answer)

    def _body(self, x):
        text = x.body
        if text is None and not x.body_recorded:
            text = java_bodies.rebuilt_body(os.path.basename(self.name), x, self.exchanges)
        if text is None:
            return None
        doc = cassette.json_or_none(text)
        if doc is None:
            return self.learned.rewrite(text).encode()
        doc = rewrite_keys(doc, self.prepared)
        return self._node_addresses(self.learned.rewrite(json.dumps(doc))).encode()

    def _node_addresses(self, text):
        """The cloud's node addresses in a job's command lines (the password-less ssh tests run
        `ssh 10.0.0.4 ...`): the emulated nodes' addresses in the same order, so that nothing
        leaves loopback."""
        cloud = sorted(set(CLOUD_NODE_ADDRESS.findall(text)), key=lambda a: int(a.rsplit(".", 1)[1]))
        if not cloud:
            return text
        nodes = self.session.get(self.endpoints["arm"] + "/emulator/nodes", timeout=30).json()["value"]
        addresses = sorted({n["ipAddress"] for n in nodes}, key=lambda a: [int(p) for p in a.split(".")])
        base = 4  # the cloud's first node was 10.0.0.4
        for address in cloud:
            k = int(address.rsplit(".", 1)[1]) - base
            local = addresses[k] if 0 <= k < len(addresses) else "127.255.255.254"
            self.node_addresses[address] = local
            text = re.sub(rf"\b{re.escape(address)}\b", local, text)
        return text

    def _poll(self, url, last, step, timeout):
        deadline = time.monotonic() + timeout
        while True:
            answer = self.session.get(url, headers={"Authorization": "Bearer replay-token"}, timeout=30)
            differences = self._compare(last, answer, learn=False)
            if not _state_differences(differences) or time.monotonic() > deadline:
                step.differences = self._compare(last, answer)
                return answer
            time.sleep(0.05)

    def _learn_next_link(self, recorded, answer):
        """Pairs the cloud's nextLink with the emulator's (None: the emulator's page had none)."""
        cloud = (cassette.json_or_none(recorded.response_body) or {})
        if not isinstance(cloud, dict) or not isinstance(cloud.get("nextLink"), str):
            return
        mine = (cassette.json_or_none(answer.text) or {}) if answer is not None else {}
        link = mine.get("nextLink") if isinstance(mine, dict) else None
        self.next_links[self._normalized(cloud["nextLink"])] = link if isinstance(link, str) else None

    def _compare(self, recorded, answer, learn=True):
        return compare_answer(recorded, answer, self.learned if learn else None, self.kept_headers)

    def _learn_keys(self, recorded, answer):
        cloud = {k.get("keyName"): k.get("value") for k in (cassette.json_or_none(recorded.response_body) or {}).get("keys", [])}
        for k in answer.json().get("keys", []):
            if cloud.get(k.get("keyName")):
                self.prepared.cloud_keys[cloud[k["keyName"]]] = k["value"]
        account = recorded.path.split("/storageAccounts/")[-1].split("/")[0].lower()
        if "key1" in cloud:
            self.prepared.keys[account] = self.prepared.cloud_keys.get(cloud["key1"])

    # -- storage ---------------------------------------------------------------------------------
    def _file_client(self, account, key, service="file"):
        return RawClient(self.endpoints[service], account=account, key=key, version="2017-04-17")

    def _storage_step(self, x, step):
        service, account = x.storage_service
        base = x.url.split("?")[0]
        headers = {k: v for k, v in x.headers.items()
                   if k.startswith("x-ms-") and k not in ("x-ms-date", "x-ms-version", "x-ms-client-request-id")}
        for name in ("content-type", "range"):
            if name in x.headers:
                headers[name] = x.headers[name]
        if base in self.learned.urls:
            answer = self.session.request(x.method, self.learned.urls[base], headers=headers, timeout=30)
            status, body = answer.status_code, answer.content
        else:
            key = self.prepared.keys.get(account.lower())
            if key is None:
                step.counted = False
                step.note = f"no key for storage account {account}"
                return
            client = self._file_client(account, key, service)
            data = (x.body or "").encode()
            query = urllib.parse.parse_qsl(x.query, keep_blank_values=True)
            path = "/" + account + self.learned.rewrite(x.path)
            r = client.request(x.method, path, query, body=data, headers=headers, raw_query=x.query or None)
            status, body = r.status, r.body
        if status != x.status:
            step.differences.append(Difference("status", "status", x.status, status))
        elif x.method == "GET" and "xml" not in x.response_headers.get("content-type", "xml"):
            cloud_body = x.response_body.encode()
            # What a job wrote about the nodes it reached names the emulated nodes' addresses.
            for cloud_address, local in self.node_addresses.items():
                body = re.sub(rb"\b" + re.escape(local.encode()) + rb"\b", cloud_address.encode(), body)
            if cloud_body != body:
                step.differences.append(Difference("value", "(content)", x.response_body[:200],
                                                   body[:200].decode("utf-8", "replace")))
