"""Batch jobs and tasks through their lives, with the azure-batch SDK: a job terminated,
disabled and enabled, patched to terminate once its tasks are complete, ended by a failing task's
exit conditions and by its maxWallClockTime; a task terminated, deleted, stopped at its
maxWallClockTime, its directory gone after its retentionTime; task counts; bad requests answered
with the field named; what a crash of the emulator does to them. (Nodes' lives:
test_batch_node_actions.)"""
import signal
import time
import unittest
from datetime import timedelta

from azure.batch import BatchServiceClient
from azure.batch import models as bm
from azure.batch.batch_auth import SharedKeyCredentials

import harness
from test_batch_pools import DEV_BATCH, DEV_BATCH_KEY, BatchTestCase, vm_configuration

SLEEP = "/bin/sleep 60"


class BatchLifecycle(BatchTestCase):
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

    def test_a_task_deleted_and_added_again_under_its_id_runs(self):
        self.pool("p-again")
        self.job("j-again", "p-again")
        for _ in range(2):
            self.task("j-again", "t", SLEEP)
            self.state_of("j-again", "t", bm.TaskState.running)
            self.client.task.delete("j-again", "t")
        self.task("j-again", "t", "/bin/echo third")  # too quick to be seen running
        task = self.state_of("j-again", "t", bm.TaskState.completed)
        self.assertEqual(task.execution_info.result, bm.TaskExecutionResult.success)

    def test_a_task_requeued_by_its_pools_deletion_runs_when_the_pool_comes_again(self):
        self.pool("p-gone")
        self.job("j-gone", "p-gone")
        self.task("j-gone", "t", "/bin/sleep 2")
        self.state_of("j-gone", "t", bm.TaskState.running)
        self.client.pool.delete("p-gone")
        harness.wait_for(lambda: "p-gone" not in [p.id for p in self.client.pool.list()], what="the pool to go")
        self.assertEqual(self.client.task.get("j-gone", "t").state, bm.TaskState.active)
        self.pool("p-gone")
        task = self.state_of("j-gone", "t", bm.TaskState.completed)
        self.assertEqual((task.execution_info.result, task.execution_info.requeue_count), (bm.TaskExecutionResult.success, 1))

    def test_an_update_lengthens_a_running_tasks_wall_clock(self):
        self.pool("p-upd")
        self.job("j-upd", "p-upd")
        self.task("j-upd", "t", "/bin/sleep 3", constraints=bm.TaskConstraints(max_wall_clock_time=timedelta(seconds=1)))
        self.client.task.update("j-upd", "t", constraints=bm.TaskConstraints(max_wall_clock_time=timedelta(minutes=5)))
        task = self.state_of("j-upd", "t", bm.TaskState.completed, timeout=20)
        self.assertEqual(task.execution_info.result, bm.TaskExecutionResult.success)
        self.assertEqual(task.constraints.max_wall_clock_time, timedelta(minutes=5))
        r = self.raw("PUT", "/jobs/j-upd/tasks/t", {"constraints": {"retentionTime": "soon"}})
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
        refused("POST", "/jobs/j-bad/tasks", {"id": "u", "commandLine": "x", "resourceFiles": [{"httpUrl": 1}]}, 400,
                "InvalidPropertyValue", "resourceFiles[0].httpUrl")
        refused("POST", "/jobs/j-bad/tasks", {"id": "u", "commandLine": "x", "resourceFiles": [{"httpUrl": "http://h/x",
                                                                                              "filePath": "../../escape"}]},
                400, "InvalidPropertyValue", "resourceFiles[0].filePath")
        refused("POST", "/jobs/j-bad/tasks", {"id": "u", "commandLine": "x", "environmentSettings": [{"name": "A", "value": 1}]}, 400,
                "InvalidPropertyValue", "environmentSettings[0].value")
        refused("POST", "/jobs/j-bad/tasks", {"id": "u", "commandLine": "x", "outputFiles": [{"filePattern": "*"}]}, 400,
                "MissingRequiredProperty", "outputFiles[0].destination.container")
        refused("POST", "/pools", {"id": "bad-start", "vmSize": "STANDARD_D1", "virtualMachineConfiguration": {
            "imageReference": {"publisher": "p", "offer": "o", "sku": "s"}, "nodeAgentSKUId": "n"},
            "startTask": {"commandLine": "x", "resourceFiles": [{"httpUrl": 1}]}}, 400, "InvalidPropertyValue",
            "startTask.resourceFiles[0].httpUrl")
        # Containers: an image reference that docker could take for an option, or none; settings
        # of the wrong kind; a pool's containerConfiguration likewise.
        for settings, code, field in [
                ({"imageName": "--privileged"}, "InvalidPropertyValue", "containerSettings.imageName"),
                ({"imageName": ""}, "InvalidPropertyValue", "containerSettings.imageName"),
                ({"containerRunOptions": "-v /:/host"}, "MissingRequiredProperty", "containerSettings.imageName"),
                ({"imageName": "ubuntu", "containerRunOptions": ["-v"]}, "InvalidPropertyValue", "containerSettings.containerRunOptions"),
                ({"imageName": "ubuntu", "workingDirectory": "/tmp"}, "InvalidPropertyValue", "containerSettings.workingDirectory"),
                ({"imageName": "ubuntu", "registry": {"password": 7}}, "InvalidPropertyValue", "containerSettings.registry.password")]:
            refused("POST", "/jobs/j-bad/tasks", {"id": "u", "commandLine": "x", "containerSettings": settings}, 400, code, field)
        refused("POST", "/jobs", {"id": "j-prep", "poolInfo": {"poolId": "p-bad"},
                                  "jobPreparationTask": {"commandLine": "x", "containerSettings": {"imageName": "-x"}}},
                400, "InvalidPropertyValue", "jobPreparationTask.containerSettings.imageName")
        machine = {"imageReference": {"publisher": "p", "offer": "o", "sku": "s"}, "nodeAgentSKUId": "n"}
        for configuration, code, field in [
                ({"containerImageNames": ["ubuntu"]}, "MissingRequiredProperty", "virtualMachineConfiguration.containerConfiguration.type"),
                ({"type": "criCompatible"}, "InvalidPropertyValue", "virtualMachineConfiguration.containerConfiguration.type"),
                ({"type": "dockerCompatible", "containerImageNames": ["ok", "-rm"]}, "InvalidPropertyValue",
                 "virtualMachineConfiguration.containerConfiguration.containerImageNames[1]"),
                ({"type": "dockerCompatible", "containerRegistries": [{"username": ["u"]}]}, "InvalidPropertyValue",
                 "virtualMachineConfiguration.containerConfiguration.containerRegistries[0].username")]:
            refused("POST", "/pools", {"id": "bad-containers", "vmSize": "STANDARD_D1",
                                       "virtualMachineConfiguration": dict(machine, containerConfiguration=configuration)}, 400, code, field)
        refused("POST", "/pools", {"id": "bad-start", "vmSize": "STANDARD_D1", "virtualMachineConfiguration": machine,
                                   "startTask": {"commandLine": "x", "containerSettings": {"imageName": "a b"}}}, 400,
                "InvalidPropertyValue", "startTask.containerSettings.imageName")
        self.assertEqual(self.client.job.get("j-bad").state, bm.JobState.active)  # nothing refused changed anything
        self.assertEqual(self.client.job.get("j-bad").priority, 0)



class BatchRestart(unittest.TestCase):
    """Nodes do not survive the emulator; what ran on them does: a running task is requeued
    (requeueCount 1) and runs again, a disabled job's running task is requeued and waits, a job's
    maxWallClockTime still counts from when it was added."""

    def test_a_crash_requeues_running_tasks_and_keeps_job_clocks(self):
        first = harness.Emulator().start()
        self.addCleanup(first.close)
        client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=first.endpoints["batch"])
        client.pool.add(bm.PoolAddParameter(id="p", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
                                            target_dedicated_nodes=2))
        for job_id in ("active", "held"):
            client.job.add(bm.JobAddParameter(id=job_id, pool_info=bm.PoolInformation(pool_id="p")))
            client.task.add(job_id, bm.TaskAddParameter(id="t", command_line="/bin/sleep 60"))
        client.job.add(bm.JobAddParameter(id="timed", pool_info=bm.PoolInformation(pool_id="p"),
                                          constraints=bm.JobConstraints(max_wall_clock_time=timedelta(seconds=4))))
        for job_id in ("active", "held"):
            harness.wait_for(lambda: client.task.get(job_id, "t").state == bm.TaskState.running, what=f"{job_id}/t to run")
        client.job.disable("held", bm.DisableJobOption.wait)
        first.stop(signal.SIGKILL)

        second = harness.Emulator(location=first.location).start()
        self.addCleanup(second.close)
        client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=second.endpoints["batch"])
        # Recovery is done before the endpoint answers: the first look never shows the stale `running`.
        self.assertEqual(client.task.get("active", "t").execution_info.requeue_count, 1)

        def running_again():
            task = client.task.get("active", "t")
            return task if task.state == bm.TaskState.running else None
        task = harness.wait_for(running_again, what="the requeued task to run again")
        self.assertEqual((task.execution_info.requeue_count, task.execution_info.retry_count), (1, 0))
        held = client.task.get("held", "t")
        self.assertEqual((held.state, held.execution_info.requeue_count), (bm.TaskState.active, 1))
        job = harness.wait_for(lambda: (j := client.job.get("timed")).state == bm.JobState.completed and j, timeout=15,
                               what="the timed job to complete")
        self.assertEqual(job.execution_info.terminate_reason, "MaxWallClockTimeExpiry")
        self.assertEqual(len(list(client.compute_node.list("p"))), 2)


if __name__ == "__main__":
    unittest.main()
