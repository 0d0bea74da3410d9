"""The Batch account's statistics through the azure-batch SDK, computed from what ran: the
lifetime statistics of its jobs (tasks succeeded, failed, retried; kept when a job is deleted)
and pools (dedicated core time), and the pools' usage metrics by aggregation interval."""
from datetime import datetime, timedelta, timezone

from azure.batch import models as bm

import harness
from test_batch_pools import BatchTestCase


class BatchStatistics(BatchTestCase):
    def test_lifetime_statistics_count_what_ran(self):
        empty = self.client.job.get_all_lifetime_statistics()
        self.assertEqual((empty.num_succeeded_tasks, empty.num_failed_tasks, empty.wall_clock_time), (0, 0, timedelta(0)))
        self.pool("stats", dedicated=1)
        self.job("counted", "stats")
        self.task("counted", "ok", "/bin/sh -c 'sleep 0.3'")
        self.task("counted", "bad", "/bin/sh -c 'exit 3'", constraints=bm.TaskConstraints(max_task_retry_count=1))
        self.state_of("counted", "ok", bm.TaskState.completed)
        self.state_of("counted", "bad", bm.TaskState.completed)
        stats = self.client.job.get_all_lifetime_statistics()
        self.assertEqual((stats.num_succeeded_tasks, stats.num_failed_tasks, stats.num_task_retries), (1, 1, 1))
        self.assertGreaterEqual(stats.wall_clock_time, timedelta(seconds=0.3))
        self.assertTrue(stats.url.endswith("/lifetimejobstats"))
        # A deleted job's tasks stay counted.
        self.client.job.delete("counted")
        harness.wait_for(lambda: not [j for j in self.client.job.list() if j.id == "counted"], what="the job to go")
        after = self.client.job.get_all_lifetime_statistics()
        self.assertEqual((after.num_succeeded_tasks, after.num_failed_tasks, after.num_task_retries), (1, 1, 1))
        self.assertEqual(after.start_time, empty.start_time)

        pools = self.client.pool.get_all_lifetime_statistics()
        self.assertGreater(pools.usage_stats.dedicated_core_time, timedelta(0))
        self.assertEqual(pools.resource_stats.avg_cpu_percentage, 0.0)
        # The last whole half hour had none of this; asked from an hour ago, the pool's core hours show.
        now = datetime.now(timezone.utc)
        recent = list(self.client.pool.list_usage_metrics(bm.PoolListUsageMetricsOptions(
            start_time=now - timedelta(hours=1), end_time=now + timedelta(minutes=1))))
        mine = [m for m in recent if m.pool_id == "stats"]
        self.assertTrue(mine, recent)
        self.assertGreater(sum(m.total_core_hours for m in mine), 0)
        self.assertEqual(mine[0].vm_size, "standard_d1")
        self.assertEqual((mine[0].end_time - mine[0].start_time), timedelta(minutes=30))
        # A pool's and a job's own, with $expand=stats.
        pool = self.client.pool.get("stats", bm.PoolGetOptions(expand="stats"))
        self.assertGreater(pool.stats.usage_stats.dedicated_core_time, timedelta(0))
        self.job("expanded", "stats")
        self.task("expanded", "one", "/bin/true")
        self.state_of("expanded", "one", bm.TaskState.completed)
        job = self.client.job.get("expanded", bm.JobGetOptions(expand="stats"))
        self.assertEqual((job.stats.num_succeeded_tasks, job.stats.num_failed_tasks), (1, 0))
        self.assertIsNone(self.client.job.get("expanded").stats)
        listed = [j for j in self.client.job.list(bm.JobListOptions(expand="stats")) if j.id == "expanded"]
        self.assertEqual(listed[0].stats.num_succeeded_tasks, 1)
        r = self.raw("GET", "/jobs/expanded?$expand=tasks")
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidQueryParameterValue"))
        r = self.raw("GET", "/poolusagemetrics?starttime=yesterday")
        self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidQueryParameterValue"))
        self.assertIn({"key": "QueryParameterName", "value": "starttime"}, r.json()["values"])


if __name__ == "__main__":
    import unittest
    unittest.main()
