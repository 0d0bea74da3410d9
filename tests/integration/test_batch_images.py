"""What a Batch node is made of. Its image as a local root: with --image NAME=DIR naming
the pool's custom image (its virtualMachineImageId's name), the start task and the tasks run in a
bubblewrap sandbox of DIR, read-only, with the node's directory at /mnt/batch/tasks as on a Linux
node of the service; a pool whose image has no root runs them on this machine. Its GPUs: a node of
a GPU size takes its own from the machine's (a fake inventory here), and its processes see those
only."""
import shutil
import tempfile
import unittest

from azure.batch import models as bm

import harness
from test_batch_pools import BatchTestCase, vm_configuration
from test_jobs_containers import make_image, sandbox_works

IMAGE_ID = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/ml/providers/Microsoft.Compute/images/mnist-gpu"


@unittest.skipUnless(sandbox_works(), "bubblewrap cannot make a sandbox here")
class BatchImages(BatchTestCase):
    @classmethod
    def setUpClass(cls):
        cls.image_dir = tempfile.mkdtemp(prefix="bai-batch-image-")
        make_image(cls.image_dir, "mnist image v1")
        cls.emulator_args = ["--image", "mnist-gpu=" + cls.image_dir]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.image_dir, ignore_errors=True)

    def run_task(self, pool_id, configuration, command_line, start_task=None):
        self.client.pool.add(bm.PoolAddParameter(id=pool_id, vm_size="STANDARD_NC6", virtual_machine_configuration=configuration,
                                                 target_dedicated_nodes=1, start_task=start_task))
        self.client.job.add(bm.JobAddParameter(id=pool_id, pool_info=bm.PoolInformation(pool_id=pool_id)))
        self.client.task.add(pool_id, bm.TaskAddParameter(id="t", command_line=command_line))

        def completed():
            task = self.client.task.get(pool_id, "t")
            return task if task.state == bm.TaskState.completed else None
        task = harness.wait_for(completed, timeout=30, what=f"the task of {pool_id}")
        return task, b"".join(self.client.file.get_from_task(pool_id, "t", "stdout.txt")).decode()

    def test_a_custom_image_with_a_root_runs_tasks_in_its_sandbox(self):
        custom = bm.VirtualMachineConfiguration(image_reference=bm.ImageReference(virtual_machine_image_id=IMAGE_ID),
                                                node_agent_sku_id="batch.node.ubuntu 20.04")
        start = bm.StartTask(command_line="/bin/sh -c 'cat /etc/bai-image > $AZ_BATCH_NODE_SHARED_DIR/image'", wait_for_success=True)
        task, out = self.run_task("imaged", custom,
                                  "/bin/bash -c 'echo $AZ_BATCH_NODE_ROOT_DIR; pwd; cat $AZ_BATCH_NODE_SHARED_DIR/image; hostname; "
                                  "touch /usr/x || echo read-only'", start_task=start)
        self.assertEqual(task.execution_info.result, bm.TaskExecutionResult.success, out)
        node = task.node_info.node_id
        hostname = "tvmps-" + node[6:18] + "-" + node[-1]  # a host name's 63 characters at most
        self.assertEqual(out.split("\n"), ["/mnt/batch/tasks", "/mnt/batch/tasks/workitems/imaged/job-1/t/wd", "mnist image v1",
                                           hostname, "read-only", ""])
        self.assertEqual(b"".join(self.client.file.get_from_compute_node("imaged", node, "shared/image")), b"mnist image v1\n")

    def test_an_image_without_a_root_runs_tasks_on_this_machine(self):
        task, out = self.run_task("hosted", vm_configuration(), "/bin/sh -c 'echo $AZ_BATCH_NODE_ROOT_DIR; test -e /etc/bai-image || echo host'")
        self.assertEqual(task.execution_info.result, bm.TaskExecutionResult.success, out)
        root, where = out.split()
        self.assertTrue(root.startswith(self.emu.location), root)
        self.assertEqual(where, "host")


class BatchGpus(BatchTestCase):
    emulator_args = ["--gpus", "fake:3"]

    def outputs(self, pool_id, vm_size, nodes, tasks):
        self.client.pool.add(bm.PoolAddParameter(id=pool_id, vm_size=vm_size, virtual_machine_configuration=vm_configuration(),
                                                 target_dedicated_nodes=nodes))
        self.client.job.add(bm.JobAddParameter(id=pool_id, pool_info=bm.PoolInformation(pool_id=pool_id)))
        command = "/bin/sh -c 'sleep 0.5; echo \"[$CUDA_VISIBLE_DEVICES] $NVIDIA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER\"'"
        for n in range(tasks):
            self.client.task.add(pool_id, bm.TaskAddParameter(id=f"t{n}", command_line=command))

        def read(n):
            task = self.client.task.get(pool_id, f"t{n}")
            if task.state != bm.TaskState.completed:
                return None
            return b"".join(self.client.file.get_from_task(pool_id, f"t{n}", "stdout.txt")).decode().split()
        return [harness.wait_for(lambda: read(n), what=f"task t{n} of {pool_id}") for n in range(tasks)]

    def test_each_node_sees_only_its_own_gpus(self):
        two = self.outputs("nc6", "STANDARD_NC6", nodes=2, tasks=2)
        seen = {out[0] for out in two}
        self.assertEqual(len(seen), 2, two)  # one GPU each, not the same one
        for visible, uuids, order in two:
            self.assertRegex(visible, r"^\[GPU-[0-9a-f-]+\]$")
            self.assertEqual((uuids, order), (visible[1:-1], "PCI_BUS_ID"))
        cpu = self.outputs("d1", "STANDARD_D1", nodes=1, tasks=1)
        self.assertEqual(cpu, [["[]", "none", "PCI_BUS_ID"]])
        # Two GPUs wanted, one left on the machine: the node runs with the one there is.
        big = self.outputs("nc12", "STANDARD_NC12", nodes=1, tasks=1)
        self.assertNotIn(big[0][0], seen)
        self.assertEqual(big[0][0].count("GPU-"), 1)
        self.client.pool.delete("nc6")
        harness.wait_for(lambda: "nc6" not in [p.id for p in self.client.pool.list()], what="pool nc6 to go")
        again = self.outputs("nc6b", "STANDARD_NC6", nodes=1, tasks=1)
        self.assertIn(again[0][0], seen)  # a GPU given back is taken again


if __name__ == "__main__":
    unittest.main()
