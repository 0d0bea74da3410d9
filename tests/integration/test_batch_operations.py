"""The Batch operations the other suites leave out, through the azure-batch SDK: conditional
headers (If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since) on pools, jobs, tasks
and job schedules; task dependencies; task reactivation; a task's subtasks; a node's VM
extensions."""
import os
import shutil
import tempfile
import time
from datetime import datetime, timedelta, timezone

from azure.batch import models as bm

import harness
from test_batch_pools import BatchTestCase, vm_configuration


class BatchOperations(BatchTestCase):
    def test_conditional_headers(self):
        self.client.pool.add(bm.PoolAddParameter(id="cond", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration()))
        got = self.raw("GET", "/pools/cond")
        etag = got.headers["ETag"]
        # A read: 304 when it has not changed, the pool when it has.
        headers = {"If-None-Match": etag}
        r = self.raw("GET", "/pools/cond", headers=headers)
        self.assertEqual((r.status_code, r.text), (304, ""))
        self.assertEqual(self.raw("GET", "/pools/cond", headers={"If-None-Match": '"0x1"'}).status_code, 200)
        later = (datetime.now(timezone.utc) + timedelta(minutes=5)).strftime("%a, %d %b %Y %H:%M:%S GMT")
        self.assertEqual(self.raw("GET", "/pools/cond", headers={"If-Modified-Since": later}).status_code, 304)
        # A write: 412 ConditionNotMet unless its ETag is the one named (quoted or not).
        r = self.raw("PATCH", "/pools/cond", {"metadata": [{"name": "a", "value": "1"}]}, headers={"If-Match": '"0x8D0000"'})
        self.assertEqual((r.status_code, r.json()["code"]), (412, "ConditionNotMet"))
        r = self.raw("PATCH", "/pools/cond", {"metadata": [{"name": "a", "value": "1"}]}, headers={"If-Match": etag})
        self.assertEqual(r.status_code, 200)
        earlier = (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%a, %d %b %Y %H:%M:%S GMT")
        r = self.raw("DELETE", "/pools/cond", headers={"If-Unmodified-Since": earlier})
        self.assertEqual((r.status_code, r.json()["code"]), (412, "ConditionNotMet"))
        # Through the SDK's options, on a job.
        self.job("cond-job", "cond")
        job_etag = self.raw("GET", "/jobs/cond-job").headers["ETag"]
        # Nothing a client sees changes by itself in an idle job: neither does its ETag.
        time.sleep(0.5)
        self.assertEqual(self.raw("GET", "/jobs/cond-job").headers["ETag"], job_etag)
        with self.assertRaises(bm.BatchErrorException) as caught:
            self.client.job.patch("cond-job", bm.JobPatchParameter(priority=5), bm.JobPatchOptions(if_match="0x1"))
        self.assertEqual(caught.exception.error.code, "ConditionNotMet")
        self.client.job.patch("cond-job", bm.JobPatchParameter(priority=5), bm.JobPatchOptions(if_match=job_etag))
        self.assertEqual(self.client.job.get("cond-job").priority, 5)
        self.assertTrue(self.client.pool.exists("cond", bm.PoolExistsOptions(if_match="*")))

    def test_task_dependencies(self):
        self.pool("deps", dedicated=2)
        self.client.job.add(bm.JobAddParameter(id="graph", pool_info=bm.PoolInformation(pool_id="deps"),
                                               uses_task_dependencies=True))
        # Task 1 leaves a mark where every node sees it (this machine's disk).
        mark = tempfile.mkdtemp(prefix="bai-deps-")
        self.addCleanup(shutil.rmtree, mark, True)
        seen = [bm.EnvironmentSetting(name="MARK", value=os.path.join(mark, "1"))]
        self.task("graph", "1", "/bin/sh -c 'sleep 0.5; touch $MARK'", environment_settings=seen)
        self.task("graph", "2", "/bin/sh -c 'exit 3'", exit_conditions=bm.ExitConditions(
            default=bm.ExitOptions(dependency_action=bm.DependencyAction.satisfy)))
        self.task("graph", "blocked-parent", "/bin/sh -c 'exit 4'")
        self.task("graph", "after-1", "/bin/sh -c 'test -f $MARK'", environment_settings=seen,
                  depends_on=bm.TaskDependencies(task_ids=["1"]))
        self.task("graph", "after-range", "/bin/true", depends_on=bm.TaskDependencies(
            task_id_ranges=[bm.TaskIdRange(start=1, end=2)]))
        self.task("graph", "never", "/bin/true", depends_on=bm.TaskDependencies(task_ids=["1", "blocked-parent"]))
        after = self.state_of("graph", "after-1", bm.TaskState.completed)
        self.assertEqual(after.execution_info.result, bm.TaskExecutionResult.success)  # 1's file was there
        first = self.state_of("graph", "1", bm.TaskState.completed)
        self.assertGreaterEqual(after.execution_info.start_time, first.execution_info.end_time)  # it waited for 1
        self.assertEqual(self.state_of("graph", "after-range", bm.TaskState.completed).execution_info.exit_code, 0)
        self.state_of("graph", "blocked-parent", bm.TaskState.completed)
        self.assertEqual(self.client.task.get("graph", "never").state, bm.TaskState.active)  # a failure blocks it
        self.assertEqual(self.client.task.get("graph", "after-1").depends_on.task_ids, ["1"])
        # A job that does not use dependencies refuses them; malformed ones name the property.
        self.job("flat", "deps")
        r = self.raw("POST", "/jobs/flat/tasks", {"id": "d", "commandLine": "/bin/true", "dependsOn": {"taskIds": ["x"]}})
        self.assertEqual((r.status_code, r.json()["code"]), (409, "TaskDependenciesNotSpecifiedOnJob"))
        r = self.raw("POST", "/jobs/graph/tasks", {"id": "d", "commandLine": "/bin/true",
                                                    "dependsOn": {"taskIdRanges": [{"start": 5, "end": 2}]}})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidPropertyValue"))
        self.assertIn({"key": "PropertyName", "value": "dependsOn.taskIdRanges"}, r.json()["values"])

    def test_unknown_properties_are_refused_and_nothing_is_stored(self):
        cases = [
            ("/pools", {"id": "unk", "vmSize": "STANDARD_D1", "cloudServiceConfiguration": {"osFamily": "5"}, "bogus": 1}, "bogus"),
            ("/pools", {"id": "unk", "vmSize": "STANDARD_D1", "cloudServiceConfiguration": {"osFamily": "5"},
                        "startTask": {"commandLine": "x", "resourceFiles": [{"httpUrl": "http://127.0.0.1/a", "blob": "b"}]}},
             "startTask.resourceFiles[0].blob"),
            ("/jobs", {"id": "unk", "poolInfo": {"poolId": "p"}, "constraints": {"maxRetries": 1}}, "constraints.maxRetries"),
            ("/jobschedules", {"id": "unk", "schedule": {}, "jobSpecification": {"poolInfo": {"poolId": "p"}, "x": 1}},
             "jobSpecification.x"),
        ]
        for path, body, prop in cases:
            r = self.raw("POST", path, body)
            self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidRequestBody"), r.text)
            self.assertIn({"key": "PropertyName", "value": prop}, r.json()["values"])
        self.assertFalse(self.client.pool.exists("unk"))
        self.assertEqual([j.id for j in self.client.job.list() if j.id == "unk"], [])
        self.assertFalse(self.client.job_schedule.exists("unk"))

    def test_file_ranges_and_conditions(self):
        self.pool("files")
        self.job("files-job", "files")
        self.task("files-job", "talk", "/bin/sh -c 'printf 0123456789'")
        self.state_of("files-job", "talk", bm.TaskState.completed)
        part = b"".join(self.client.file.get_from_task("files-job", "talk", "stdout.txt",
                                                       bm.FileGetFromTaskOptions(ocp_range="bytes=2-5")))
        self.assertEqual(part, b"2345")
        r = self.raw("GET", "/jobs/files-job/tasks/talk/files/stdout.txt", headers={"ocp-range": "bytes=7-"})
        self.assertEqual((r.status_code, r.content), (200, b"789"))
        r = self.raw("GET", "/jobs/files-job/tasks/talk/files/stdout.txt", headers={"ocp-range": "lines=1-2"})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidHeaderValue"))
        r = self.raw("GET", "/jobs/files-job/tasks/talk/files/stdout.txt", headers={"ocp-range": "bytes=50-60"})
        self.assertEqual((r.status_code, r.json()["code"]), (416, "InvalidRange"))
        later = (datetime.now(timezone.utc) + timedelta(minutes=5)).strftime("%a, %d %b %Y %H:%M:%S GMT")
        earlier = (datetime.now(timezone.utc) - timedelta(hours=1)).strftime("%a, %d %b %Y %H:%M:%S GMT")
        self.assertEqual(self.raw("GET", "/jobs/files-job/tasks/talk/files/stdout.txt", headers={"If-Modified-Since": later}).status_code, 304)
        self.assertEqual(self.raw("GET", "/jobs/files-job/tasks/talk/files/stdout.txt",
                                  headers={"If-Modified-Since": earlier}).content, b"0123456789")
        r = self.raw("GET", "/jobs/files-job/tasks/talk/files/stdout.txt", headers={"If-Unmodified-Since": earlier})
        self.assertEqual((r.status_code, r.json()["code"]), (412, "ConditionNotMet"))

    def test_a_job_manager_task_starts_with_its_job_and_ends_it(self):
        self.pool("managed")
        self.client.job.add(bm.JobAddParameter(id="managed-job", pool_info=bm.PoolInformation(pool_id="managed"),
                                               job_manager_task=bm.JobManagerTask(id="manager", command_line="/bin/sh -c 'sleep 0.3'")))
        job = self.client.job.get("managed-job")
        self.assertEqual((job.job_manager_task.kill_job_on_completion, job.job_manager_task.run_exclusive), (True, True))
        self.assertEqual([t.id for t in self.client.task.list("managed-job")], ["manager"])
        self.state_of("managed-job", "manager", bm.TaskState.completed)
        done = self.job_state("managed-job", bm.JobState.completed)
        self.assertEqual(done.execution_info.terminate_reason, "JMComplete")
        # Without killJobOnCompletion the job goes on.
        self.client.job.add(bm.JobAddParameter(id="kept-job", pool_info=bm.PoolInformation(pool_id="managed"),
                                               job_manager_task=bm.JobManagerTask(id="m", command_line="/bin/true",
                                                                                  kill_job_on_completion=False)))
        self.state_of("kept-job", "m", bm.TaskState.completed)
        self.assertEqual(self.client.job.get("kept-job").state, bm.JobState.active)
        r = self.raw("POST", "/jobs", {"id": "bad-manager", "poolInfo": {"poolId": "managed"}, "jobManagerTask": {"id": "m"}})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "MissingRequiredProperty"))
        self.assertIn({"key": "PropertyName", "value": "jobManagerTask.commandLine"}, r.json()["values"])

    def test_a_job_manager_runs_alone_on_its_node_and_only_on_a_dedicated_one_when_asked(self):
        self.pool("exclusive", slots=4)
        self.client.job.add(bm.JobAddParameter(id="alone", pool_info=bm.PoolInformation(pool_id="exclusive"),
                                               job_manager_task=bm.JobManagerTask(id="manager", command_line="/bin/sleep 1",
                                                                                  kill_job_on_completion=False)))
        self.state_of("alone", "manager", bm.TaskState.running)
        self.task("alone", "worker", "/bin/true")
        manager = self.state_of("alone", "manager", bm.TaskState.completed)
        worker = self.state_of("alone", "worker", bm.TaskState.completed)
        # The node's other three slots stayed free while the manager ran (runExclusive by default).
        self.assertGreaterEqual(worker.execution_info.start_time, manager.execution_info.end_time)
        # allowLowPriorityNode false: a pool of low-priority nodes never runs it; its other tasks run.
        self.pool("spot-only", dedicated=0, low_priority=1)
        self.client.job.add(bm.JobAddParameter(id="no-spot", pool_info=bm.PoolInformation(pool_id="spot-only"),
                                               job_manager_task=bm.JobManagerTask(id="manager", command_line="/bin/true",
                                                                                  allow_low_priority_node=False,
                                                                                  kill_job_on_completion=False)))
        self.task("no-spot", "worker", "/bin/true")
        self.state_of("no-spot", "worker", bm.TaskState.completed)
        self.assertEqual(self.client.task.get("no-spot", "manager").state, bm.TaskState.active)

    def test_a_failed_task_is_reactivated(self):
        self.pool("react")
        self.job("react-job", "react")
        self.task("react-job", "flaky", "/bin/sh -c 'test -f $AZ_BATCH_NODE_SHARED_DIR/ok'")
        failed = self.state_of("react-job", "flaky", bm.TaskState.completed)
        self.assertEqual(failed.execution_info.result, bm.TaskExecutionResult.failure)
        self.assertEqual(self.error(self.client.task.reactivate, "react-job", "nope").code, "TaskNotFound")
        node_id = failed.node_info.node_id
        # Make it pass, then reactivate it: it runs again from a retry count of 0.
        self.task("react-job", "fix", "/bin/sh -c 'touch $AZ_BATCH_NODE_SHARED_DIR/ok'")
        self.state_of("react-job", "fix", bm.TaskState.completed)
        self.client.task.reactivate("react-job", "flaky")
        again = self.state_of("react-job", "flaky", bm.TaskState.completed)
        self.assertEqual((again.execution_info.result, again.execution_info.retry_count), (bm.TaskExecutionResult.success, 0))
        self.assertEqual(again.node_info.node_id, node_id)
        self.assertEqual(self.error(self.client.task.reactivate, "react-job", "flaky").code, "TaskCompletedSuccessfully")
        self.task("react-job", "slow", "/bin/sleep 30")
        self.state_of("react-job", "slow", bm.TaskState.running)
        self.assertEqual(self.error(self.client.task.reactivate, "react-job", "slow").code, "TaskNotCompleted")
        self.client.task.terminate("react-job", "slow")
        self.assertEqual(list(self.client.task.list_subtasks("react-job", "fix").value), [])

    def test_node_extensions(self):
        config = vm_configuration()
        config.extensions = [bm.VMExtension(name="monitor", publisher="Microsoft.Azure.Monitor", type="AzureMonitorLinuxAgent",
                                            type_handler_version="1.0")]
        self.client.pool.add(bm.PoolAddParameter(id="ext", vm_size="STANDARD_D1", virtual_machine_configuration=config,
                                                 target_dedicated_nodes=1))
        node = harness.wait_for(lambda: next(iter(self.client.compute_node.list("ext")), None), what="a node")
        extensions = list(self.client.compute_node_extension.list("ext", node.id))
        self.assertEqual([(e.vm_extension.name, e.provisioning_state) for e in extensions], [("monitor", "Succeeded")])
        one = self.client.compute_node_extension.get("ext", node.id, "monitor")
        self.assertEqual(one.instance_view.statuses[0].code, "ProvisioningState/succeeded")
        self.assertEqual(self.error(self.client.compute_node_extension.get, "ext", node.id, "nope").code, "NodeExtensionNotFound")


if __name__ == "__main__":
    import unittest
    unittest.main()
