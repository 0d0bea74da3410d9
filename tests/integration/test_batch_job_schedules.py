"""The Azure Batch service's job schedules through the azure-batch SDK: add, get, exists, list,
list the jobs a schedule made, patch, update, disable, enable, terminate, delete; the job a
schedule makes runs its tasks on the pool; a schedule survives a restart; bad schedules refused
naming the property. (Recurrence over days is the scenario batch_job_schedule's, on a virtual
clock.)"""
import datetime
import unittest

from azure.batch import models as bm
from azure.batch import BatchServiceClient
from azure.batch.batch_auth import SharedKeyCredentials

import harness
from test_batch_pools import DEV_BATCH, DEV_BATCH_KEY, BatchTestCase, vm_configuration


def daily(pool_id="work", **schedule):
    return bm.JobScheduleAddParameter(
        id="nightly", schedule=bm.Schedule(recurrence_interval="P1D", start_window="PT1H", **schedule),
        job_specification=bm.JobSpecification(pool_info=bm.PoolInformation(pool_id=pool_id),
                                              constraints=bm.JobConstraints(max_task_retry_count=2),
                                              on_all_tasks_complete="terminatejob"),
        metadata=[bm.MetadataItem(name="team", value="vision")])


class BatchJobSchedules(BatchTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pool(cls, "work")

    def tearDown(self):
        for schedule in self.client.job_schedule.list():
            self.client.job_schedule.delete(schedule.id)
        harness.wait_for(lambda: not list(self.client.job_schedule.list()) and not list(self.client.job.list()),
                         what="the schedules and their jobs to be gone")

    def test_a_schedule_makes_its_first_job_at_once(self):
        self.client.job_schedule.add(daily())
        self.assertTrue(self.client.job_schedule.exists("nightly"))
        self.assertFalse(self.client.job_schedule.exists("weekly"))
        schedule = harness.wait_for(lambda: (lambda s: s if s.execution_info.recent_job else None)(
            self.client.job_schedule.get("nightly")), what="the schedule's first job")
        self.assertEqual(schedule.state, bm.JobScheduleState.active)
        self.assertEqual(schedule.execution_info.recent_job.id, "nightly:job-1")
        self.assertTrue(schedule.execution_info.recent_job.url.endswith("/jobs/nightly:job-1"))
        # The next run is one recurrence after the first.
        self.assertGreaterEqual(schedule.execution_info.next_run_time - schedule.creation_time, datetime.timedelta(hours=23))
        spec = schedule.job_specification
        self.assertEqual((spec.priority, spec.uses_task_dependencies, spec.on_task_failure, spec.constraints.max_task_retry_count),
                         (0, False, bm.OnTaskFailure.no_action, 2))
        self.assertEqual([s.id for s in self.client.job_schedule.list()], ["nightly"])
        jobs = list(self.client.job.list_from_job_schedule("nightly"))
        self.assertEqual([j.id for j in jobs], ["nightly:job-1"])
        self.assertEqual((jobs[0].pool_info.pool_id, jobs[0].constraints.max_task_retry_count), ("work", 2))
        # Its job runs tasks as any job, and completes when they have (terminatejob).
        self.task("nightly:job-1", "t1", "/bin/sh -c 'echo scheduled'")
        self.state_of("nightly:job-1", "t1", bm.TaskState.completed)
        self.job_state("nightly:job-1", bm.JobState.completed)
        out = self.client.file.get_from_task("nightly:job-1", "t1", "stdout.txt")
        self.assertEqual(b"".join(out), b"scheduled\n")
        # A daily schedule stays active with its job done, waiting for the next day.
        self.assertEqual(self.client.job_schedule.get("nightly").state, bm.JobScheduleState.active)
        self.assertEqual(len(list(self.client.job.list_from_job_schedule("nightly"))), 1)

    def test_patch_update_disable_enable_terminate(self):
        self.client.job_schedule.add(daily(do_not_run_until="2099-01-01T00:00:00Z"))
        schedule = self.client.job_schedule.get("nightly")
        self.assertIsNone(schedule.execution_info.recent_job)
        self.assertEqual(schedule.execution_info.next_run_time.year, 2099)
        # A patch replaces the schedule it names, keeps the rest.
        self.client.job_schedule.patch("nightly", bm.JobSchedulePatchParameter(
            schedule=bm.Schedule(recurrence_interval="PT5H", do_not_run_until="2098-01-01T00:00:00Z")))
        patched = self.client.job_schedule.get("nightly")
        self.assertEqual((patched.schedule.recurrence_interval.total_seconds(), patched.schedule.start_window),
                         (5 * 3600, None))
        self.assertEqual(patched.execution_info.next_run_time.year, 2098)
        self.assertEqual([(m.name, m.value) for m in patched.metadata], [("team", "vision")])
        # An update replaces everything: metadata left out is gone.
        self.client.job_schedule.update("nightly", bm.JobScheduleUpdateParameter(
            schedule=bm.Schedule(recurrence_interval="PT10H", do_not_run_until="2097-01-01T00:00:00Z"),
            job_specification=bm.JobSpecification(pool_info=bm.PoolInformation(pool_id="work"), priority=7)))
        updated = self.client.job_schedule.get("nightly")
        self.assertEqual((updated.job_specification.priority, updated.metadata), (7, None))
        self.client.job_schedule.disable("nightly")
        self.assertEqual(self.client.job_schedule.get("nightly").state, bm.JobScheduleState.disabled)
        self.assertEqual(self.error(self.client.job_schedule.disable, "nightly").code, "JobScheduleDisabled")
        self.client.job_schedule.enable("nightly")
        self.assertEqual(self.client.job_schedule.get("nightly").state, bm.JobScheduleState.active)
        self.client.job_schedule.terminate("nightly")
        done = harness.wait_for(lambda: (lambda s: s if s.state == bm.JobScheduleState.completed else None)(
            self.client.job_schedule.get("nightly")), what="the schedule to complete")
        self.assertIsNotNone(done.execution_info.end_time)
        self.assertEqual(self.error(self.client.job_schedule.enable, "nightly").code, "JobScheduleCompleted")

    def test_terminate_ends_the_active_job_and_delete_takes_the_jobs(self):
        self.client.job_schedule.add(daily())
        harness.wait_for(lambda: list(self.client.job.list_from_job_schedule("nightly")), what="the first job")
        self.task("nightly:job-1", "long", "/bin/sleep 60")
        self.state_of("nightly:job-1", "long", bm.TaskState.running)
        self.client.job_schedule.terminate("nightly")
        job = self.job_state("nightly:job-1", bm.JobState.completed)
        self.assertEqual(job.execution_info.terminate_reason, "UserTerminate")
        harness.wait_for(lambda: self.client.job_schedule.get("nightly").state == bm.JobScheduleState.completed,
                         what="the schedule to complete")
        self.client.job_schedule.delete("nightly")
        harness.wait_for(lambda: not self.client.job_schedule.exists("nightly"), what="the schedule to go")
        self.assertEqual(self.error(self.client.job.get, "nightly:job-1").code, "JobNotFound")
        self.assertEqual(self.error(self.client.job_schedule.get, "nightly").code, "JobScheduleNotFound")

    def test_bad_schedules_are_refused_naming_the_property(self):
        cases = [
            ({"id": "s", "jobSpecification": {"poolInfo": {"poolId": "work"}}}, "MissingRequiredProperty", "schedule"),
            ({"id": "s", "schedule": {}}, "MissingRequiredProperty", "jobSpecification"),
            ({"id": "s", "schedule": {"recurrenceInterval": "PT10S"}, "jobSpecification": {"poolInfo": {"poolId": "work"}}},
             "InvalidPropertyValue", "schedule.recurrenceInterval"),
            ({"id": "s", "schedule": {"doNotRunUntil": "soon"}, "jobSpecification": {"poolInfo": {"poolId": "work"}}},
             "InvalidPropertyValue", "schedule.doNotRunUntil"),
            ({"id": "s", "schedule": {}, "jobSpecification": {"poolInfo": {}}}, "MissingRequiredProperty",
             "jobSpecification.poolInfo.poolId"),
            ({"id": "s", "schedule": {}, "jobSpecification": {"poolInfo": {"poolId": "work"}, "priority": 5000}},
             "InvalidPropertyValue", "jobSpecification.priority"),
            ({"id": "a:b", "schedule": {}, "jobSpecification": {"poolInfo": {"poolId": "work"}}}, "InvalidPropertyValue", "id"),
        ]
        for body, code, prop in cases:
            r = self.raw("POST", "/jobschedules", body)
            self.assertEqual((r.status_code, r.json()["code"]), (400, code), body)
            self.assertIn({"key": "PropertyName", "value": prop}, r.json()["values"], body)
        self.assertEqual(self.raw("POST", "/jobschedules", "{not json").status_code, 400)
        self.assertEqual(list(self.client.job_schedule.list()), [])
        self.client.job_schedule.add(daily(do_not_run_until="2099-01-01T00:00:00Z"))
        self.assertEqual(self.error(self.client.job_schedule.add, daily()).code, "JobScheduleExists")
        r = self.raw("PATCH", "/jobschedules/nightly", {"state": "completed"})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidPropertyValue"))
        r = self.raw("PUT", "/jobschedules/nightly", {"schedule": {}})
        self.assertEqual((r.status_code, r.json()["code"]), (400, "MissingRequiredProperty"))


class BatchJobScheduleRestart(unittest.TestCase):
    def test_a_schedule_survives_a_restart(self):
        emu = harness.Emulator().start()
        location = emu.location
        emu.owns_location = False
        try:
            client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=emu.endpoints["batch"])
            client.pool.add(bm.PoolAddParameter(id="p", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
                                                target_dedicated_nodes=0))
            client.job_schedule.add(daily(pool_id="p"))
            harness.wait_for(lambda: list(client.job.list_from_job_schedule("nightly")), what="the first job")
            before = client.job_schedule.get("nightly")
            emu.close()
            emu = harness.Emulator(location=location).start()
            client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=emu.endpoints["batch"])
            after = client.job_schedule.get("nightly")
            self.assertEqual((after.state, after.execution_info.next_run_time, after.execution_info.recent_job.id),
                             (before.state, before.execution_info.next_run_time, "nightly:job-1"))
            self.assertEqual([j.id for j in client.job.list_from_job_schedule("nightly")], ["nightly:job-1"])
        finally:
            emu.owns_location = True
            emu.close()


if __name__ == "__main__":
    unittest.main()
