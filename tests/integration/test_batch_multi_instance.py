"""Multi-instance (MPI) tasks through the azure-batch SDK: a primary and its subtasks on as many
nodes, the common resource files on each, the coordination command everywhere before the
application command on the primary, ssh and mpirun between the nodes, subtasksinfo; a failing
coordination command fails the task; what the coordination commands leave running ends with the
primary; a node lost requeues the task; pools without inter-node communication, or with too few
nodes, keep it waiting; bad settings refused naming the property."""
import os
import shutil
import time
import unittest
from datetime import datetime, timedelta

from azure.batch import models as bm
from azure.storage.blob import BlobServiceClient, generate_blob_sas

import harness
from test_batch_pools import BatchTestCase, vm_configuration


def read_node_file(client, pool_id, node_id, path):
    return b"".join(client.file.get_from_compute_node(pool_id, node_id, path)).decode()


class BatchMultiInstance(BatchTestCase):
    def mpi_pool(self, pool_id, dedicated=0, low_priority=0, inter_node=True):
        self.client.pool.add(bm.PoolAddParameter(
            id=pool_id, vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(),
            target_dedicated_nodes=dedicated, target_low_priority_nodes=low_priority,
            enable_inter_node_communication=inter_node))
        harness.wait_for(lambda: all(n.state == bm.ComputeNodeState.idle for n in self.client.compute_node.list(pool_id)) and
                         len(list(self.client.compute_node.list(pool_id))) == dedicated + low_priority,
                         what=f"the nodes of {pool_id} to be idle")

    def multi(self, job_id, task_id, command_line, instances, coordination, **kwargs):
        self.task(job_id, task_id, command_line, multi_instance_settings=bm.MultiInstanceSettings(
            number_of_instances=instances, coordination_command_line=coordination, **kwargs))

    def test_primary_and_subtasks_coordinate_then_the_primary_reaches_each_node_by_ssh(self):
        blobs = BlobServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
        blobs.create_container("mpi")
        blobs.get_blob_client("mpi", "hosts.cfg").upload_blob(b"common to all\n")
        sas = generate_blob_sas(harness.DEV_ACCOUNT, "mpi", "hosts.cfg", account_key=harness.DEV_KEY, permission="r",
                                expiry=datetime.utcnow() + timedelta(hours=1))
        url = f"{self.emu.endpoints['blob']}/{harness.DEV_ACCOUNT}/mpi/hosts.cfg?{sas}"
        self.mpi_pool("mpi3", dedicated=3)
        self.job("mpi-job", "mpi3")
        coordination = ("/bin/sh -c 'cat $AZ_BATCH_TASK_SHARED_DIR/hosts.cfg; "
                        "echo $AZ_BATCH_NODE_ID $AZ_BATCH_IS_CURRENT_NODE_MASTER $AZ_BATCH_MASTER_NODE > "
                        "$AZ_BATCH_TASK_SHARED_DIR/coordinated'")
        # Each node's own coordinated file, read through ssh from the primary.
        app = ("/bin/sh -c 'echo hosts $AZ_BATCH_HOST_LIST nodes $AZ_BATCH_NODE_LIST; "
               "for h in $(echo $AZ_BATCH_HOST_LIST | tr , \" \"); do ssh $h cat \\$AZ_BATCH_TASK_SHARED_DIR/coordinated; done'")
        self.multi("mpi-job", "mi", app, 3, coordination,
                   common_resource_files=[bm.ResourceFile(http_url=url, file_path="hosts.cfg")])
        task = self.state_of("mpi-job", "mi", bm.TaskState.completed)
        self.assertEqual((task.execution_info.result, task.execution_info.exit_code), (bm.TaskExecutionResult.success, 0),
                         task.execution_info.failure_info)
        primary = task.node_info.node_id
        subtasks = list(self.client.task.list_subtasks("mpi-job", "mi").value)
        self.assertEqual([s.id for s in subtasks], [1, 2])
        nodes = [primary] + [s.node_info.node_id for s in subtasks]
        self.assertEqual(len(set(nodes)), 3)
        for s in subtasks:
            self.assertEqual((s.state, s.exit_code, s.result), (bm.SubtaskState.completed, 0, bm.TaskExecutionResult.success))
            self.assertEqual(s.node_info.task_root_directory, "workitems/mpi-job/job-1/mi")
            self.assertTrue(s.node_info.task_root_directory_url.endswith(
                f"/pools/mpi3/nodes/{s.node_info.node_id}/files/workitems/mpi-job/job-1/mi"))
            self.assertIsNotNone(s.start_time)
            self.assertIsNotNone(s.end_time)
            # A subtask's stdout is its coordination command's.
            self.assertEqual(read_node_file(self.client, "mpi3", s.node_info.node_id, "workitems/mpi-job/job-1/mi/stdout.txt"),
                             "common to all\n")
        addresses = {n.id: n.ip_address for n in self.client.compute_node.list("mpi3")}
        hosts = ",".join(addresses[n] for n in nodes)
        master = f"{addresses[primary]}:6000"
        out = b"".join(self.client.file.get_from_task("mpi-job", "mi", "stdout.txt")).decode().splitlines()
        # The primary's coordination command, then its command.
        self.assertEqual(out[0], "common to all")
        self.assertEqual(out[1], f"hosts {hosts} nodes {hosts.replace(',', ';')}")
        self.assertEqual(out[2:], [f"{primary} true {master}"] + [f"{n} false {master}" for n in nodes[1:]])

    @unittest.skipUnless(shutil.which("mpirun"), "OpenMPI's mpirun is not installed")
    def test_mpirun_starts_its_ranks_on_the_tasks_nodes(self):
        self.mpi_pool("mpi2", dedicated=2)
        self.job("mpirun", "mpi2")
        self.multi("mpirun", "ranks",
                   "/bin/sh -c 'mpirun -host $AZ_BATCH_HOST_LIST -np 2 /bin/sh -c "
                   "\"echo rank \\$OMPI_COMM_WORLD_RANK on \\$AZ_BATCH_NODE_ID\"'", 2, "/bin/true")
        task = self.state_of("mpirun", "ranks", bm.TaskState.completed, timeout=60)
        err = b"".join(self.client.file.get_from_task("mpirun", "ranks", "stderr.txt")).decode()
        self.assertEqual(task.execution_info.exit_code, 0, err)
        subtask = next(iter(self.client.task.list_subtasks("mpirun", "ranks").value))
        out = sorted(b"".join(self.client.file.get_from_task("mpirun", "ranks", "stdout.txt")).decode().splitlines())
        self.assertEqual(out, [f"rank 0 on {task.node_info.node_id}", f"rank 1 on {subtask.node_info.node_id}"])

    def test_a_failing_coordination_command_fails_the_task_and_stops_the_others(self):
        self.mpi_pool("coord-fail", dedicated=2)
        self.job("coord-fail", "coord-fail")
        started = time.monotonic()
        self.multi("coord-fail", "mi", "/bin/sh -c 'echo never ran'", 2,
                   "/bin/sh -c 'if [ $AZ_BATCH_IS_CURRENT_NODE_MASTER = true ]; then sleep 600; else exit 3; fi'")
        task = self.state_of("coord-fail", "mi", bm.TaskState.completed, timeout=60)
        self.assertLess(time.monotonic() - started, 120)  # the primary's sleep was stopped
        info = task.execution_info
        self.assertEqual((info.result, info.exit_code, info.failure_info.code),
                         (bm.TaskExecutionResult.failure, 3, "FailureExitCode"))
        subtask = next(iter(self.client.task.list_subtasks("coord-fail", "mi").value))
        self.assertEqual((subtask.state, subtask.exit_code, subtask.result, subtask.failure_info.code),
                         (bm.SubtaskState.completed, 3, bm.TaskExecutionResult.failure, "FailureExitCode"))
        out = b"".join(self.client.file.get_from_task("coord-fail", "mi", "stdout.txt")).decode()
        self.assertNotIn("never ran", out)

    def test_what_the_coordination_commands_started_ends_with_the_primary(self):
        self.mpi_pool("daemons", dedicated=2)
        self.job("daemons", "daemons")
        self.multi("daemons", "mi", "/bin/sh -c 'sleep 1; echo done'", 2,
                   "/bin/sh -c 'sleep 300 > /dev/null 2>&1 & echo $! > $AZ_BATCH_TASK_SHARED_DIR/daemon.pid'")
        task = self.state_of("daemons", "mi", bm.TaskState.completed, timeout=60)
        self.assertEqual(task.execution_info.exit_code, 0)
        subtask = next(iter(self.client.task.list_subtasks("daemons", "mi").value))
        for node_id in (task.node_info.node_id, subtask.node_info.node_id):
            pid = int(read_node_file(self.client, "daemons", node_id, "workitems/daemons/job-1/mi/daemon.pid"))
            harness.wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
                             open(f"/proc/{pid}/stat").read().split()[2] == "Z",
                             timeout=10, what=f"the daemon {pid} on {node_id} to end")

    def test_a_subtask_node_preempted_requeues_the_whole_task(self):
        self.mpi_pool("spot-mpi", low_priority=2)
        self.job("spot-mpi", "spot-mpi")
        self.multi("spot-mpi", "mi", "/bin/sh -c 'sleep 2; echo primary done'", 2, "/bin/sh -c 'echo coordinated'")
        self.state_of("spot-mpi", "mi", bm.TaskState.running)
        subtask = harness.wait_for(lambda: next(iter(self.client.task.list_subtasks("spot-mpi", "mi").value), None),
                                   what="the subtask")
        self.assertEqual(subtask.state, bm.SubtaskState.running)
        answer = self.preempt("spot-mpi", subtask.node_info.node_id, {"recoverAfter": "PT1S"})
        self.assertEqual(answer.status_code, 200, answer.text)
        self.assertEqual(answer.json()["requeuedTasks"], ["spot-mpi/mi"])
        task = self.state_of("spot-mpi", "mi", bm.TaskState.completed, timeout=60)
        self.assertEqual((task.execution_info.exit_code, task.execution_info.requeue_count, task.execution_info.retry_count),
                         (0, 1, 0))

    def test_it_waits_for_enough_idle_nodes_of_a_pool_with_inter_node_communication(self):
        self.mpi_pool("small", dedicated=1)
        self.mpi_pool("no-comm", dedicated=2, inter_node=False)
        self.job("small", "small")
        self.job("no-comm", "no-comm")
        self.multi("small", "two", "/bin/true", 2, "/bin/true")
        self.multi("no-comm", "one", "/bin/true", 1, "/bin/true")
        # Other tasks of the pools run meanwhile.
        self.task("small", "plain", "/bin/true")
        self.task("no-comm", "plain", "/bin/true")
        self.state_of("small", "plain", bm.TaskState.completed)
        self.state_of("no-comm", "plain", bm.TaskState.completed)
        self.assertEqual(self.client.task.get("small", "two").state, bm.TaskState.active)
        self.assertEqual(self.client.task.get("no-comm", "one").state, bm.TaskState.active)
        self.assertEqual(list(self.client.task.list_subtasks("small", "two").value), [])
        # A second node: it runs.
        self.client.pool.resize("small", bm.PoolResizeParameter(target_dedicated_nodes=2))
        task = self.state_of("small", "two", bm.TaskState.completed, timeout=60)
        self.assertEqual(task.execution_info.exit_code, 0)
        self.assertEqual(self.client.task.get("no-comm", "one").state, bm.TaskState.active)

    def test_bad_settings_are_refused_naming_the_property_and_nothing_is_stored(self):
        self.job("bad-mi", "nowhere")
        cases = [
            ({"numberOfInstances": 2}, "MissingRequiredProperty", "multiInstanceSettings.coordinationCommandLine"),
            ({"numberOfInstances": 0, "coordinationCommandLine": "/bin/true"}, "InvalidPropertyValue",
             "multiInstanceSettings.numberOfInstances"),
            ({"coordinationCommandLine": ""}, "InvalidPropertyValue", "multiInstanceSettings.coordinationCommandLine"),
            ({"coordinationCommandLine": "/bin/true", "commonResourceFiles": [{"filePath": "x"}]}, "MissingRequiredProperty",
             "multiInstanceSettings.commonResourceFiles[0].httpUrl"),
        ]
        for settings, code, prop in cases:
            with self.subTest(settings=settings):
                answer = self.raw("POST", "/jobs/bad-mi/tasks",
                                  {"id": "t", "commandLine": "/bin/true", "multiInstanceSettings": settings})
                self.assertEqual(answer.status_code, 400, answer.text)
                body = answer.json()
                self.assertEqual(body["code"], code)
                self.assertIn({"key": "PropertyName", "value": prop}, body["values"])
        answer = self.raw("POST", "/jobs/bad-mi/tasks", {"id": "t", "commandLine": "/bin/true", "requiredSlots": 2,
                                                         "multiInstanceSettings": {"coordinationCommandLine": "/bin/true"}})
        self.assertEqual((answer.status_code, answer.json()["code"]), (400, "InvalidPropertyValue"))
        self.assertIn({"key": "PropertyName", "value": "requiredSlots"}, answer.json()["values"])
        self.assertEqual(self.raw("GET", "/jobs/bad-mi/tasks/t").status_code, 404)


if __name__ == "__main__":
    unittest.main()
