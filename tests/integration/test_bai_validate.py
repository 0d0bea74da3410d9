"""bai job validate: offline (no emulator), every recipe of the corpus passes, faults come with
their JSON path and a hint and exit 1, the cloud's surprises are warnings."""
import glob
import json
import os
import shutil
import tempfile
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "reference", "jobs"))


class JobValidate(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="bai-validate-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        # No emulator anywhere: validate must not need one.
        self.env = {"BAI_CONFIG_DIR": self.dir, "HOME": self.dir}

    def validate(self, body, *args):
        path = os.path.join(self.dir, "job.json")
        with open(path, "w") as f:
            f.write(body if isinstance(body, str) else json.dumps(body))
        return harness.run_cli("--data-dir", self.dir, "job", "validate", "-f", path, *args, env=self.env)

    def test_every_recipe_job_of_the_corpus_passes(self):
        recipes = sorted(glob.glob(os.path.join(CORPUS, "recipes", "**", "job*.json"), recursive=True))
        self.assertGreater(len(recipes), 15)
        for path in recipes:
            with self.subTest(recipe=os.path.relpath(path, CORPUS)):
                result = harness.run_cli("job", "validate", "-f", path, env=self.env)
                self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                self.assertRegex(result.stdout, r"0 error\(s\), \d+ warning\(s\) \(api-version (2018-05-01|2017-09-01-preview), cli mode\)")

    def test_errors_name_their_path_with_a_hint_and_exit_1(self):
        result = self.validate({"properties": {
            "nodeCount": 0,
            "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
            "schedulingPriority": "urgent",
            "constraints": {"maxWallClockTime": "one week"},
            "customToolkitSettings": {"commandLine": "true"},
            "tensorFlowSettings": {"pythonScriptFilePath": "$AZ_BATCHAI_MOUNT_ROOT/afs/t.py", "masterCommandLineArgs": ""}}})
        self.assertEqual(result.returncode, 1, result.stdout)
        lines = result.stdout.splitlines()
        for path in ("properties.nodeCount", "properties.schedulingPriority", "properties.constraints.maxWallClockTime",
                     "properties.customToolkitSettings"):
            at = next((i for i, line in enumerate(lines) if f": error: {path}:" in line), None)
            self.assertIsNotNone(at, f"no error at {path}:\n{result.stdout}")
            self.assertTrue(lines[at + 1].startswith("  hint: "), lines[at + 1])
        self.assertIn("P7D", result.stdout)  # the duration's hint

    def test_cli_mode_allows_what_the_cli_fills_and_rest_mode_does_not(self):
        job = {"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
                              "customToolkitSettings": {"commandLine": "true"},
                              "mountVolumes": {"azureFileShares": [{
                                  "azureFileUrl": "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/s",
                                  "relativeMountPath": "s"}]}}}
        self.assertEqual(self.validate(job).returncode, 0)
        rest = self.validate(job, "--mode", "rest")
        self.assertEqual(rest.returncode, 1)
        self.assertIn("properties.cluster", rest.stdout)

    def test_surprises_are_warnings_and_json_output_is_structured(self):
        job = {"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "/tmp/logs",
                              "horovodSettings": {"pythonScriptFilePath": "/home/me/train.py", "processCount": 4},
                              "containerSettings": {"imageSourceRegistry": {"image": "tensorflow/tensorflow"}},
                              "environmentVariables": [{"name": "X", "value": "$AZ_BATCHAI_NODE_ID"}]}}
        result = self.validate(job, "-s", "STANDARD_NC6", "-o", "json")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        doc = json.loads(result.stdout)
        self.assertEqual(doc["errors"], [])
        self.assertEqual(sorted(w["path"] for w in doc["warnings"]), [
            "properties.containerSettings.imageSourceRegistry.image",
            "properties.environmentVariables[0].value",
            "properties.horovodSettings.processCount",
            "properties.horovodSettings.pythonScriptFilePath",
            "properties.stdOutErrPathPrefix"])

    def test_the_schema_names_the_api_version(self):
        job = {"$schema": "https://raw.githubusercontent.com/Azure/BatchAI/master/schemas/2017-09-01-preview/job.json",
               "properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
                              "customToolkitSettings": {"commandLine": "true"},
                              "outputDirectories": [{"id": "O", "pathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
                                                     "type": "model", "createNew": True}]}}
        result = self.validate(job)
        self.assertEqual(result.returncode, 0)
        self.assertIn("0 warning(s) (api-version 2017-09-01-preview", result.stdout)
        self.assertIn("is not a property", self.validate(job, "--api-version", "2018-05-01").stdout)

    def test_the_2018_03_01_schema_and_its_fields(self):
        # 2018-03-01: the flat API's integer priority and the job-level secrets it gained; no
        # schedulingPriority and no customMpiSettings (both 2018-05-01's): unknown properties,
        # which the service ignored (a warning), so a job whose only toolkit is one has none.
        job = {"$schema": "https://raw.githubusercontent.com/Azure/BatchAI/master/schemas/2018-03-01/job.json",
               "properties": {"nodeCount": 1, "priority": 10, "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
                              "secrets": [{"name": "S", "value": "v"}],
                              "customToolkitSettings": {"commandLine": "true"}}}
        result = self.validate(job)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("0 error(s), 0 warning(s) (api-version 2018-03-01, cli mode)", result.stdout)
        self.assertIn("properties.priority: is not a property", self.validate(job, "--api-version", "2018-05-01").stdout)
        job["properties"]["schedulingPriority"] = "high"
        self.assertIn("warning: properties.schedulingPriority: is not a property", self.validate(job).stdout)
        del job["properties"]["schedulingPriority"]
        del job["properties"]["customToolkitSettings"]
        job["properties"]["customMpiSettings"] = {"commandLine": "true"}
        refused = self.validate(job)
        self.assertEqual(refused.returncode, 1, refused.stdout)
        self.assertIn("warning: properties.customMpiSettings: is not a property", refused.stdout)
        self.assertRegex(refused.stdout, r"error: properties: needs one toolkit: [^\n]*customToolkitSettings\n")
        self.assertEqual(self.validate(job, "--api-version", "2018-05-01").returncode, 0)

    def test_malformed_and_missing_files(self):
        result = self.validate('{"properties": {"nodeCount": 1,}}')
        self.assertEqual(result.returncode, 1)
        self.assertRegex(result.stdout, r"error: \$: is not valid JSON: .*line 1")
        missing = harness.run_cli("job", "validate", "-f", os.path.join(self.dir, "none.json"), env=self.env)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("none.json", missing.stderr)


if __name__ == "__main__":
    unittest.main()
