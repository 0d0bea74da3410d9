"""Job preparation and release tasks through the azure-batch SDK: the preparation runs on a node
before the job's first task there (once per node, with its retries), the job's tasks see its
directory; a node where it failed runs none of the job's tasks; when the job ends, the release
task runs on every node that prepared; jobpreparationandreleasetaskstatus shows both per node;
a reboot prepares again (unless rerunOnNodeRebootAfterSuccess is false); a release task is
stopped at its maxWallClockTime."""
from datetime import timedelta

from azure.batch import models as bm

import harness
from test_batch_pools import BatchTestCase


class BatchJobPreparation(BatchTestCase):
    def statuses(self, job_id):
        return {s.node_id: s for s in self.client.job.list_preparation_and_release_task_status(job_id)}

    def test_preparation_before_the_tasks_and_release_after_the_job(self):
        self.pool("prep", dedicated=2)
        self.client.job.add(bm.JobAddParameter(
            id="prepared", pool_info=bm.PoolInformation(pool_id="prep"),
            job_preparation_task=bm.JobPreparationTask(
                command_line="/bin/sh -c 'echo ready > $AZ_BATCH_TASK_WORKING_DIR/marker; echo prepared $AZ_BATCH_NODE_ID'"),
            job_release_task=bm.JobReleaseTask(command_line="/bin/sh -c 'echo released'")))
        self.assertEqual(self.client.job.list_preparation_and_release_task_status("prepared").current_page, [])
        self.task("prepared", "t1", "/bin/sh -c 'cat $AZ_BATCH_JOB_PREP_WORKING_DIR/marker'")
        task = self.state_of("prepared", "t1", bm.TaskState.completed)
        self.assertEqual(task.execution_info.result, bm.TaskExecutionResult.success)
        self.assertEqual(b"".join(self.client.file.get_from_task("prepared", "t1", "stdout.txt")), b"ready\n")
        node_id = task.node_info.node_id
        status = self.statuses("prepared")
        self.assertEqual(list(status), [node_id])  # only where a task of the job ran
        prep = status[node_id].job_preparation_task_execution_info
        self.assertEqual((prep.state, prep.result, prep.exit_code, prep.retry_count),
                         (bm.JobPreparationTaskState.completed, bm.TaskExecutionResult.success, 0, 0))
        self.assertEqual(prep.task_root_directory, "workitems/prepared/job-1/jobpreparation")
        self.assertTrue(prep.task_root_directory_url.endswith(f"/pools/prep/nodes/{node_id}/files/workitems/prepared/job-1/jobpreparation"))
        self.assertIsNone(status[node_id].job_release_task_execution_info)
        out = b"".join(self.client.file.get_from_compute_node("prep", node_id, "workitems/prepared/job-1/jobpreparation/stdout.txt"))
        self.assertEqual(out, f"prepared {node_id}\n".encode())
        # The job ends: the release task runs where the preparation did.
        self.client.job.terminate("prepared")
        released = harness.wait_for(lambda: (lambda s: s if s and s[node_id].job_release_task_execution_info and
                                             s[node_id].job_release_task_execution_info.state == bm.JobReleaseTaskState.completed
                                             else None)(self.statuses("prepared")), what="the release task")
        self.assertEqual(released[node_id].job_release_task_execution_info.exit_code, 0)
        out = b"".join(self.client.file.get_from_compute_node("prep", node_id, "workitems/prepared/job-1/jobrelease/stdout.txt"))
        self.assertEqual(out, b"released\n")

    def test_a_node_whose_preparation_failed_runs_none_of_the_jobs_tasks(self):
        self.pool("prep-fail", dedicated=1)
        self.client.job.add(bm.JobAddParameter(
            id="unprepared", pool_info=bm.PoolInformation(pool_id="prep-fail"),
            job_preparation_task=bm.JobPreparationTask(command_line="/bin/sh -c 'exit 5'",
                                                        constraints=bm.TaskConstraints(max_task_retry_count=1))))
        self.task("unprepared", "never", "/bin/true")
        node_id = harness.wait_for(lambda: next(iter(self.statuses("unprepared")), None), what="a preparation")
        prep = harness.wait_for(lambda: (lambda p: p if p.state == bm.JobPreparationTaskState.completed else None)(
            self.statuses("unprepared")[node_id].job_preparation_task_execution_info), what="the preparation to end")
        self.assertEqual((prep.result, prep.exit_code, prep.retry_count, prep.failure_info.code),
                         (bm.TaskExecutionResult.failure, 5, 1, "FailureExitCode"))
        self.assertEqual(self.client.task.get("unprepared", "never").state, bm.TaskState.active)
        # Another job on the same node runs.
        self.job("plain", "prep-fail")
        self.task("plain", "t", "/bin/true")
        self.assertEqual(self.state_of("plain", "t", bm.TaskState.completed).node_info.node_id, node_id)
        self.assertEqual(self.client.task.get("unprepared", "never").state, bm.TaskState.active)

    def test_a_reboot_prepares_again_unless_the_job_says_not_after_success(self):
        self.pool("prep-reboot", dedicated=1)
        node_id = next(iter(self.client.compute_node.list("prep-reboot"))).id
        for job_id, rerun in (("again", None), ("once", False)):
            self.client.job.add(bm.JobAddParameter(
                id=job_id, pool_info=bm.PoolInformation(pool_id="prep-reboot"),
                job_preparation_task=bm.JobPreparationTask(
                    command_line=f"/bin/sh -c 'echo {job_id} >> $AZ_BATCH_NODE_SHARED_DIR/preparations'",
                    rerun_on_node_reboot_after_success=rerun)))
            self.task(job_id, "before", "/bin/true")
            self.state_of(job_id, "before", bm.TaskState.completed)
        self.client.compute_node.reboot("prep-reboot", node_id)
        self.node_state("prep-reboot", node_id, bm.ComputeNodeState.rebooting)
        self.node_state("prep-reboot", node_id, bm.ComputeNodeState.idle, timeout=60)
        for job_id in ("again", "once"):
            self.task(job_id, "after", "/bin/true")
            self.state_of(job_id, "after", bm.TaskState.completed)
        lines = b"".join(self.client.file.get_from_compute_node("prep-reboot", node_id, "shared/preparations")).decode().split()
        self.assertEqual(sorted(lines), ["again", "again", "once"])

    def test_a_release_task_past_its_max_wall_clock_time_is_stopped(self):
        self.pool("release-clock", dedicated=1)
        self.client.job.add(bm.JobAddParameter(
            id="slow-release", pool_info=bm.PoolInformation(pool_id="release-clock"),
            job_preparation_task=bm.JobPreparationTask(command_line="/bin/true"),
            job_release_task=bm.JobReleaseTask(command_line="/bin/sleep 300", max_wall_clock_time=timedelta(seconds=1))))
        self.task("slow-release", "t", "/bin/true")
        node_id = self.state_of("slow-release", "t", bm.TaskState.completed).node_info.node_id
        self.client.job.terminate("slow-release")
        release = harness.wait_for(lambda: (lambda r: r if r and r.state == bm.JobReleaseTaskState.completed else None)(
            self.statuses("slow-release")[node_id].job_release_task_execution_info), timeout=30, what="the release task to end")
        self.assertEqual((release.result, release.failure_info.code), (bm.TaskExecutionResult.failure, "MaxWallClockTimeExpiry"))


if __name__ == "__main__":
    import unittest
    unittest.main()
