"""Batch jobs and tasks through the azure-batch SDK: a task that trains a tiny model on
a low-priority node after the pool's start task, its files; retries up to maxTaskRetryCount; a
task collection with a refused member; a running task requeued when its node leaves (a resize
down, requeue: requeueCount 1, retryCount 0) that runs again and succeeds; a job deleted."""
import json
import os
import time
import unittest
from datetime import datetime, timedelta

import requests
from azure.batch.batch_auth import SharedKeyAuth
from azure.storage.blob import BlobServiceClient, generate_container_sas

from azure.batch import BatchServiceClient
from azure.batch import models as bm
from azure.batch.batch_auth import SharedKeyCredentials
from azure.batch.custom.custom_errors import CreateTasksErrorException

import harness
from test_batch_images import IMAGE_ID
from test_batch_pools import DEV_BATCH, DEV_BATCH_KEY, BatchTestCase, vm_configuration
from test_jobs_containers import sandbox_works

TRAIN = r'''
import json, os
data = [(x, 2 * x + 1) for x in range(10)]
w, b = 0.0, 0.0
for epoch in range(200):
    for x, y in data:
        err = (w * x + b) - y
        w -= 0.01 * err * x
        b -= 0.01 * err
print("epoch 200 w=%.2f b=%.2f" % (w, b))
with open(os.path.join(os.environ["AZ_BATCH_TASK_WORKING_DIR"], "model.json"), "w") as f:
    json.dump({"w": round(w, 2), "b": round(b, 2)}, f)
'''


class BatchJobs(BatchTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.client.pool.add(bm.PoolAddParameter(
            id="lowpri", vm_size="STANDARD_NC6", virtual_machine_configuration=vm_configuration(),
            target_low_priority_nodes=1,
            start_task=bm.StartTask(command_line="/bin/sh -c 'echo installed > $AZ_BATCH_NODE_SHARED_DIR/deps'",
                                    wait_for_success=True)))
        cls.client.job.add(bm.JobAddParameter(id="mnist", pool_info=bm.PoolInformation(pool_id="lowpri")))

    def done(self, job_id, task_id, timeout=60):
        return self.state_of(job_id, task_id, bm.TaskState.completed, timeout=timeout)


    def test_a_task_trains_a_model_on_a_low_priority_node(self):
        self.client.task.add("mnist", bm.TaskAddParameter(
            id="train", command_line=f"/usr/bin/python3 -c '{TRAIN}'",
            environment_settings=[bm.EnvironmentSetting(name="EPOCHS", value="200")]))
        task = self.done("mnist", "train")
        info = task.execution_info
        self.assertEqual((info.exit_code, info.result, info.retry_count, info.requeue_count),
                         (0, bm.TaskExecutionResult.success, 0, 0))
        self.assertEqual(task.node_info.pool_id, "lowpri")
        self.assertRegex(task.node_info.node_id, r"_p$")
        self.assertEqual(self.read("mnist", "train", "stdout.txt"), "epoch 200 w=2.00 b=1.00\n")
        self.assertEqual(self.read("mnist", "train", "wd/model.json"), '{"w": 2.0, "b": 1.0}')
        node = self.client.compute_node.get("lowpri", task.node_info.node_id)
        self.assertGreaterEqual(node.total_tasks_succeeded, 1)
        self.assertIn("train", [t.id for t in self.client.task.list("mnist")])

    def test_a_failing_task_is_retried_up_to_its_limit(self):
        self.client.task.add("mnist", bm.TaskAddParameter(
            id="flaky", command_line="/bin/sh -c 'echo attempt >> $AZ_BATCH_NODE_SHARED_DIR/attempts; exit 2'",
            constraints=bm.TaskConstraints(max_task_retry_count=2)))
        task = self.done("mnist", "flaky")
        info = task.execution_info
        self.assertEqual((info.exit_code, info.result, info.retry_count), (2, bm.TaskExecutionResult.failure, 2))
        self.assertEqual(info.failure_info.category, bm.ErrorCategory.user_error)
        # Not under a shell: "$HOME" reaches echo as it is written.
        self.client.task.add("mnist", bm.TaskAddParameter(id="literal", command_line="echo $HOME"))
        self.done("mnist", "literal")
        self.assertEqual(self.read("mnist", "literal", "stdout.txt"), "$HOME\n")

    def test_a_collection_adds_each_task_on_its_own(self):
        result = self.client.task.add_collection("mnist", [
            bm.TaskAddParameter(id="c0", command_line="true"), bm.TaskAddParameter(id="c3", command_line="true")])
        self.assertEqual(sorted((r.task_id, r.status) for r in result.value),
                         [("c0", bm.TaskAddStatus.success), ("c3", bm.TaskAddStatus.success)])
        # A refused member: the SDK raises once the others are in.
        with self.assertRaises(CreateTasksErrorException) as caught:
            self.client.task.add_collection("mnist", [
                bm.TaskAddParameter(id="c1", command_line="true"),
                bm.TaskAddParameter(id="bad id", command_line="true"),
                bm.TaskAddParameter(id="c2", command_line="true")])
        failures = caught.exception.failure_tasks
        self.assertEqual([(f.task_id, f.status, f.error.code) for f in failures],
                         [("bad id", bm.TaskAddStatus.client_error, "InvalidPropertyValue")])
        self.assertEqual({v.key: v.value for v in failures[0].error.values}["PropertyName"], "id")
        for task_id in ("c0", "c1", "c2", "c3"):
            self.assertEqual(self.done("mnist", task_id).execution_info.exit_code, 0)
        with self.assertRaises(bm.BatchErrorException) as caught:
            self.client.task.add("mnist", bm.TaskAddParameter(id="C1", command_line="true"))
        self.assertEqual(caught.exception.error.code, "TaskExists")
        with self.assertRaises(bm.BatchErrorException) as caught:
            self.client.task.get("mnist", "nosuchtask")
        self.assertEqual(caught.exception.error.code, "TaskNotFound")

    def test_a_task_whose_node_leaves_is_requeued_without_using_a_retry(self):
        self.client.pool.add(bm.PoolAddParameter(id="shrinking", vm_size="STANDARD_D1",
                                                 virtual_machine_configuration=vm_configuration(), target_dedicated_nodes=1))
        self.client.job.add(bm.JobAddParameter(id="requeue", pool_info=bm.PoolInformation(pool_id="shrinking")))
        self.client.task.add("requeue", bm.TaskAddParameter(
            id="long", command_line="/bin/sh -c 'if [ -e $AZ_BATCH_NODE_SHARED_DIR/../../second ]; then echo done; "
                                    "else touch $AZ_BATCH_NODE_SHARED_DIR/../../second; echo started; sleep 600; fi'"))

        def started():
            try:
                return self.read("requeue", "long", "stdout.txt") == "started\n"
            except bm.BatchErrorException:
                return False
        harness.wait_for(started, timeout=30, what="the task's first run to start")
        self.client.pool.resize("shrinking", bm.PoolResizeParameter(target_dedicated_nodes=0))
        harness.wait_for(lambda: self.client.task.get("requeue", "long").state == bm.TaskState.active, timeout=30,
                         what="the task to be requeued")
        self.client.pool.resize("shrinking", bm.PoolResizeParameter(target_dedicated_nodes=1))
        task = self.done("requeue", "long")
        info = task.execution_info
        self.assertEqual((info.exit_code, info.requeue_count, info.retry_count), (0, 1, 0))
        self.assertEqual(self.read("requeue", "long", "stdout.txt"), "done\n")

    def az(self, *args):
        env = dict(os.environ, AZURE_CONFIG_DIR=os.path.join(self.emu.location, "az"))
        r = harness.az(["batch", *args, "--account-name", DEV_BATCH, "--account-key", DEV_BATCH_KEY,
                        "--account-endpoint", self.emu.endpoints["batch"], "-o", "json"], env=env, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout) if r.stdout.strip() else None

    def test_az_batch_task_list_and_files(self):
        self.client.task.add("mnist", bm.TaskAddParameter(id="for-az", command_line="/bin/sh -c 'mkdir out; echo 1 > out/m'"))
        self.done("mnist", "for-az")
        tasks = {t["id"]: t for t in self.az("task", "list", "--job-id", "mnist")}
        self.assertEqual(tasks["for-az"]["state"], "completed")
        self.assertEqual(tasks["for-az"]["executionInfo"]["exitCode"], 0)
        names = [f["name"] for f in self.az("task", "file", "list", "--job-id", "mnist", "--task-id", "for-az", "--recursive", "true")]
        self.assertIn("wd/out/m", names)

    def test_an_auto_pool_is_made_with_its_job_and_goes_with_it(self):
        """The recordings' jobs ran on auto pools (201): the pool is made with the job under a
        new id (PREFIX_GUID, executionInfo.poolId), runs its tasks, and is deleted when the job
        completes (poolLifetimeOption job), unless keepAlive."""
        def auto_job(job_id, keep_alive=False):
            self.client.job.add(bm.JobAddParameter(id=job_id, pool_info=bm.PoolInformation(auto_pool_specification=bm.AutoPoolSpecification(
                    auto_pool_id_prefix="ap", pool_lifetime_option=bm.PoolLifetimeOption.job, keep_alive=keep_alive,
                    pool=bm.PoolSpecification(vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
                                              target_dedicated_nodes=1)))))
            pool_id = self.client.job.get(job_id).execution_info.pool_id
            self.assertRegex(pool_id, r"^ap_[0-9a-f-]{36}$")
            self.assertEqual(self.client.pool.get(pool_id).target_dedicated_nodes, 1)
            self.client.task.add(job_id, bm.TaskAddParameter(id="t", command_line="/bin/sh -c 'echo $AZ_BATCH_POOL_ID'"))
            self.assertEqual(self.done(job_id, "t").execution_info.exit_code, 0)
            self.assertEqual(self.read(job_id, "t", "stdout.txt").strip(), pool_id)
            self.client.job.terminate(job_id)
            harness.wait_for(lambda: self.client.job.get(job_id).state == bm.JobState.completed, timeout=30,
                             what="the job to complete")
            return pool_id
        gone = auto_job("auto-once")
        harness.wait_for(lambda: not self.client.pool.exists(gone), timeout=30, what="the auto pool to go")
        kept = auto_job("auto-kept", keep_alive=True)
        self.assertTrue(self.client.pool.exists(kept))
        self.client.pool.delete(kept)
        # The job's view keeps the specification it was given; a bad one is refused naming the property.
        self.assertEqual(self.client.job.get("auto-kept").pool_info.auto_pool_specification.auto_pool_id_prefix, "ap")
        r = self.raw("POST", "/jobs", {"id": "bad-auto", "poolInfo": {"autoPoolSpecification": {
            "poolLifetimeOption": "forever", "pool": {"vmSize": "small", "cloudServiceConfiguration": {"osFamily": "5"}}}}})
        self.assertEqual((r.status_code, r.json()["values"][0]["value"]), (400, "poolInfo.autoPoolSpecification.poolLifetimeOption"))
        r = self.raw("POST", "/jobs", {"id": "bad-auto", "poolInfo": {"autoPoolSpecification": {
            "poolLifetimeOption": "job", "pool": {"cloudServiceConfiguration": {"osFamily": "5"}}}}})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "MissingRequiredProperty"))
        self.assertEqual(self.raw("GET", "/jobs/bad-auto").status_code, 404)
        # The recordings' own: an auto pool on cloudServiceConfiguration is made (201).
        r = self.raw("POST", "/jobs", {"id": "paas-auto", "poolInfo": {"autoPoolSpecification": {
            "poolLifetimeOption": "job", "pool": {"vmSize": "small", "cloudServiceConfiguration": {"osFamily": "5"}}}},
            "jobPreparationTask": {"commandLine": "/bin/true"}, "jobReleaseTask": {"commandLine": "/bin/true"}})
        self.assertEqual(r.status_code, 201, r.text)
        # As the recordings show such a job: the service's defaults filled in.
        shown = self.raw("GET", "/jobs/paas-auto").json()
        spec = shown["poolInfo"]["autoPoolSpecification"]
        self.assertEqual((spec["keepAlive"], spec["pool"]["cloudServiceConfiguration"], spec["pool"]["taskSlotsPerNode"],
                          spec["pool"]["targetDedicatedNodes"], shown["usesTaskDependencies"]),
                         (False, {"osFamily": "5", "osVersion": "*"}, 1, 0, False))
        self.assertEqual((shown["jobPreparationTask"]["id"], shown["jobPreparationTask"]["waitForSuccess"],
                          shown["jobPreparationTask"]["constraints"]["retentionTime"], shown["jobReleaseTask"]["id"],
                          shown["jobReleaseTask"]["maxWallClockTime"]), ("jobpreparation", True, "P7D", "jobrelease", "PT15M"))
        paas_pool = r.headers["DataServiceId"] and self.client.job.get("paas-auto").execution_info.pool_id
        self.assertEqual(self.client.pool.get(paas_pool).vm_size, "small")
        self.client.job.delete("paas-auto")
        harness.wait_for(lambda: self.raw("GET", "/jobs/paas-auto").status_code == 404, timeout=30, what="the job to go")
        harness.wait_for(lambda: not self.client.pool.exists(paas_pool), timeout=30, what="its pool to go")

    def test_jobs_are_listed_refused_and_deleted(self):
        self.client.job.add(bm.JobAddParameter(id="doomed", pool_info=bm.PoolInformation(pool_id="lowpri")))
        self.assertIn("doomed", [j.id for j in self.client.job.list()])
        with self.assertRaises(bm.BatchErrorException) as caught:
            self.client.job.add(bm.JobAddParameter(id="DOOMED", pool_info=bm.PoolInformation(pool_id="lowpri")))
        self.assertEqual(caught.exception.error.code, "JobExists")
        self.client.task.add("doomed", bm.TaskAddParameter(id="sleeper", command_line="sleep 600"))
        harness.wait_for(lambda: self.client.task.get("doomed", "sleeper").state == bm.TaskState.running, timeout=30,
                         what="the sleeper to run")
        started = time.monotonic()
        self.client.job.delete("doomed")
        harness.wait_for(lambda: "doomed" not in [j.id for j in self.client.job.list()], timeout=30, what="the job to go")
        self.assertLess(time.monotonic() - started, 30)
        with self.assertRaises(bm.BatchErrorException) as caught:
            self.client.job.get("doomed")
        self.assertEqual(caught.exception.error.code, "JobNotFound")


class AutoScale(unittest.TestCase):
    """A pool that auto-scales by a formula following $PendingTasks: it grows for the tasks and
    shrinks back once they are done; evaluateAutoScale; a bad formula refused naming the fault."""

    # The newest sample: an average over minutes would follow the tasks minutes late, as in the
    # cloud (the history's own behaviour is in batch_parts_test and the autoscale scenario).
    FORMULA = ("pending = max($PendingTasks.GetSample(1));\n"
               "$TargetDedicatedNodes = min(3, pending);\n"
               "$NodeDeallocationOption = taskcompletion;")

    def test_the_pool_follows_pending_tasks(self):
        emu = harness.Emulator().start()
        self.addCleanup(emu.close)
        client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=emu.endpoints["batch"])
        client.pool.add(bm.PoolAddParameter(id="elastic", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
                                            enable_auto_scale=True, auto_scale_formula=self.FORMULA,
                                            auto_scale_evaluation_interval=timedelta(minutes=5)))
        pool = harness.wait_for(lambda: (lambda p: p if p.auto_scale_run else None)(client.pool.get("elastic")),
                                timeout=30, what="the first evaluation")
        self.assertEqual(pool.current_dedicated_nodes, 0)
        self.assertIn("$TargetDedicatedNodes=0;", pool.auto_scale_run.results)
        client.job.add(bm.JobAddParameter(id="burst", pool_info=bm.PoolInformation(pool_id="elastic")))
        client.task.add_collection("burst", [bm.TaskAddParameter(id=f"t{i}", command_line="sleep 1") for i in range(5)])
        harness.wait_for(lambda: client.pool.get("elastic").current_dedicated_nodes == 3, timeout=30, what="3 nodes")
        self.assertIn("$TargetDedicatedNodes=3;", client.pool.get("elastic").auto_scale_run.results)
        run = client.pool.evaluate_auto_scale("elastic", "$TargetDedicatedNodes = $PendingTasks * 10;")
        self.assertRegex(run.results, r"^\$TargetDedicatedNodes=\d+;\$TargetLowPriorityNodes=0;\$NodeDeallocationOption=requeue$")
        harness.wait_for(lambda: all(t.state == bm.TaskState.completed for t in client.task.list("burst")), timeout=60,
                         what="the tasks to complete")
        harness.wait_for(lambda: client.pool.get("elastic").current_dedicated_nodes == 0, timeout=30, what="the pool to shrink")
        with self.assertRaises(bm.BatchErrorException) as caught:
            client.pool.resize("elastic", bm.PoolResizeParameter(target_dedicated_nodes=1))
        self.assertEqual(caught.exception.error.code, "PoolIsAutoScaleEnabled")

        with self.assertRaises(bm.BatchErrorException) as caught:
            client.pool.add(bm.PoolAddParameter(id="wrong", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
                                                enable_auto_scale=True, auto_scale_formula="$TargetDedicatedNodes = $Pending;"))
        self.assertEqual(caught.exception.error.code, "InvalidAutoScaleFormula")
        self.assertIn("unknown name $Pending", {v.key: v.value for v in caught.exception.error.values}["Reason"])
        client.pool.disable_auto_scale("elastic")
        client.pool.resize("elastic", bm.PoolResizeParameter(target_dedicated_nodes=1))
        harness.wait_for(lambda: client.pool.get("elastic").current_dedicated_nodes == 1, timeout=30, what="a manual resize")


# Trains once data/go has come with its resource files: the first run (before the test uploads
# it) waits to be pre-empted.
SEED = r'''
import json, os, time
wd = os.environ["AZ_BATCH_TASK_WORKING_DIR"]
rows = open(os.path.join(wd, "data", "train.csv")).read().split()[1:]
if not os.path.exists(os.path.join(wd, "data", "go")):
    print("started on", os.environ["AZ_BATCH_NODE_ID"], flush=True)
    time.sleep(600)
os.makedirs(os.path.join(wd, "model"), exist_ok=True)
json.dump({"rows": len(rows), "gpus": os.environ["CUDA_VISIBLE_DEVICES"], "root": os.environ["AZ_BATCH_NODE_ROOT_DIR"]},
          open(os.path.join(wd, "model", "mnist.json"), "w"))
print("trained on", len(rows), "rows")
'''


class FourthSeed(unittest.TestCase):
    """The fourth seed through Azure Batch: a low-priority GPU pool from a custom image (the host's
    root as its local root, in a sandbox where bubblewrap works) with a start task, a task whose
    data comes from a blob container (resourceFiles) and whose model and logs go to another
    (outputFiles), pre-empted once and requeued without spending a retry."""

    def test_preempted_requeued_and_its_files_in_blob_storage(self):
        sandboxed = sandbox_works()
        emu = harness.Emulator(args=["--gpus", "fake:1"] + (["--image", "mnist-gpu=/"] if sandboxed else [])).start()
        self.addCleanup(emu.close)
        client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=emu.endpoints["batch"])
        blobs = BlobServiceClient.from_connection_string(harness.connection_string(emu.endpoints))
        blobs.create_container("input")
        blobs.create_container("output")
        blobs.get_blob_client("input", "data/train.csv").upload_blob(b"x,y\n1,3\n2,5\n3,7\n")
        expiry = datetime.utcnow() + timedelta(hours=1)
        base = emu.endpoints["blob"] + "/" + harness.DEV_ACCOUNT
        read_sas = generate_container_sas(harness.DEV_ACCOUNT, "input", account_key=harness.DEV_KEY, permission="rl", expiry=expiry)
        write_sas = generate_container_sas(harness.DEV_ACCOUNT, "output", account_key=harness.DEV_KEY, permission="rwl", expiry=expiry)

        image = bm.VirtualMachineConfiguration(image_reference=bm.ImageReference(virtual_machine_image_id=IMAGE_ID),
                                               node_agent_sku_id="batch.node.ubuntu 20.04")
        client.pool.add(bm.PoolAddParameter(
            id="seed4", vm_size="STANDARD_NC6", virtual_machine_configuration=image, target_low_priority_nodes=1,
            start_task=bm.StartTask(command_line="/bin/sh -c 'echo pip install done'", wait_for_success=True)))
        client.job.add(bm.JobAddParameter(id="mnist", pool_info=bm.PoolInformation(pool_id="seed4")))
        output = lambda pattern, path, condition: bm.OutputFile(
            file_pattern=pattern,
            destination=bm.OutputFileDestination(container=bm.OutputFileBlobContainerDestination(
                container_url=f"{base}/output?{write_sas}", path=path)),
            upload_options=bm.OutputFileUploadOptions(upload_condition=condition))
        client.task.add("mnist", bm.TaskAddParameter(
            id="train", command_line=f"/usr/bin/python3 -c '{SEED}'",
            resource_files=[bm.ResourceFile(storage_container_url=f"{base}/input?{read_sas}", blob_prefix="data/")],
            output_files=[output("model/*.json", "model", bm.OutputFileUploadCondition.task_success),
                          output("../std*.txt", "logs", bm.OutputFileUploadCondition.task_completion)],
            constraints=bm.TaskConstraints(max_task_retry_count=0)))

        def first_run():
            try:
                text = b"".join(client.file.get_from_task("mnist", "train", "stdout.txt")).decode()
            except bm.BatchErrorException:
                return None
            return text.split()[-1] if text.startswith("started on") else None
        first_node = harness.wait_for(first_run, timeout=30, what="the first run to start")
        blobs.get_blob_client("input", "data/go").upload_blob(b"")  # for the next run's resource files
        r = requests.post(f"{emu.endpoints['batch']}/emulator/pools/seed4/nodes/{first_node}/preempt",
                          auth=SharedKeyAuth("authorization", DEV_BATCH, DEV_BATCH_KEY))
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json(), {"nodeId": first_node, "requeuedTasks": ["mnist/train"]})

        def completed():
            task = client.task.get("mnist", "train")
            return task if task.state == bm.TaskState.completed else None
        task = harness.wait_for(completed, timeout=60, what="the requeued task to complete")
        info = task.execution_info
        self.assertEqual((info.exit_code, info.result, info.requeue_count, info.retry_count),
                         (0, bm.TaskExecutionResult.success, 1, 0))
        self.assertNotEqual(task.node_info.node_id, first_node)
        model = json.loads(blobs.get_blob_client("output", "model/mnist.json").download_blob().readall())
        self.assertEqual(model["rows"], 3)
        if sandboxed:  # the node's GPU renumbered from 0 in its sandbox, the service's paths
            self.assertEqual((model["gpus"], model["root"]), ("0", "/mnt/batch/tasks"))
        else:
            self.assertRegex(model["gpus"], r"^GPU-")
            self.assertTrue(model["root"].startswith(emu.location), model["root"])
        log = blobs.get_blob_client("output", "logs/stdout.txt").download_blob().readall().decode()
        self.assertEqual(log, "trained on 3 rows\n")
        self.assertIn("logs/stderr.txt", [b.name for b in blobs.get_container_client("output").list_blobs()])
        pool = client.pool.get("seed4")
        self.assertEqual((pool.current_low_priority_nodes, pool.allocation_state), (1, bm.AllocationState.steady))
        r = requests.post(f"{emu.endpoints['batch']}/emulator/pools/seed4/nodes/tvmps_none_p/preempt",
                          auth=SharedKeyAuth("authorization", DEV_BATCH, DEV_BATCH_KEY))
        self.assertEqual((r.status_code, r.json()["code"]), (404, "NodeNotFound"))


if __name__ == "__main__":
    unittest.main()
