"""The job engine through the SDK: a custom-toolkit job end to end, job preparation, environment
variables and secrets, exit codes, the output layout and listOutputFiles' downloadUrl."""
import unittest

from azure.mgmt.batchai import models as m

from jobs_fixture import JobsTestCase, record_command, RG, WS, EXP
import harness


class CustomJobTest(JobsTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()

    def test_custom_job_runs_on_the_master_with_its_environment(self):
        cluster = self.cluster("custom", nodes=1)
        self.wait_cluster("custom", idle=1)
        job = self.job("hello", cluster,
                       environment_variables=[m.EnvironmentVariable(name="MY_MODE", value="fast")],
                       secrets=[m.EnvironmentVariableWithSecretValue(name="SECRET_TOKEN", value="s3cret")],
                       job_preparation=m.JobPreparation(command_line="echo prep $MY_MODE $SECRET_TOKEN"),
                       custom_toolkit_settings=m.CustomToolkitSettings(command_line=record_command()))
        self.assertEqual(job.execution_state, "succeeded", job.execution_info)
        self.assertEqual(job.execution_info.exit_code, 0)
        self.assertIsNotNone(job.execution_info.start_time)
        self.assertIsNotNone(job.execution_info.end_time)
        logs = self.files("hello")
        self.assertTrue({"stdout.txt", "stderr.txt", "stdout-job_prep.txt", "stderr-job_prep.txt", "execution.log"} <= set(logs), logs)
        self.assertEqual(self.read("hello", "stdout-job_prep.txt"), "prep fast s3cret\n")
        record = self.records("hello")["record"]
        env = record["env"]
        segment = job.job_output_directory_path_segment
        self.assertEqual(env["MY_MODE"], "fast")
        self.assertEqual(env["SECRET_TOKEN"], "s3cret")
        self.assertTrue(env["AZ_BATCHAI_OUTPUT_OUT"].endswith("/afs/" + segment + "/outputs"), env)
        self.assertTrue(env["AZ_BATCHAI_STDOUTERR_DIR"].endswith("/afs/" + segment + "/stdouterr"), env)
        self.assertEqual(env["AZ_BATCHAI_NUM_GPUS"], "1")
        self.assertTrue(env["AZ_BATCHAI_JOB_TEMP"].endswith("/jobs/hello"), env)
        self.assertEqual(env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID")
        self.assertTrue(env["NVIDIA_VISIBLE_DEVICES"].startswith("GPU-"))
        nodes = [n for n in self.nodes() if n["cluster"].endswith("/clusters/custom")]
        self.assertEqual(len(nodes), 1)
        self.assertEqual(env["AZ_BATCH_HOST_LIST"], nodes[0]["ipAddress"])
        self.assertTrue(nodes[0]["ipAddress"].startswith("127.0."))
        self.assertIn("runtime: host", self.read("hello", "execution.log"))

    def test_exit_code_and_preparation_failure(self):
        cluster = self.cluster("failing", nodes=1)
        self.wait_cluster("failing", idle=1)
        job = self.job("exit3", cluster, custom_toolkit_settings=m.CustomToolkitSettings(command_line="echo out; exit 3"))
        self.assertEqual(job.execution_state, "failed")
        self.assertEqual(job.execution_info.exit_code, 3)
        self.assertEqual(job.execution_info.errors[0].code, "JobFailed")
        prep = self.job("badprep", cluster, job_preparation=m.JobPreparation(command_line="exit 7"),
                        custom_toolkit_settings=m.CustomToolkitSettings(command_line="touch $AZ_BATCHAI_OUTPUT_OUT/ran"))
        self.assertEqual(prep.execution_state, "failed")
        self.assertEqual(prep.execution_info.exit_code, 7)
        self.assertEqual(prep.execution_info.errors[0].code, "JobPreparationFailed")
        self.assertNotIn("ran", self.files("badprep", "OUT"))
        self.assertNotIn("stdout.txt", self.files("badprep"))


if __name__ == "__main__":
    unittest.main()
