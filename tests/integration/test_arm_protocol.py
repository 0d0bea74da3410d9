"""The ARM wire protocol with raw HTTPS requests: LRO headers and operation documents going
InProgress -> Succeeded, resource headers, paging links, the 2017-09-01-preview flat API on the
shared model, and persistence across a restart."""
import time
import unittest

import requests

import harness

SUB = harness.SUBSCRIPTION
RG = "rg-proto"
PROVIDER = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.BatchAI"
PREVIEW = "2017-09-01-preview"
AUTH = {"Authorization": "Bearer emulator-token"}

# Clusters without nodes: these tests look at the API's side, and their jobs stay queued.
CLUSTER_2018 = {"properties": {"vmSize": "STANDARD_NC6", "scaleSettings": {"manual": {"targetNodeCount": 0}},
                               "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "Pw-123456"}}}
CLUSTER_PREVIEW = {"location": "westus2", "tags": {"kind": "flat"},
                   "properties": {"vmSize": "STANDARD_NC6", "scaleSettings": {"manual": {"targetNodeCount": 0}},
                                  "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "Pw-123456"}}}


def job_body(cluster_id, **extra):
    body = {"properties": {"cluster": {"id": cluster_id}, "nodeCount": 1, "stdOutErrPathPrefix": "/tmp",
                           "customToolkitSettings": {"commandLine": "echo hi"}}}
    body["properties"].update(extra)
    return body


class ArmProtocolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator(args=["--lro-delay", "400"]).start()
        cls.ep = cls.emu.endpoints
        r = harness.arm_call(cls.ep, "PUT", f"/subscriptions/{SUB}/resourcegroups/{RG}", {"location": "westus2"},
                             api_version="2021-04-01")
        assert r.status_code == 201, r.text

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert code == 0, f"emulator exited with {code}"

    def call(self, method, path, body=None, api_version="2018-05-01"):
        return harness.arm_call(self.ep, method, path, body, api_version=api_version)

    def ensure_workspace(self, name="ws"):
        r = self.call("PUT", f"{PROVIDER}/workspaces/{name}", {"location": "westus2"})
        self.assertEqual(r.status_code, 200, r.text)
        return r.json()

    def test_long_running_create_goes_in_progress_then_succeeded(self):
        self.ensure_workspace()
        r = self.call("PUT", f"{PROVIDER}/workspaces/ws/clusters/lro", CLUSTER_2018)
        self.assertEqual(r.status_code, 202)
        self.assertEqual(r.content, b"")
        self.assertEqual(r.headers["Retry-After"], "1")
        async_url = r.headers["Azure-AsyncOperation"]
        self.assertTrue(async_url.startswith(self.ep["arm"] + f"/subscriptions/{SUB}/providers/Microsoft.BatchAI/locations/westus2/operationresults/"))
        self.assertIn("/operationstatuses/", r.headers["Location"])
        first_answer = requests.get(async_url, headers=AUTH, verify=self.ep["ca_cert"])
        first = first_answer.json()
        self.assertEqual(first["status"], "InProgress")
        # Every "come back" carries Retry-After: without it azure-core waits 30 s.
        self.assertEqual(first_answer.headers["Retry-After"], "1")
        self.assertIn("startTime", first)
        self.assertNotIn("endTime", first)
        in_progress = requests.get(r.headers["Location"], headers=AUTH, verify=self.ep["ca_cert"])
        self.assertEqual((in_progress.status_code, in_progress.headers["Retry-After"]), (202, "1"))
        creating = self.call("GET", f"{PROVIDER}/workspaces/ws/clusters/lro").json()
        self.assertEqual(creating["properties"]["provisioningState"], "creating")
        final = harness.wait_for_operation(self.ep, r)
        self.assertEqual(final["status"], "Succeeded")
        self.assertEqual(final["properties"]["resourceId"], f"{SUB}${RG}$ws$lro")
        self.assertEqual(final["name"], async_url.split("/")[-1].split("?")[0])
        self.assertIn("endTime", final)
        done = requests.get(r.headers["Location"], headers=AUTH, verify=self.ep["ca_cert"])
        self.assertEqual(done.status_code, 200)
        self.assertNotIn("Retry-After", done.headers)
        cluster = self.call("GET", f"{PROVIDER}/workspaces/ws/clusters/lro")
        self.assertEqual(cluster.json()["properties"]["provisioningState"], "succeeded")
        self.assertNotIn("adminUserPassword", cluster.text)

    def test_requests_without_a_bearer_token_are_refused_as_arm_refuses_them(self):
        self.ensure_workspace()
        url = self.ep["arm"] + f"{PROVIDER}/workspaces/ws?api-version=2018-05-01"
        missing = "Authentication failed. The 'Authorization' header is missing."
        malformed = "Authentication failed. The 'Authorization' header is provided in an invalid format."
        cases = [(None, "AuthenticationFailed", missing),
                 ("", "AuthenticationFailed", missing),
                 ("Bearer", "AuthenticationFailed", malformed),
                 ("Bearer   ", "AuthenticationFailed", malformed),
                 ("Basic dXNlcjpwYXNz", "AuthenticationFailed", malformed),
                 ("SharedKey devstoreaccount1:abc=", "AuthenticationFailed", malformed),
                 ("Bearer two words", "InvalidAuthenticationToken", "The access token is invalid."),
                 ("Bearer a\u00e9b", "InvalidAuthenticationToken", "The access token is invalid.")]
        for header, code, message in cases:
            for method in ("GET", "PUT", "DELETE"):
                headers = {} if header is None else {"Authorization": header.encode("utf-8").decode("latin-1")}
                r = requests.request(method, url, headers=headers, json={"location": "westus2"} if method == "PUT" else None,
                                     verify=self.ep["ca_cert"])
                self.assertEqual(r.status_code, 401, (header, method, r.text))
                self.assertEqual(r.json()["error"]["code"], code, (header, method))
                self.assertEqual(r.json()["error"]["message"], message, (header, method))
                self.assertIn('Bearer authorization_uri=', r.headers["WWW-Authenticate"])
        # Refused before routing: an unknown path or a missing api-version is still a 401.
        r = requests.get(self.ep["arm"] + "/subscriptions/x/nothing", verify=self.ep["ca_cert"])
        self.assertEqual(r.status_code, 401)
        # Nothing the refused requests asked for happened: the workspace is still there.
        self.assertEqual(self.call("GET", f"{PROVIDER}/workspaces/ws").status_code, 200)
        # The emulator's own routes and the health check take no token.
        self.assertEqual(requests.get(self.ep["arm"] + "/health", verify=self.ep["ca_cert"]).status_code, 200)
        lower = requests.get(url, headers={"Authorization": "bearer token.with-dots_and~="}, verify=self.ep["ca_cert"])
        self.assertEqual(lower.status_code, 200, lower.text)

    def test_resource_headers_and_etag_changes(self):
        self.ensure_workspace()
        r = self.call("GET", f"{PROVIDER}/workspaces/ws")
        self.assertEqual(r.status_code, 200)
        self.assertTrue(r.headers["ETag"].startswith('"0x'))
        self.assertTrue(r.headers["Last-Modified"].endswith("GMT"))
        self.assertEqual(len(r.headers["x-ms-request-id"]), 36)
        self.assertTrue(r.headers["Content-Type"].startswith("application/json"))
        patched = self.call("PATCH", f"{PROVIDER}/workspaces/ws", {"tags": {"v": "2"}})
        self.assertEqual(patched.status_code, 200)
        self.assertNotEqual(patched.headers["ETag"], r.headers["ETag"])

    def test_the_2018_05_01_api_answers_as_the_service_did_in_2021(self):
        created = self.ensure_workspace("era")
        self.assertNotIn("etag", created)  # the PUT's answer had none (July 2021)
        got = self.call("GET", f"{PROVIDER}/workspaces/era")
        self.assertEqual(got.json()["etag"], got.headers["ETag"])
        listed = self.call("GET", f"{PROVIDER}/workspaces").json()["value"]
        self.assertTrue(all("etag" in w for w in listed), listed)
        r = self.call("PUT", f"{PROVIDER}/workspaces/era/clusters/c", CLUSTER_2018)
        harness.wait_for_operation(self.ep, r)
        cluster = self.call("GET", f"{PROVIDER}/workspaces/era/clusters/c")
        doc = cluster.json()
        self.assertEqual((doc["location"], doc["etag"]), ("westus2", cluster.headers["ETag"]))
        self.assertEqual(doc["properties"]["virtualMachineConfiguration"]["imageReference"],
                         {"publisher": "microsoft-dsvm", "offer": "amlcompute", "sku": "runtime-gen1-ubuntu18",
                          "version": "latest", "minVersion": ""})
        given = dict(CLUSTER_2018, properties=dict(CLUSTER_2018["properties"], virtualMachineConfiguration={
            "imageReference": {"publisher": "Canonical", "offer": "UbuntuServer", "sku": "16.04-LTS"}}))
        harness.wait_for_operation(self.ep, self.call("PUT", f"{PROVIDER}/workspaces/era/clusters/given", given))
        image = self.call("GET", f"{PROVIDER}/workspaces/era/clusters/given").json()["properties"]["virtualMachineConfiguration"]["imageReference"]
        self.assertEqual((image["offer"], image["minVersion"]), ("UbuntuServer", ""))
        patched = self.call("PATCH", f"{PROVIDER}/workspaces/era/clusters/c",
                            {"properties": {"scaleSettings": {"manual": {"targetNodeCount": 0}}}})
        self.assertEqual((patched.json()["location"], patched.json()["etag"]), ("westus2", patched.headers["ETag"]))
        # A job that waits in the queue (the cluster has no nodes): no cores yet, no size, 5 attempts.
        self.call("PUT", f"{PROVIDER}/workspaces/era/experiments/e")
        j = self.call("PUT", f"{PROVIDER}/workspaces/era/experiments/e/jobs/j", job_body(f"{PROVIDER}/workspaces/era/clusters/c"))
        harness.wait_for_operation(self.ep, j)
        job = self.call("GET", f"{PROVIDER}/workspaces/era/experiments/e/jobs/j").json()["properties"]
        self.assertEqual((job["coreCountPerNode"], job["constraints"]["maxAttempts"]), (0, 5))
        self.assertNotIn("vmSize", job)
        # Usages: the June 2021 model on 2018-05-01.
        usages = self.call("GET", f"/subscriptions/{SUB}/providers/Microsoft.BatchAI/locations/westus2/usages").json()["value"]
        self.assertEqual(len(usages), 55)
        by_name = {u["name"]["value"]: u for u in usages}
        self.assertEqual((usages[0]["name"]["value"], usages[0]["limit"]), ("Total Cluster vCPUs", 200))
        self.assertEqual(by_name["Total Cluster LowPriority Regional vCPUs"]["name"]["localizedValue"],
                         "Total Cluster Low Priority Regional vCPUs")
        self.assertEqual(by_name["Standard NCasT4_v3 Family Cluster LowPriority vCPUs"]["limit"], -1)
        self.assertEqual(by_name["Standard NC Family Cluster Dedicated vCPUs"]["limit"], 24)
        self.assertNotIn("Clusters", by_name)

    def test_storage_accounts_answer_as_their_api_version_did(self):
        accounts = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Storage/storageAccounts"
        r = self.call("PUT", f"{accounts}/eraacct", {"location": "westus2", "kind": "StorageV2", "sku": {"name": "Standard_LRS"}},
                      api_version="2021-04-01")
        self.assertEqual(r.status_code, 202, r.text)
        # The keys' creation times from 2021-02-01 on, not before.
        keys = self.call("POST", f"{accounts}/eraacct/listKeys", api_version="2021-04-01").json()["keys"]
        self.assertTrue(all(k["creationTime"].endswith("Z") for k in keys), keys)
        old = self.call("POST", f"{accounts}/eraacct/listKeys", api_version="2019-06-01").json()["keys"]
        self.assertTrue(all("creationTime" not in k for k in old), old)
        account = self.call("GET", f"{accounts}/eraacct", api_version="2021-04-01").json()
        self.assertEqual(set(account["properties"]["keyCreationTime"]), {"key1", "key2"})
        self.assertNotIn("keyCreationTime", self.call("GET", f"{accounts}/eraacct", api_version="2019-06-01").json()["properties"])
        time.sleep(0.01)
        self.call("POST", f"{accounts}/eraacct/regenerateKey", {"keyName": "key1"}, api_version="2021-04-01")
        after = self.call("GET", f"{accounts}/eraacct", api_version="2021-04-01").json()["properties"]["keyCreationTime"]
        self.assertGreater(after["key1"], account["properties"]["keyCreationTime"]["key1"])
        self.assertEqual(after["key2"], account["properties"]["keyCreationTime"]["key2"])
        # The subscription-wide list says its charset; the group's list does not (recorded).
        everywhere = self.call("GET", f"/subscriptions/{SUB}/providers/Microsoft.Storage/storageAccounts", api_version="2021-04-01")
        self.assertEqual(everywhere.headers["Content-Type"], "application/json; charset=utf-8")
        here = self.call("GET", accounts, api_version="2021-04-01")
        self.assertEqual(here.headers["Content-Type"], "application/json")

    def test_experiment_put_takes_no_body_and_answers_200(self):
        self.ensure_workspace()
        r = requests.put(self.ep["arm"] + f"{PROVIDER}/workspaces/ws/experiments/raw?api-version=2018-05-01",
                         headers=AUTH, verify=self.ep["ca_cert"])
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.json()["properties"]["provisioningState"], "succeeded")

    def test_paging_follows_next_link(self):
        self.ensure_workspace("pages")
        for i in range(3):
            self.call("PUT", f"{PROVIDER}/workspaces/pages/experiments/e{i}")
        r = self.call("GET", f"{PROVIDER}/workspaces/pages/experiments?maxresults=2")
        page = r.json()
        self.assertEqual([e["name"] for e in page["value"]], ["e0", "e1"])
        nxt = requests.get(page["nextLink"], headers=AUTH, verify=self.ep["ca_cert"]).json()
        self.assertEqual([e["name"] for e in nxt["value"]], ["e2"])
        self.assertNotIn("nextLink", nxt)

    def test_delete_of_a_missing_resource_is_204(self):
        self.ensure_workspace()
        self.assertEqual(self.call("DELETE", f"{PROVIDER}/workspaces/ws/clusters/never").status_code, 204)

    def test_terminate_of_a_finished_job_is_a_no_op(self):
        self.ensure_workspace("term")
        self.call("PUT", f"{PROVIDER}/workspaces/term/experiments/e")
        c = self.call("PUT", f"{PROVIDER}/workspaces/term/clusters/c", CLUSTER_2018)
        harness.wait_for_operation(self.ep, c)
        cluster_id = f"{PROVIDER}/workspaces/term/clusters/c"
        j = self.call("PUT", f"{PROVIDER}/workspaces/term/experiments/e/jobs/j", job_body(cluster_id))
        harness.wait_for_operation(self.ep, j)
        t = self.call("POST", f"{PROVIDER}/workspaces/term/experiments/e/jobs/j/terminate")
        self.assertEqual(t.status_code, 202)
        self.assertEqual(harness.wait_for_operation(self.ep, t)["status"], "Succeeded")
        # Of a job that has ended: 200, no body, no operation (as recorded in every API version).
        t = self.call("POST", f"{PROVIDER}/workspaces/term/experiments/e/jobs/j/terminate")
        self.assertEqual((t.status_code, t.content), (200, b""))
        for header in ("Azure-AsyncOperation", "Location", "Content-Type"):
            self.assertNotIn(header, t.headers)
        job = self.call("GET", f"{PROVIDER}/workspaces/term/experiments/e/jobs/j").json()
        self.assertEqual(job["properties"]["executionState"], "failed")
        self.assertEqual(job["properties"]["experimentName"], "e")
        self.assertEqual(len(job["properties"]["executionInfo"]["errors"]), 1)
        # A PUT of a job that exists answers it unchanged, 200 (recorded).
        again = self.call("PUT", f"{PROVIDER}/workspaces/term/experiments/e/jobs/j", job_body(cluster_id, nodeCount=2))
        self.assertEqual(again.status_code, 200, again.text)
        self.assertEqual((again.json()["properties"]["nodeCount"], again.json()["properties"]["executionState"]),
                         (job["properties"]["nodeCount"], "failed"))

    def test_the_2018_03_01_api_on_the_same_resources(self):
        march = "2018-03-01"
        cluster = dict(CLUSTER_PREVIEW, tags={"api": "march"})
        r = self.call("PUT", f"{PROVIDER}/clusters/march.1", cluster, api_version=march)
        self.assertEqual(r.status_code, 202, r.text)
        harness.wait_for_operation(self.ep, r)
        got = self.call("GET", f"{PROVIDER}/clusters/march.1", api_version=march).json()
        self.assertEqual((got["type"], got["location"], got["tags"]), ("Microsoft.BatchAI/Clusters", "westus2", {"api": "march"}))
        self.assertEqual((got["properties"]["provisioningState"], got["properties"]["vmPriority"]), ("succeeded", "dedicated"))
        # Bodies are validated against 2018-03-01's swagger, the field's path is the target.
        bad = self.call("PUT", f"{PROVIDER}/jobs/badjob", {"location": "westus2", "properties": {
            "cluster": {"id": f"{PROVIDER}/clusters/march.1"}, "nodeCount": "two", "stdOutErrPathPrefix": "/tmp",
            "customToolkitSettings": {"commandLine": "true"}}}, api_version=march)
        self.assertEqual((bad.status_code, bad.json()["error"]["code"], bad.json()["error"]["target"]),
                         (400, "InvalidRequestContent", "properties.nodeCount"))
        job = job_body(f"{PROVIDER}/clusters/march.1", priority=-5)
        job["location"] = "westus2"
        # Dots are allowed in the flat API's names, but not a name of dots alone (it would name a
        # directory of the output path).
        dots = self.call("PUT", f"{PROVIDER}/jobs/...", job, api_version=march)
        self.assertEqual((dots.status_code, dots.json()["error"]["code"]), (400, "InvalidResourceName"))
        r = self.call("PUT", f"{PROVIDER}/jobs/marchjob", job, api_version=march)
        self.assertEqual(r.status_code, 202, r.text)
        harness.wait_for_operation(self.ep, r)
        got = self.call("GET", f"{PROVIDER}/jobs/marchjob", api_version=march).json()
        self.assertNotIn("location", got)
        self.assertEqual(got["properties"]["priority"], -5)
        self.assertRegex(got["properties"]["jobOutputDirectoryPathSegment"], rf"^{SUB}/{RG}/jobs/marchjob/[0-9a-f-]{{36}}$")
        self.assertNotIn("maxRetryCount", got["properties"]["constraints"])
        # The same job through the other two versions.
        self.assertEqual(self.call("GET", f"{PROVIDER}/jobs/marchjob", api_version=PREVIEW).json()["properties"]["priority"], -5)
        modern = self.call("GET", f"{PROVIDER}/workspaces/migrated-westus2/experiments/migrated/jobs/marchjob").json()
        self.assertEqual(modern["properties"]["schedulingPriority"], "low")
        # A file server: /data, as 2018-03-01 answered.
        fs = {"location": "westus2", "properties": {"vmSize": "STANDARD_D1", "sshConfiguration": {
            "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "Pw-123456"}},
            "dataDisks": {"diskSizeInGB": 10, "diskCount": 1, "storageAccountType": "Standard_LRS"}}}
        r = self.call("PUT", f"{PROVIDER}/fileServers/marchfs", fs, api_version=march)
        self.assertEqual(r.status_code, 202, r.text)
        harness.wait_for_operation(self.ep, r)
        got = self.call("GET", f"{PROVIDER}/fileServers/marchfs", api_version=march).json()
        self.assertEqual(got["id"], f"{PROVIDER}/fileservers/marchfs")
        self.assertEqual((got["properties"]["mountSettings"]["mountPoint"], got["properties"]["mountSettings"]["fileServerType"]),
                         ("/data", "nfs"))
        self.assertNotIn("fileSystemType", got["properties"]["dataDisks"])
        # Usages are served on 2018-03-01 too; workspaces are not.
        usages = self.call("GET", f"/subscriptions/{SUB}/providers/Microsoft.BatchAI/locations/westus2/usages",
                           api_version=march)
        self.assertEqual(usages.status_code, 200, usages.text)
        usages = usages.json()["value"]
        self.assertEqual(usages[0]["name"]["value"], "Clusters")
        self.assertGreaterEqual(usages[0]["currentValue"], 1)
        none = self.call("GET", f"{PROVIDER}/workspaces", api_version=march)
        self.assertEqual((none.status_code, none.json()["error"]["code"]), (400, "NoRegisteredProviderFound"))

    def test_preview_api_flat_resources_live_in_the_migrated_workspace(self):
        r = self.call("PUT", f"{PROVIDER}/clusters/flat", CLUSTER_PREVIEW, api_version=PREVIEW)
        self.assertEqual(r.status_code, 202, r.text)
        harness.wait_for_operation(self.ep, r)
        cluster = self.call("GET", f"{PROVIDER}/clusters/flat", api_version=PREVIEW).json()
        self.assertEqual(cluster["id"], f"{PROVIDER}/clusters/flat")
        self.assertEqual(cluster["type"], "Microsoft.BatchAI/Clusters")
        self.assertEqual((cluster["location"], cluster["tags"]), ("westus2", {"kind": "flat"}))
        # Lower-case, as the preview service wrote them from December 2017.
        self.assertEqual(cluster["properties"]["provisioningState"], "succeeded")
        self.assertEqual(cluster["properties"]["allocationState"], "steady")

        job = job_body(f"{PROVIDER}/clusters/flat", priority=100, experimentName="old-exp")
        job["location"] = "westus2"
        r = self.call("PUT", f"{PROVIDER}/jobs/flatjob", job, api_version=PREVIEW)
        self.assertEqual(r.status_code, 202, r.text)
        harness.wait_for_operation(self.ep, r)
        flat = self.call("GET", f"{PROVIDER}/jobs/flatjob", api_version=PREVIEW).json()
        self.assertEqual(flat["type"], "Microsoft.BatchAI/Jobs")
        self.assertEqual(flat["properties"]["cluster"]["id"], f"{PROVIDER}/clusters/flat")
        self.assertEqual(flat["properties"]["priority"], 100)
        self.assertEqual(flat["properties"]["executionState"], "queued")
        self.assertEqual(flat["properties"]["toolType"], "custom")
        self.assertEqual(flat["properties"]["experimentName"], "old-exp")
        # As the preview service answered in December 2017: no location, tags or output path
        # segment on a job, no maxRetryCount.
        for absent in ("location", "tags"):
            self.assertNotIn(absent, flat)
        self.assertNotIn("jobOutputDirectoryPathSegment", flat["properties"])
        self.assertNotIn("maxRetryCount", flat["properties"]["constraints"])

        # The 2018-05-01 API sees the same resources in migrated-westus2 / migrated.
        modern = self.call("GET", f"{PROVIDER}/workspaces/migrated-westus2/experiments/migrated/jobs/flatjob").json()
        self.assertEqual(modern["properties"]["schedulingPriority"], "high")
        self.assertEqual(modern["properties"]["cluster"]["id"], f"{PROVIDER}/workspaces/migrated-westus2/clusters/flat")
        self.assertNotIn("_preview", modern)
        names = [c["name"] for c in self.call("GET", f"{PROVIDER}/workspaces/migrated-westus2/clusters").json()["value"]]
        self.assertIn("flat", names)

        listed = self.call("GET", f"/subscriptions/{SUB}/providers/Microsoft.BatchAI/jobs", api_version=PREVIEW).json()
        self.assertIn("flatjob", [j["name"] for j in listed["value"]])
        self.assertIn("flat", [c["name"] for c in self.call("GET", f"{PROVIDER}/clusters", api_version=PREVIEW).json()["value"]])
        t = self.call("POST", f"{PROVIDER}/jobs/flatjob/terminate", api_version=PREVIEW)
        harness.wait_for_operation(self.ep, t)
        self.assertEqual(self.call("GET", f"{PROVIDER}/jobs/flatjob", api_version=PREVIEW).json()["properties"]["executionState"], "failed")
        # After the terminate: nodes would run the queued job.
        patched = self.call("PATCH", f"{PROVIDER}/clusters/flat",
                            {"properties": {"scaleSettings": {"manual": {"targetNodeCount": 3}}}}, api_version=PREVIEW)
        self.assertEqual(patched.json()["properties"]["scaleSettings"]["manual"]["targetNodeCount"], 3)
        d = self.call("DELETE", f"{PROVIDER}/jobs/flatjob", api_version=PREVIEW)
        harness.wait_for_operation(self.ep, d)
        gone = self.call("GET", f"{PROVIDER}/jobs/flatjob", api_version=PREVIEW)
        self.assertEqual(gone.status_code, 404)
        self.assertEqual(gone.json()["error"]["code"], "ResourceNotFound")
        self.assertEqual(gone.headers["x-ms-failure-cause"], "gateway")

    def test_preview_file_servers_and_group_lists(self):
        body = {"location": "westus2", "properties": {
            "vmSize": "STANDARD_D2_V2", "dataDisks": {"diskSizeInGB": 10, "diskCount": 1, "storageAccountType": "Standard_LRS"},
            "sshConfiguration": {"userAccountSettings": {"adminUserName": "u", "adminUserPassword": "Pw-123456"}}}}
        r = self.call("PUT", f"{PROVIDER}/fileServers/nfs.1", body, api_version=PREVIEW)
        self.assertEqual(r.status_code, 202, r.text)
        harness.wait_for_operation(self.ep, r)
        fs = self.call("GET", f"{PROVIDER}/fileServers/nfs.1", api_version=PREVIEW)
        self.assertEqual(fs.json()["type"], "Microsoft.BatchAI/FileServers")
        self.assertNotIn("Pw-123456", fs.text)
        listed = self.call("GET", f"{PROVIDER}/fileServers", api_version=PREVIEW).json()["value"]
        self.assertEqual([f["name"] for f in listed], ["nfs.1"])
        logins = self.call("POST", f"{PROVIDER}/clusters/none/listRemoteLoginInformation", api_version=PREVIEW)
        self.assertEqual(logins.status_code, 404)
        d = self.call("DELETE", f"{PROVIDER}/fileServers/nfs.1", api_version=PREVIEW)
        harness.wait_for_operation(self.ep, d)
        self.assertEqual(self.call("GET", f"{PROVIDER}/fileServers/nfs.1", api_version=PREVIEW).status_code, 404)

    def test_preview_lists_take_odata_filter_and_select(self):
        r = self.call("PUT", f"{PROVIDER}/clusters/filtered", CLUSTER_PREVIEW, api_version=PREVIEW)
        harness.wait_for_operation(self.ep, r)
        for name, priority in (("f-low", 1), ("f-high", 50)):
            job = job_body(f"{PROVIDER}/clusters/filtered", priority=priority)
            job["location"] = "westus2"
            r = self.call("PUT", f"{PROVIDER}/jobs/{name}", job, api_version=PREVIEW)
            self.assertEqual(r.status_code, 202, r.text)
            harness.wait_for_operation(self.ep, r)

        def names(query):
            r = self.call("GET", f"{PROVIDER}/jobs?{query}", api_version=PREVIEW)
            self.assertEqual(r.status_code, 200, r.text)
            return sorted(j["name"] for j in r.json()["value"] if j["name"].startswith("f-"))
        self.assertEqual(names("$filter=properties/priority gt 10"), ["f-high"])
        self.assertEqual(names("$filter=startswith(name, 'f-') and properties/priority le 10"), ["f-low"])
        self.assertEqual(names("$filter=name eq 'F-LOW' or name eq 'f-high'"), ["f-high", "f-low"])
        self.assertEqual(names("$filter=startswith(name,'f-')&maxresults=1"), ["f-low"])  # a page of what passes
        r = self.call("GET", f"{PROVIDER}/jobs?$filter=name eq 'f-high'&$select=name,properties/priority", api_version=PREVIEW)
        self.assertEqual(r.json()["value"], [{"id": f"{PROVIDER}/jobs/f-high", "name": "f-high", "properties": {"priority": 50}}])
        r = self.call("GET", f"{PROVIDER}/jobs?$filter=name like 'f%'", api_version=PREVIEW)
        self.assertEqual((r.status_code, r.json()["error"]["code"], r.json()["error"]["target"]), (400, "InvalidParameter", "$filter"))
        self.assertIn("position 6", r.json()["error"]["message"])

    def test_preview_routes_refuse_the_2018_version_and_back(self):
        r = self.call("GET", f"{PROVIDER}/clusters")
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (400, "NoRegisteredProviderFound"))
        r = self.call("GET", f"{PROVIDER}/workspaces", api_version=PREVIEW)
        self.assertEqual((r.status_code, r.json()["error"]["code"]), (400, "NoRegisteredProviderFound"))


class ArmPersistenceTest(unittest.TestCase):
    def test_every_resource_is_as_it_was_after_a_restart(self):
        emu = harness.Emulator(args=["--lro-delay", "0"])
        try:
            emu.start()
            ep = emu.endpoints
            harness.arm_call(ep, "PUT", f"/subscriptions/{SUB}/resourcegroups/{RG}", {"location": "westus2"}, api_version="2021-04-01")
            harness.arm_call(ep, "PUT", f"{PROVIDER}/workspaces/ws", {"location": "westus2", "tags": {"a": "b"}})
            harness.arm_call(ep, "PUT", f"{PROVIDER}/workspaces/ws/experiments/e")
            harness.wait_for_operation(ep, harness.arm_call(ep, "PUT", f"{PROVIDER}/workspaces/ws/clusters/c", CLUSTER_2018))
            harness.wait_for_operation(ep, harness.arm_call(
                ep, "PUT", f"{PROVIDER}/workspaces/ws/experiments/e/jobs/j", job_body(f"{PROVIDER}/workspaces/ws/clusters/c")))
            account = harness.arm_call(ep, "PUT", f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Storage/storageAccounts/keepme",
                                       {"location": "westus2", "kind": "StorageV2", "sku": {"name": "Standard_LRS"}},
                                       api_version="2021-04-01")
            # A new account is a long-running create: 202, then its asyncoperations URL answers 202
            # until the operation ends and 200 with the account after.
            self.assertEqual((account.status_code, account.content), (202, b""), account.text)
            monitor = account.headers["Location"]
            self.assertRegex(monitor, rf"/subscriptions/{SUB}/providers/Microsoft.Storage/locations/westus2/"
                                      r"asyncoperations/[0-9a-f-]{36}\?monitor=true&api-version=2021-04-01$")
            done = harness.wait_for(lambda: (lambda r: r if r.status_code == 200 else None)(
                requests.get(monitor, headers=AUTH, verify=ep["ca_cert"], timeout=10)), what="storage create")
            self.assertEqual((done.json()["name"], done.headers["Content-Type"]), ("keepme", "application/json"))
            again = harness.arm_call(ep, "PUT", f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Storage/storageAccounts/keepme",
                                     {"location": "westus2", "kind": "StorageV2", "sku": {"name": "Standard_LRS"}},
                                     api_version="2021-04-01")
            self.assertEqual(again.status_code, 200, again.text)
            paths = [f"/subscriptions/{SUB}/resourcegroups/{RG}", f"{PROVIDER}/workspaces/ws",
                     f"{PROVIDER}/workspaces/ws/experiments/e", f"{PROVIDER}/workspaces/ws/clusters/c",
                     f"{PROVIDER}/workspaces/ws/experiments/e/jobs/j"]
            before = [harness.arm_call(ep, "GET", p, api_version="2018-05-01" if "BatchAI" in p else "2021-04-01").json() for p in paths]
            keys_path = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Storage/storageAccounts/keepme/listKeys"
            keys = harness.arm_call(ep, "POST", keys_path, api_version="2021-04-01").json()
            self.assertEqual({k["permissions"] for k in keys["keys"]}, {"FULL"})
            self.assertEqual({k["permissions"] for k in harness.arm_call(ep, "POST", keys_path, api_version="2017-10-01").json()["keys"]},
                             {"Full"})
            code, _ = emu.stop()
            self.assertEqual(code, 0)
            emu.start()
            ep = emu.endpoints
            after = [harness.arm_call(ep, "GET", p, api_version="2018-05-01" if "BatchAI" in p else "2021-04-01").json() for p in paths]
            self.assertEqual(after, before)
            self.assertEqual(harness.arm_call(ep, "POST", keys_path, api_version="2021-04-01").json(), keys)
            from azure.storage.blob import BlobServiceClient
            key = keys["keys"][0]["value"]
            BlobServiceClient.from_connection_string(
                harness.connection_string(ep, "keepme", key)).create_container("after-restart")
        finally:
            emu.close()


    def test_a_subscription_of_an_older_data_directory_stays_known(self):
        # Data directories from before the subscriptions' records have groups only: at start every
        # subscription with a group is remembered, so deleting its last group leaves it known.
        import os
        import sqlite3
        emu = harness.Emulator(args=["--lro-delay", "0"])
        try:
            emu.start()
            ep = emu.endpoints
            group = f"/subscriptions/{SUB}/resourcegroups/older"
            self.assertEqual(harness.arm_call(ep, "PUT", group, {"location": "westus2"}, api_version="2021-04-01").status_code, 201)
            self.assertEqual(emu.stop()[0], 0)
            with sqlite3.connect(os.path.join(emu.location, "state.db")) as db:
                # (The emulator's default subscription has its record from the start; this one's goes.)
                self.assertEqual(db.execute("DELETE FROM arm_resources WHERE type = 'subscription' AND lower(key) = ?",
                                            (f"/subscriptions/{SUB}".lower(),)).rowcount, 1)
            emu.start()
            ep = emu.endpoints
            deleted = harness.arm_call(ep, "DELETE", group, api_version="2021-04-01")
            self.assertEqual(deleted.status_code, 202)
            harness.wait_for(lambda: harness.arm_call(ep, "GET", group, api_version="2021-04-01").status_code == 404,
                             what="the group gone")
            missing = harness.arm_call(ep, "GET", f"/subscriptions/{SUB}/resourceGroups/older/providers/Microsoft.BatchAI/workspaces/ws")
            self.assertEqual((missing.status_code, missing.json()["error"]["code"]), (404, "ResourceGroupNotFound"))
        finally:
            emu.close()


if __name__ == "__main__":
    unittest.main()
