"""Batch jobs, tasks and nodes through their lives (issue 9), with the azure-batch SDK: a job
terminated, disabled and enabled, patched to terminate once its tasks are complete, ended by a
failing task's exit conditions and by its maxWallClockTime; a task terminated, deleted, stopped at
its maxWallClockTime, its directory gone after its retentionTime; task counts; task and node
files listed, read, deleted; a node booting, then running its start task after its resource
files; a node rebooted, taken out of scheduling, removed while it finishes
its task, pre-empted and replaced."""
import time
import unittest
from datetime import datetime, timedelta

import requests
from azure.batch.batch_auth import SharedKeyAuth
from azure.storage.blob import BlobServiceClient, generate_blob_sas

from azure.batch import models as bm

import harness
from test_batch_pools import DEV_BATCH, DEV_BATCH_KEY, BatchTestCase, vm_configuration

SLEEP = "/bin/sleep 60"


class BatchLifecycle(BatchTestCase):
    def pool(self, pool_id, dedicated=1, low_priority=0, slots=1, start_task=None):
        self.client.pool.add(bm.PoolAddParameter(
            id=pool_id, vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
            target_dedicated_nodes=dedicated, target_low_priority_nodes=low_priority, task_slots_per_node=slots,
            start_task=start_task))
        harness.wait_for(lambda: self.client.pool.get(pool_id).allocation_state == bm.AllocationState.steady,
                         what=f"pool {pool_id} to be steady")

    def job(self, job_id, pool_id, **kwargs):
        self.client.job.add(bm.JobAddParameter(id=job_id, pool_info=bm.PoolInformation(pool_id=pool_id), **kwargs))

    def task(self, job_id, task_id, command_line, **kwargs):
        self.client.task.add(job_id, bm.TaskAddParameter(id=task_id, command_line=command_line, **kwargs))

    def state_of(self, job_id, task_id, state, timeout=30):
        def reached():
            task = self.client.task.get(job_id, task_id)
            return task if task.state == state else None
        return harness.wait_for(reached, timeout=timeout, what=f"task {task_id} to be {state}")

    def job_state(self, job_id, state, timeout=30):
        def reached():
            job = self.client.job.get(job_id)
            return job if job.state == state else None
        return harness.wait_for(reached, timeout=timeout, what=f"job {job_id} to be {state}")

    def node_state(self, pool_id, node_id, state, timeout=30):
        def reached():
            node = self.client.compute_node.get(pool_id, node_id)
            return node if node.state == state else None
        return harness.wait_for(reached, timeout=timeout, what=f"node {node_id} to be {state}")

    def error(self, call, *args, **kwargs):
        with self.assertRaises(bm.BatchErrorException) as caught:
            call(*args, **kwargs)
        return caught.exception.error

    def preempt(self, pool_id, node_id, body=None):
        return requests.post(f"{self.emu.endpoints['batch']}/emulator/pools/{pool_id}/nodes/{node_id}/preempt", json=body,
                             auth=SharedKeyAuth("authorization", DEV_BATCH, DEV_BATCH_KEY))

    def test_terminating_a_job_ends_its_running_tasks_and_leaves_active_ones(self):
        self.pool("p-term")
        self.job("j-term", "p-term")
        self.task("j-term", "running", SLEEP)
        self.task("j-term", "waiting", "/bin/true")
        self.state_of("j-term", "running", bm.TaskState.running)
        self.client.job.terminate("j-term")
        job = self.job_state("j-term", bm.JobState.completed)
        self.assertEqual(job.execution_info.terminate_reason, "UserTerminate")
        self.assertIsNotNone(job.execution_info.end_time)
        ended = self.client.task.get("j-term", "running")
        self.assertEqual((ended.state, ended.execution_info.result, ended.execution_info.failure_info.code),
                         (bm.TaskState.completed, bm.TaskExecutionResult.failure, "TaskEnded"))
        self.assertEqual(self.client.task.get("j-term", "waiting").state, bm.TaskState.active)
        self.assertEqual(self.error(self.client.task.add, "j-term", bm.TaskAddParameter(id="late", command_line="/bin/true")).code,
                         "JobCompleted")
        self.assertEqual(self.error(self.client.job.terminate, "j-term").code, "JobCompleted")
        counts = self.client.job.get_task_counts("j-term").task_counts
        self.assertEqual((counts.active, counts.running, counts.completed, counts.succeeded, counts.failed), (1, 0, 1, 0, 1))

    def test_a_task_terminated_deleted_or_out_of_time(self):
        self.pool("p-task", slots=3)
        self.job("j-task", "p-task")
        self.task("j-task", "stopped", SLEEP)
        self.task("j-task", "deleted", SLEEP)
        self.task("j-task", "slow", SLEEP,
                  constraints=bm.TaskConstraints(max_wall_clock_time=timedelta(seconds=2), max_task_retry_count=3))
        for task_id in ("stopped", "deleted"):
            self.state_of("j-task", task_id, bm.TaskState.running)
        self.client.task.terminate("j-task", "stopped")
        stopped = self.state_of("j-task", "stopped", bm.TaskState.completed)
        self.assertEqual((stopped.execution_info.result, stopped.execution_info.failure_info.code),
                         (bm.TaskExecutionResult.failure, "TaskEnded"))
        self.client.task.terminate("j-task", "stopped")  # a completed task: nothing changes
        self.assertEqual(self.client.task.get("j-task", "stopped").e_tag, stopped.e_tag)
        self.client.task.delete("j-task", "deleted")
        self.assertEqual(self.error(self.client.task.get, "j-task", "deleted").code, "TaskNotFound")
        slow = self.state_of("j-task", "slow", bm.TaskState.completed, timeout=20)
        self.assertEqual((slow.execution_info.result, slow.execution_info.failure_info.code, slow.execution_info.retry_count),
                         (bm.TaskExecutionResult.failure, "MaxWallClockTimeExpiry", 0))
        node = self.client.compute_node.get("p-task", slow.node_info.node_id)
        harness.wait_for(lambda: self.client.compute_node.get("p-task", node.id).running_tasks_count == 0,
                         what="the node to have no task")
        self.assertEqual(self.error(self.client.task.terminate, "j-task", "nope").code, "TaskNotFound")

    def test_an_update_lengthens_a_running_tasks_wall_clock(self):
        self.pool("p-upd")
        self.job("j-upd", "p-upd")
        self.task("j-upd", "t", "/bin/sleep 3", constraints=bm.TaskConstraints(max_wall_clock_time=timedelta(seconds=1)))
        self.client.task.update("j-upd", "t", constraints=bm.TaskConstraints(max_wall_clock_time=timedelta(minutes=5)))
        task = self.state_of("j-upd", "t", bm.TaskState.completed, timeout=20)
        self.assertEqual(task.execution_info.result, bm.TaskExecutionResult.success)
        self.assertEqual(task.constraints.max_wall_clock_time, timedelta(minutes=5))
        r = requests.put(f"{self.emu.endpoints['batch']}/jobs/j-upd/tasks/t?api-version=2022-01-01.15.0",
                         json={"constraints": {"retentionTime": "soon"}}, auth=SharedKeyAuth("authorization", DEV_BATCH, DEV_BATCH_KEY))
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidPropertyValue"))
        self.assertIn({"key": "PropertyName", "value": "constraints.retentionTime"}, r.json()["values"])

    def test_a_completed_tasks_directory_goes_after_its_retention_time(self):
        self.pool("p-keep")
        self.job("j-keep", "p-keep")
        self.task("j-keep", "brief", "/bin/echo kept", constraints=bm.TaskConstraints(retention_time=timedelta(seconds=2)))
        self.state_of("j-keep", "brief", bm.TaskState.completed)
        self.assertEqual(b"".join(self.client.file.get_from_task("j-keep", "brief", "stdout.txt")), b"kept\n")

        def gone():
            try:
                b"".join(self.client.file.get_from_task("j-keep", "brief", "stdout.txt"))
                return False
            except bm.BatchErrorException as e:
                return e.error.code == "FileNotFound"
        harness.wait_for(gone, timeout=15, what="the task's directory to go")
        self.assertEqual(list(self.client.file.list_from_task("j-keep", "brief", recursive=True)), [])

    def test_all_tasks_complete_terminates_a_job_patched_to_say_so(self):
        self.pool("p-all")
        self.job("j-all", "p-all")
        for n in range(2):
            self.task("j-all", f"t{n}", "/bin/true")
        for n in range(2):
            self.state_of("j-all", f"t{n}", bm.TaskState.completed)
        self.assertEqual(self.client.job.get("j-all").state, bm.JobState.active)
        self.client.job.patch("j-all", bm.JobPatchParameter(on_all_tasks_complete=bm.OnAllTasksComplete.terminate_job, priority=5))
        job = self.job_state("j-all", bm.JobState.completed)
        self.assertEqual((job.execution_info.terminate_reason, job.priority), ("AllTasksComplete", 5))
        self.assertEqual(self.error(self.client.job.patch, "j-all", bm.JobPatchParameter(priority=1)).code, "JobCompleted")

        self.job("j-back", "p-all", on_all_tasks_complete=bm.OnAllTasksComplete.terminate_job)
        error = self.error(self.client.job.patch, "j-back", bm.JobPatchParameter(on_all_tasks_complete=bm.OnAllTasksComplete.no_action))
        self.assertEqual(error.code, "InvalidPropertyValue")
        self.assertIn("onAllTasksComplete", [v.value for v in error.values])
        self.assertEqual(self.client.job.get("j-back").state, bm.JobState.active)  # no task yet: not "all complete"
        self.client.job.update("j-back", bm.JobUpdateParameter(
            pool_info=bm.PoolInformation(pool_id="p-all"), on_all_tasks_complete=bm.OnAllTasksComplete.terminate_job,
            constraints=bm.JobConstraints(max_task_retry_count=2)))
        self.assertEqual(self.client.job.get("j-back").constraints.max_task_retry_count, 2)
        error = self.error(self.client.job.patch, "j-back", bm.JobPatchParameter(pool_info=bm.PoolInformation(pool_id="other")))
        self.assertEqual(error.code, "JobNotDisabled")

    def test_a_failing_task_ends_its_job_unless_its_exit_conditions_say_none(self):
        self.pool("p-exit")
        for job_id in ("j-exit", "j-keepgoing"):
            self.job(job_id, "p-exit", on_task_failure=bm.OnTaskFailure.perform_exit_options_job_action)
        self.task("j-exit", "fails", "/bin/sh -c 'exit 3'")
        job = self.job_state("j-exit", bm.JobState.completed)
        self.assertEqual(job.execution_info.terminate_reason, "TaskFailed")
        self.task("j-keepgoing", "fails", "/bin/sh -c 'exit 3'", exit_conditions=bm.ExitConditions(
            exit_codes=[bm.ExitCodeMapping(code=3, exit_options=bm.ExitOptions(job_action=bm.JobAction.none))]))
        self.state_of("j-keepgoing", "fails", bm.TaskState.completed)
        time.sleep(0.3)
        self.assertEqual(self.client.job.get("j-keepgoing").state, bm.JobState.active)

    def test_a_job_past_its_wall_clock_time_is_terminated(self):
        self.pool("p-jclock")
        self.job("j-clock", "p-jclock", constraints=bm.JobConstraints(max_wall_clock_time=timedelta(seconds=2)))
        self.task("j-clock", "long", SLEEP)
        job = self.job_state("j-clock", bm.JobState.completed, timeout=20)
        self.assertEqual(job.execution_info.terminate_reason, "MaxWallClockTimeExpiry")
        self.assertEqual(self.client.task.get("j-clock", "long").execution_info.failure_info.code, "TaskEnded")

    def test_a_disabled_job_requeues_its_task_and_runs_nothing_until_enabled(self):
        self.pool("p-dis")
        self.job("j-dis", "p-dis")
        self.task("j-dis", "first", "/bin/sleep 1")
        self.state_of("j-dis", "first", bm.TaskState.running)
        self.client.job.disable("j-dis", bm.DisableJobOption.requeue)
        self.assertEqual(self.client.job.get("j-dis").state, bm.JobState.disabled)
        first = self.state_of("j-dis", "first", bm.TaskState.active)
        self.assertEqual((first.execution_info.requeue_count, first.execution_info.retry_count), (1, 0))
        self.task("j-dis", "second", "/bin/true")
        time.sleep(0.5)
        self.assertEqual(self.client.task.get("j-dis", "second").state, bm.TaskState.active)
        self.assertEqual(self.error(self.client.job.disable, "j-dis", bm.DisableJobOption.wait).code, "JobNotActive")
        self.client.job.enable("j-dis")
        for task_id in ("first", "second"):
            self.assertEqual(self.state_of("j-dis", task_id, bm.TaskState.completed).execution_info.result,
                             bm.TaskExecutionResult.success)
        self.assertEqual(self.error(self.client.job.enable, "j-dis").code, "JobNotDisabled")

    def test_task_and_node_files_listed_read_and_deleted(self):
        self.pool("p-files", start_task=bm.StartTask(command_line="/bin/echo ready", wait_for_success=True))
        self.job("j-files", "p-files")
        self.task("j-files", "t", "/bin/sh -c 'mkdir -p out && echo 42 > out/model.txt && echo done'")
        task = self.state_of("j-files", "t", bm.TaskState.completed)
        names = {f.name: f for f in self.client.file.list_from_task("j-files", "t", recursive=True)}
        self.assertTrue({"stdout.txt", "stderr.txt", "wd", "wd/out", "wd/out/model.txt"} <= set(names), sorted(names))
        self.assertTrue(names["wd"].is_directory)
        self.assertEqual((names["wd/out/model.txt"].is_directory, names["wd/out/model.txt"].properties.content_length), (False, 3))
        top = [f.name for f in self.client.file.list_from_task("j-files", "t")]
        self.assertIn("wd", top)
        self.assertNotIn("wd/out/model.txt", top)
        filtered = [f.name for f in self.client.file.list_from_task(
            "j-files", "t", recursive=True, file_list_from_task_options=bm.FileListFromTaskOptions(filter="startswith(name,'wd/out')"))]
        self.assertEqual(filtered, ["wd/out", "wd/out/model.txt"])
        paged = [f.name for f in self.client.file.list_from_task(
            "j-files", "t", recursive=True, file_list_from_task_options=bm.FileListFromTaskOptions(max_results=1))]
        self.assertEqual(sorted(paged), sorted(names))
        props = self.client.file.get_properties_from_task("j-files", "t", "wd/out/model.txt", raw=True)
        self.assertEqual((props.headers["Content-Length"], props.headers["ocp-batch-file-isdirectory"]), (3, False))
        self.assertTrue(props.headers["ocp-batch-file-url"].endswith("/jobs/j-files/tasks/t/files/wd/out/model.txt"))
        error = self.error(self.client.file.delete_from_task, "j-files", "t", "wd/out")
        self.assertEqual(error.code, "DirectoryNotEmpty")
        self.client.file.delete_from_task("j-files", "t", "wd/out/model.txt")
        with self.assertRaises(bm.BatchErrorException) as caught:  # a HEAD: the status alone
            self.client.file.get_properties_from_task("j-files", "t", "wd/out/model.txt")
        self.assertEqual(caught.exception.response.status_code, 404)
        self.client.file.delete_from_task("j-files", "t", "wd/out", recursive=True)
        r = requests.get(f"{self.emu.endpoints['batch']}/jobs/j-files/tasks/t/files/..%2F..%2F..%2Fstartup%2Fstdout.txt?api-version=2022-01-01.15.0",
                         auth=SharedKeyAuth("authorization", DEV_BATCH, DEV_BATCH_KEY))
        self.assertEqual((r.status_code, r.json()["code"]), (404, "FileNotFound"))
        node_files = [f.name for f in self.client.file.list_from_compute_node(
            "p-files", task.node_info.node_id, recursive=True,
            file_list_from_compute_node_options=bm.FileListFromComputeNodeOptions(filter="startswith(name,'startup')"))]
        self.assertIn("startup/stdout.txt", node_files)
        error = self.error(lambda: list(self.client.file.list_from_task(
            "j-files", "t", file_list_from_task_options=bm.FileListFromTaskOptions(filter="size gt 3"))))
        self.assertEqual(error.code, "InvalidQueryParameterValue")

    def test_a_rebooted_node_requeues_its_task_and_runs_its_start_task_again(self):
        start = bm.StartTask(command_line="/bin/sh -c 'echo boot >> $AZ_BATCH_NODE_SHARED_DIR/boots'", wait_for_success=True)
        self.pool("p-boot", start_task=start)
        self.job("j-boot", "p-boot")
        self.task("j-boot", "t", "/bin/sh -c 'sleep 1; cat $AZ_BATCH_NODE_SHARED_DIR/boots'")
        node_id = self.state_of("j-boot", "t", bm.TaskState.running).node_info.node_id
        self.client.compute_node.reboot("p-boot", node_id)
        self.assertIn(self.client.compute_node.get("p-boot", node_id).state,
                      (bm.ComputeNodeState.rebooting, bm.ComputeNodeState.waiting_for_start_task, bm.ComputeNodeState.idle,
                       bm.ComputeNodeState.running))
        task = self.state_of("j-boot", "t", bm.TaskState.completed)
        self.assertEqual((task.execution_info.result, task.execution_info.requeue_count), (bm.TaskExecutionResult.success, 1))
        self.assertEqual(b"".join(self.client.file.get_from_task("j-boot", "t", "stdout.txt")), b"boot\nboot\n")
        self.assertEqual(self.error(self.client.compute_node.reboot, "p-boot", "tvmps_none_d").code, "NodeNotFound")

    def test_a_node_boots_then_runs_its_start_task_with_its_resource_files(self):
        blobs = BlobServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
        blobs.create_container("setup")
        blobs.get_blob_client("setup", "requirements.txt").upload_blob(b"numpy\n")
        sas = generate_blob_sas(harness.DEV_ACCOUNT, "setup", "requirements.txt", account_key=harness.DEV_KEY,
                                permission="r", expiry=datetime.utcnow() + timedelta(hours=1))
        url = f"{self.emu.endpoints['blob']}/{harness.DEV_ACCOUNT}/setup/requirements.txt?{sas}"
        self.client.pool.add(bm.PoolAddParameter(
            id="p-boot2", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(), target_dedicated_nodes=1,
            start_task=bm.StartTask(command_line="/bin/cat requirements.txt", wait_for_success=True,
                                    resource_files=[bm.ResourceFile(http_url=url, file_path="requirements.txt")])))
        node = harness.wait_for(lambda: next(iter(self.client.compute_node.list("p-boot2")), None), what="a node")
        self.assertEqual((node.state, node.start_task_info), (bm.ComputeNodeState.starting, None))
        node = self.node_state("p-boot2", node.id, bm.ComputeNodeState.idle)
        self.assertEqual(node.start_task_info.exit_code, 0)
        self.assertEqual(b"".join(self.client.file.get_from_compute_node("p-boot2", node.id, "startup/stdout.txt")), b"numpy\n")

        self.client.pool.add(bm.PoolAddParameter(
            id="p-boot3", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(), target_dedicated_nodes=1,
            start_task=bm.StartTask(command_line="/bin/true", wait_for_success=True,
                                    resource_files=[bm.ResourceFile(http_url=url + "x", file_path="requirements.txt")])))
        node = harness.wait_for(lambda: next(iter(self.client.compute_node.list("p-boot3")), None), what="a node")
        node = self.node_state("p-boot3", node.id, bm.ComputeNodeState.start_task_failed)
        self.assertEqual(node.start_task_info.result, bm.TaskExecutionResult.failure)
        self.assertIsNotNone(node.start_task_info.failure_info.code)

    def test_a_node_out_of_scheduling_takes_no_task(self):
        self.pool("p-sched")
        node_id = next(iter(self.client.compute_node.list("p-sched"))).id
        self.client.compute_node.disable_scheduling("p-sched", node_id)
        self.assertEqual(self.client.compute_node.get("p-sched", node_id).scheduling_state, bm.SchedulingState.disabled)
        self.job("j-sched", "p-sched")
        self.task("j-sched", "t", "/bin/true")
        time.sleep(0.5)
        self.assertEqual(self.client.task.get("j-sched", "t").state, bm.TaskState.active)
        self.client.compute_node.enable_scheduling("p-sched", node_id)
        self.state_of("j-sched", "t", bm.TaskState.completed)

    def test_a_node_removed_with_taskcompletion_leaves_once_its_task_ends(self):
        self.pool("p-rm", dedicated=2)
        self.job("j-rm", "p-rm")
        self.task("j-rm", "t", "/bin/sleep 1")
        node_id = self.state_of("j-rm", "t", bm.TaskState.running).node_info.node_id
        self.client.pool.remove_nodes("p-rm", bm.NodeRemoveParameter(
            node_list=[node_id], node_deallocation_option=bm.ComputeNodeDeallocationOption.task_completion))
        self.assertEqual(self.client.compute_node.get("p-rm", node_id).state, bm.ComputeNodeState.leaving_pool)
        pool = self.client.pool.get("p-rm")
        self.assertEqual((pool.target_dedicated_nodes, pool.current_dedicated_nodes), (1, 2))
        self.assertEqual(self.state_of("j-rm", "t", bm.TaskState.completed).execution_info.result, bm.TaskExecutionResult.success)
        harness.wait_for(lambda: [n.id for n in self.client.compute_node.list("p-rm")] != [] and
                         node_id not in [n.id for n in self.client.compute_node.list("p-rm")], what="the node to leave")
        pool = self.client.pool.get("p-rm")
        self.assertEqual((pool.current_dedicated_nodes, pool.allocation_state), (1, bm.AllocationState.steady))
        error = self.error(self.client.pool.remove_nodes, "p-rm", bm.NodeRemoveParameter(node_list=["tvmps_none_d"]))
        self.assertEqual(error.code, "InvalidPropertyValue")

    def test_bad_requests_name_what_is_wrong(self):
        self.pool("p-bad")
        self.job("j-bad", "p-bad")
        self.task("j-bad", "t", "/bin/true")
        node_id = next(iter(self.client.compute_node.list("p-bad"))).id

        def refused(method, path, body, status, code, field=None):
            r = self.raw(method, path, body)
            self.assertEqual((r.status_code, r.json()["code"]), (status, code), f"{method} {path}: {r.text}")
            if field:
                self.assertIn(field, [v["value"] for v in r.json().get("values", [])], r.text)
        refused("POST", "/jobs/j-bad/disable", {}, 400, "MissingRequiredProperty", "disableTasks")
        refused("POST", "/jobs/j-bad/disable", {"disableTasks": "later"}, 400, "InvalidPropertyValue", "disableTasks")
        refused("POST", "/jobs/j-bad/terminate", "{not json", 400, "InvalidRequestBody")
        refused("PATCH", "/jobs/j-bad", {"priority": 5000}, 400, "InvalidPropertyValue", "priority")
        refused("PATCH", "/jobs/j-bad", {"constraints": {"maxWallClockTime": "forever"}}, 400, "InvalidPropertyValue",
                "constraints.maxWallClockTime")
        refused("PUT", "/jobs/j-bad", {"priority": 1}, 400, "MissingRequiredProperty", "poolInfo")
        refused("POST", "/jobs/j-bad/tasks", {"id": "u", "commandLine": "x", "constraints": {"retentionTime": 7}}, 400,
                "InvalidPropertyValue", "constraints.retentionTime")
        refused("PUT", "/jobs/j-bad/tasks/nope", {"constraints": {}}, 404, "TaskNotFound")
        refused("POST", "/jobs/nope/tasks/t/terminate", None, 404, "JobNotFound")
        refused("POST", f"/pools/p-bad/nodes/{node_id}/reboot", {"nodeRebootOption": "sometimes"}, 400, "InvalidPropertyValue",
                "nodeRebootOption")
        refused("POST", f"/pools/p-bad/nodes/{node_id}/disablescheduling", {"nodeDisableSchedulingOption": 3}, 400,
                "InvalidPropertyValue", "nodeDisableSchedulingOption")
        refused("POST", "/pools/p-bad/removenodes", {"nodeList": "all"}, 400, "InvalidPropertyValue", "nodeList")
        refused("POST", "/pools/p-bad/removenodes", {"nodeList": [node_id], "resizeTimeout": "soon"}, 400, "InvalidPropertyValue",
                "resizeTimeout")
        refused("POST", "/pools/nope/nodes/x/reboot", {}, 404, "PoolNotFound")
        refused("GET", f"/pools/p-bad/nodes/{node_id}/files?maxresults=0", None, 400, "InvalidQueryParameterValue", "maxresults")
        refused("POST", "/pools/p-bad/enableautoscale", {"autoScaleFormula": "$TargetDedicatedNodes = 1;",
                                                        "autoScaleEvaluationInterval": "PT1M"}, 400, "InvalidPropertyValue",
                "autoScaleEvaluationInterval")
        self.assertEqual(self.client.job.get("j-bad").state, bm.JobState.active)  # nothing refused changed anything
        self.assertEqual(self.client.job.get("j-bad").priority, 0)

    def test_a_preempted_node_stays_preempted_until_it_is_replaced(self):
        self.pool("p-pre", dedicated=0, low_priority=1)
        node_id = next(iter(self.client.compute_node.list("p-pre"))).id
        r = self.preempt("p-pre", node_id, {"recoverAfter": "PT2S"})
        self.assertEqual(r.status_code, 200, r.text)
        node = self.client.compute_node.get("p-pre", node_id)
        self.assertEqual(node.state, bm.ComputeNodeState.preempted)
        self.assertEqual(self.client.pool.get("p-pre").current_low_priority_nodes, 1)
        self.assertEqual(self.preempt("p-pre", node_id).status_code, 409)
        self.assertEqual(self.preempt("p-pre", node_id, {"recoverAfter": "later"}).json()["code"], "InvalidPropertyValue")

        def replaced():
            ids = [n.id for n in self.client.compute_node.list("p-pre")]
            return ids if ids and node_id not in ids else None
        new = harness.wait_for(replaced, timeout=15, what="a new node in its place")
        self.assertEqual(len(new), 1)
        self.assertEqual(self.node_state("p-pre", new[0], bm.ComputeNodeState.idle).is_dedicated, False)


if __name__ == "__main__":
    unittest.main()
