"""Malformed and invalid ARM requests: a 400 (or the cloud's status) with the CloudError shape
and a message naming the field, never a crash or a hang; the emulator still serves afterwards."""
import json
import unittest

import harness

SUB = harness.SUBSCRIPTION
RG = "rg-bad"
PROVIDER = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.BatchAI"
WS = f"{PROVIDER}/workspaces/ws"
CLUSTER = {"properties": {"vmSize": "STANDARD_NC6", "scaleSettings": {"manual": {"targetNodeCount": 1}},
                          "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "p"}}}


class ArmBadInputTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator(args=["--lro-delay", "0"]).start()
        cls.ep = cls.emu.endpoints
        harness.arm_call(cls.ep, "PUT", f"/subscriptions/{SUB}/resourcegroups/{RG}", {"location": "eastus"}, api_version="2021-04-01")
        harness.arm_call(cls.ep, "PUT", WS, {"location": "eastus"})
        harness.arm_call(cls.ep, "PUT", f"{WS}/experiments/e")
        harness.wait_for_operation(cls.ep, harness.arm_call(cls.ep, "PUT", f"{WS}/clusters/c", CLUSTER))

    @classmethod
    def tearDownClass(cls):
        alive = harness.arm_call(cls.ep, "GET", WS)
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert alive.status_code == 200, "the emulator stopped serving"
        assert code == 0, f"emulator exited with {code}"

    def expect(self, response, status, code, target=None, mentions=None):
        self.assertEqual(response.status_code, status, response.text)
        error = response.json()["error"]
        self.assertEqual(error["code"], code, error)
        self.assertTrue(error["message"])
        if target is not None:
            self.assertEqual(error.get("target"), target, error)
        if mentions is not None:
            self.assertIn(mentions, error["message"])
        return error

    def job(self, **properties):
        body = {"properties": {"cluster": {"id": f"{WS}/clusters/c"}, "nodeCount": 1, "stdOutErrPathPrefix": "/tmp",
                               "customToolkitSettings": {"commandLine": "true"}}}
        body["properties"].update(properties)
        return body

    def put_job(self, body, name="j", **kwargs):
        return harness.arm_call(self.ep, "PUT", f"{WS}/experiments/e/jobs/{name}", body, **kwargs)

    def test_api_version_missing_unknown_or_malformed(self):
        self.expect(harness.arm_call(self.ep, "GET", WS, api_version=None), 400, "MissingApiVersionParameter")
        self.expect(harness.arm_call(self.ep, "GET", WS, api_version="2019-01-01"), 400, "NoRegisteredProviderFound",
                    mentions="2018-05-01")
        self.expect(harness.arm_call(self.ep, "GET", WS, api_version="yesterday"), 400, "InvalidApiVersionParameter")

    def test_malformed_json(self):
        r = harness.arm_call(self.ep, "PUT", f"{WS}/experiments/e/jobs/j", data=b'{"properties": {',
                             headers={"Content-Type": "application/json"})
        self.expect(r, 400, "InvalidRequestContent")
        r = harness.arm_call(self.ep, "PUT", f"{WS}/experiments/e/jobs/j", data=b'{"properties": "\xff\xfe"}',
                             headers={"Content-Type": "application/json"})
        self.expect(r, 400, "InvalidRequestContent")
        r = harness.arm_call(self.ep, "PUT", f"{WS}/experiments/e/jobs/j", data=b'[1, 2]',
                             headers={"Content-Type": "application/json"})
        self.expect(r, 400, "InvalidRequestContent")

    def test_wrong_content_type(self):
        r = harness.arm_call(self.ep, "PUT", WS, data=b'{"location": "eastus"}', headers={"Content-Type": "text/plain"})
        self.expect(r, 400, "UnsupportedMediaType", mentions="text/plain")

    def test_names_that_break_the_pattern(self):
        self.expect(harness.arm_call(self.ep, "PUT", f"{PROVIDER}/workspaces/bad.name", {"location": "eastus"}),
                    400, "InvalidResourceName", target="workspaceName")
        self.expect(harness.arm_call(self.ep, "PUT", f"{PROVIDER}/workspaces/{'x' * 65}", {"location": "eastus"}),
                    400, "InvalidResourceName")
        self.expect(harness.arm_call(self.ep, "GET", f"/subscriptions/{SUB}/resourcegroups/bad%20group", api_version="2021-04-01"),
                    400, "InvalidResourceGroupName")
        self.expect(harness.arm_call(self.ep, "PUT", f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Storage/storageAccounts/UPPER",
                                     {"location": "eastus", "kind": "StorageV2", "sku": {"name": "Standard_LRS"}}, api_version="2021-04-01"),
                    400, "AccountNameInvalid")

    def test_a_10_mb_body(self):
        body = self.job(environmentVariables=[{"name": "BIG", "value": "x" * (10 * 1024 * 1024)}])
        self.expect(self.put_job(body), 400, "RequestEntityTooLarge")

    def test_deeply_nested_json(self):
        data = ('{"properties":' + '[' * 100000 + ']' * 100000 + '}').encode()
        r = harness.arm_call(self.ep, "PUT", f"{WS}/experiments/e/jobs/deep", data=data, headers={"Content-Type": "application/json"})
        self.expect(r, 400, "InvalidRequestContent", mentions="deeper")

    def test_validation_names_the_json_path(self):
        body = self.job()
        del body["properties"]["nodeCount"]
        self.expect(self.put_job(body), 400, "MissingRequiredProperty", target="properties.nodeCount")
        self.expect(self.put_job(self.job(nodeCount=-1)), 400, "InvalidRequestContent", target="properties.nodeCount")
        self.expect(self.put_job(self.job(schedulingPriority="urgent")), 400, "InvalidRequestContent",
                    target="properties.schedulingPriority")
        self.expect(self.put_job(self.job(constraints={"maxWallClockTime": "soon"})), 400, "InvalidRequestContent",
                    target="properties.constraints.maxWallClockTime")
        error = self.expect(self.put_job(self.job(customMpiSettings={"commandLine": "x"})), 400, "InvalidRequestContent")
        self.assertIn("only one toolkit", error["message"])
        bad_cluster = {"properties": dict(CLUSTER["properties"], scaleSettings={"manual": {"targetNodeCount": 1},
                                                                                 "autoScale": {"minimumNodeCount": 0, "maximumNodeCount": 1}})}
        self.expect(harness.arm_call(self.ep, "PUT", f"{WS}/clusters/two", bad_cluster), 400, "InvalidRequestContent",
                    target="properties.scaleSettings")
        self.expect(harness.arm_call(self.ep, "PUT", f"{PROVIDER}/workspaces/noloc", {"tags": {}}), 400,
                    "MissingRequiredProperty", target="location")
        for size, why in (("Standard_DS2_v2", "premium storage"), ("STANDARD_XYZ", "not a VM size")):
            premium = {"properties": dict(CLUSTER["properties"], vmSize=size)}
            error = self.expect(harness.arm_call(self.ep, "PUT", f"{WS}/clusters/sized", premium), 400,
                                "InvalidRequestContent", target="properties.vmSize")
            self.assertIn(why, error["message"])

    def test_nothing_is_stored_after_a_refusal(self):
        self.put_job(self.job(nodeCount=0), name="refused")
        self.expect(harness.arm_call(self.ep, "GET", f"{WS}/experiments/e/jobs/refused"), 404, "JobNotFound")

    def test_query_parameters(self):
        self.expect(harness.arm_call(self.ep, "GET", f"{WS}/experiments?maxresults=0"), 400, "InvalidQueryParameterValue",
                    target="maxresults")
        self.expect(harness.arm_call(self.ep, "GET", f"{WS}/experiments?maxresults=abc"), 400, "InvalidQueryParameterValue")
        self.expect(harness.arm_call(self.ep, "GET", f"{WS}/experiments?$skiptoken=-5"), 400, "InvalidQueryParameterValue")

    def test_unknown_paths_and_methods(self):
        self.expect(harness.arm_call(self.ep, "GET", f"{WS}/gadgets"), 404, "NotFound")
        self.expect(harness.arm_call(self.ep, "POST", WS, {}), 405, "MethodNotAllowed")

    def test_missing_parents(self):
        self.expect(harness.arm_call(self.ep, "GET", f"/subscriptions/{SUB}/resourceGroups/nogroup/providers/Microsoft.BatchAI/workspaces/ws"),
                    404, "ResourceGroupNotFound")
        self.expect(harness.arm_call(self.ep, "GET", f"{PROVIDER}/workspaces/nows/experiments/e"), 404, "WorkspaceNotFound")
        self.expect(harness.arm_call(self.ep, "GET", f"{WS}/experiments/noexp/jobs/j"), 404, "ExperimentNotFound")

    def test_garbage_bodies_of_every_json_type(self):
        for value in (None, 1, "text", [], {"properties": "string"}, {"properties": {"nodeCount": "one"}}):
            r = self.put_job(value) if value is not None else harness.arm_call(self.ep, "PUT", f"{WS}/experiments/e/jobs/j")
            self.assertEqual(r.status_code, 400, (value, r.text))
            self.assertIn("error", r.json())
        self.assertEqual(json.loads(harness.arm_call(self.ep, "GET", WS).text)["name"], "ws")


if __name__ == "__main__":
    unittest.main()
