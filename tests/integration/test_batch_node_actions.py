"""Batch compute nodes through their lives, with the azure-batch SDK: a node booting, then
running its start task after its resource files; rebooted under a running task; taken out of
scheduling; removed while it finishes its task (leavingpool); pre-empted and replaced; task and
node files listed, read, deleted."""
import time
import unittest
from datetime import datetime, timedelta

from azure.storage.blob import BlobServiceClient, generate_blob_sas

from azure.batch import models as bm

import harness
from test_batch_pools import BatchTestCase, vm_configuration


SLEEP_LONG = "/bin/sleep 60"


class BatchNodeActions(BatchTestCase):
    def test_file_paths_never_leave_the_node(self):
        self.pool("p-esc")
        self.job("j-esc", "p-esc")
        self.task("j-esc", "t", "/bin/sh -c 'ln -s / escape && mkdir real && echo inside > real/f && ln -s real alias'")
        task = self.state_of("j-esc", "t", bm.TaskState.completed)
        node = task.node_info.node_id
        for path in ("wd/escape/etc/hostname", "wd/escape/etc", "wd/escape/..%2F..%2Fetc%2Fhostname"):
            r = self.raw("GET", f"/jobs/j-esc/tasks/t/files/{path}")
            self.assertEqual((r.status_code, r.json()["code"]), (404, "FileNotFound"), path)
        # A link is never followed, even one that stays inside: a file is read through no link (a
        # task could swap a directory for one between the emulator's look and its read).
        r = self.raw("GET", "/jobs/j-esc/tasks/t/files/wd/real/f")
        self.assertEqual((r.status_code, r.content), (200, b"inside\n"))
        r = self.raw("GET", "/jobs/j-esc/tasks/t/files/wd/alias/f")
        self.assertEqual((r.status_code, r.json()["code"]), (404, "FileNotFound"))
        for path in ("startup/..", "startup/%2E%2E", "wd/escape/tmp"):
            r = self.raw("DELETE", f"/pools/p-esc/nodes/{node}/files/{path}?recursive=true")
            self.assertEqual(r.status_code, 404, path)
        self.assertIn("workitems", [f.name for f in self.client.file.list_from_compute_node("p-esc", node)])

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
        r = self.raw("GET", "/jobs/j-files/tasks/t/files/..%2F..%2F..%2Fstartup%2Fstdout.txt")
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

    def test_only_a_cloud_service_node_is_reimaged(self):
        """The recordings: reimage on a virtual machine pool's node is 409 OperationNotValidOnNode;
        a cloudServiceConfiguration pool's node is reimaged and runs its start task again."""
        start = bm.StartTask(command_line="/bin/sh -c 'echo boot >> $AZ_BATCH_NODE_SHARED_DIR/boots'", wait_for_success=True)
        self.pool("p-vm", start_task=start)
        vm_node = harness.wait_for(lambda: next(iter(self.client.compute_node.list("p-vm")), None), what="a node").id
        refused = self.error(self.client.compute_node.reimage, "p-vm", vm_node)
        self.assertEqual((refused.code, refused.values[0].value), (
            "OperationNotValidOnNode", "Operation reimage can be invoked only on pools created with cloudServiceConfiguration"))
        self.client.pool.add(bm.PoolAddParameter(
            id="p-paas", vm_size="small", cloud_service_configuration=bm.CloudServiceConfiguration(os_family="5"),
            target_dedicated_nodes=1, start_task=start))
        paas_node = harness.wait_for(lambda: next(iter(self.client.compute_node.list("p-paas")), None), what="a node").id
        self.client.compute_node.reimage("p-paas", paas_node)
        harness.wait_for(lambda: self.client.compute_node.get("p-paas", paas_node).state == bm.ComputeNodeState.idle and
                         self.client.compute_node.get("p-paas", paas_node).start_task_info.state ==
                         bm.StartTaskState.completed, timeout=30, what="the reimaged node to be idle")

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
        # Its VM is made, then it boots; until then it shows no boot time, agent or start task.
        self.assertEqual((node.state, node.start_task_info, node.last_boot_time, node.node_agent_info),
                         (bm.ComputeNodeState.creating, None, None, None))
        node = self.node_state("p-boot2", node.id, bm.ComputeNodeState.starting)
        self.assertEqual((node.start_task_info, node.last_boot_time), (None, None))
        node = self.node_state("p-boot2", node.id, bm.ComputeNodeState.idle)
        self.assertIsNotNone(node.last_boot_time)
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
        # (Under the TSan daemon the pool was once seen steady before its node was listed.)
        node_id = harness.wait_for(lambda: next(iter(self.client.compute_node.list("p-sched")), None), what="a node").id
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

    def test_a_preempted_node_stays_preempted_until_it_is_replaced(self):
        self.pool("p-pre", dedicated=0, low_priority=1)
        # (Under the TSan daemon the pool was once seen steady before its node was listed.)
        node_id = harness.wait_for(lambda: next(iter(self.client.compute_node.list("p-pre")), None), what="a node").id
        r = self.preempt("p-pre", node_id, {"recoverAfter": "PT2S"})
        self.assertEqual(r.status_code, 200, r.text)
        node = self.client.compute_node.get("p-pre", node_id)
        self.assertEqual(node.state, bm.ComputeNodeState.preempted)
        self.assertEqual(self.client.pool.get("p-pre").current_low_priority_nodes, 1)
        self.assertEqual(self.preempt("p-pre", node_id).status_code, 409)
        self.assertEqual(self.preempt("p-pre", node_id, {"recoverAfter": "later"}).json()["code"], "InvalidPropertyValue")
        # A node leaving the pool (removenodes, taskcompletion) that is pre-empted just goes.
        self.pool("p-pre2", dedicated=0, low_priority=2)
        self.job("j-pre2", "p-pre2")
        self.task("j-pre2", "t", SLEEP_LONG)
        busy = self.state_of("j-pre2", "t", bm.TaskState.running).node_info.node_id
        self.client.pool.remove_nodes("p-pre2", bm.NodeRemoveParameter(
            node_list=[busy], node_deallocation_option=bm.ComputeNodeDeallocationOption.task_completion))
        self.assertEqual(self.preempt("p-pre2", busy).json()["requeuedTasks"], ["j-pre2/t"])
        harness.wait_for(lambda: [n.id for n in self.client.compute_node.list("p-pre2")] != [] and
                         busy not in [n.id for n in self.client.compute_node.list("p-pre2")], what="the leaving node to go")
        self.assertEqual(len(list(self.client.compute_node.list("p-pre2"))), 1)  # nothing took its place
        # Requeued (its run reports once its process is gone), then running on the other node.
        again = harness.wait_for(lambda: (lambda t: t if t.execution_info.requeue_count == 1 and t.state == bm.TaskState.running
                                           else None)(self.client.task.get("j-pre2", "t")), what="the task to run again")
        self.assertNotEqual(again.node_info.node_id, busy)

        def replaced():
            ids = [n.id for n in self.client.compute_node.list("p-pre")]
            return ids if ids and node_id not in ids else None
        new = harness.wait_for(replaced, timeout=15, what="a new node in its place")
        self.assertEqual(len(new), 1)
        self.assertEqual(self.node_state("p-pre", new[0], bm.ComputeNodeState.idle).is_dedicated, False)


if __name__ == "__main__":
    unittest.main()
