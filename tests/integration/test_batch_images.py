"""A Batch pool's image as a local root (issue 9): with --image NAME=DIR naming the pool's custom
image (its virtualMachineImageId's name), the start task and the tasks run in a bubblewrap sandbox
of DIR, read-only, with the node's directory at /mnt/batch/tasks as on a Linux node of the
service; a pool whose image has no root runs them on this machine."""
import shutil
import tempfile
import unittest

from azure.batch import BatchServiceClient
from azure.batch import models as bm
from azure.batch.batch_auth import SharedKeyCredentials

import harness
from test_batch_pools import DEV_BATCH, DEV_BATCH_KEY, vm_configuration
from test_jobs_containers import make_image, sandbox_works

IMAGE_ID = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/ml/providers/Microsoft.Compute/images/mnist-gpu"


@unittest.skipUnless(sandbox_works(), "bubblewrap cannot make a sandbox here")
class BatchImages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.image_dir = tempfile.mkdtemp(prefix="bai-batch-image-")
        make_image(cls.image_dir, "mnist image v1")
        cls.emu = harness.Emulator(args=["--image", "mnist-gpu=" + cls.image_dir]).start()
        cls.client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=cls.emu.endpoints["batch"])

    @classmethod
    def tearDownClass(cls):
        cls.emu.close()
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


if __name__ == "__main__":
    unittest.main()
