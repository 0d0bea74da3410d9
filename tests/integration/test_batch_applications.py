"""The Batch account's application packages (--batch-application APP:VERSION=DIR) through the
azure-batch SDK: listed and got as the service summarizes them, installed on the nodes of a pool
that references them before its start task runs, and for a task that references one, named by
AZ_BATCH_APP_PACKAGE_ variables as on the service's Linux nodes; unknown references refused
naming the property."""
import os
import shutil
import tempfile

from azure.batch import models as bm

import harness
from test_batch_pools import BatchTestCase, vm_configuration


class BatchApplications(BatchTestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="bai-batch-apps-")
        for app, version, text in (("blender", "2.79", "b279"), ("blender", "3.0", "b30"), ("tools-x", "1.0", "tools")):
            path = os.path.join(cls.dir, f"{app}-{version}")
            os.makedirs(os.path.join(path, "bin"))
            with open(os.path.join(path, "bin", "version.txt"), "w") as f:
                f.write(text)
        cls.emulator_args = [
            "--batch-application", f"blender:2.79={cls.dir}/blender-2.79",
            "--batch-application", f"blender:3.0={cls.dir}/blender-3.0",
            "--batch-application", f"devbatchaccount1/tools-x:1.0={cls.dir}/tools-x-1.0",
            "--batch-application", f"otheraccount/secret:1.0={cls.dir}/tools-x-1.0"]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_listed_and_got(self):
        apps = {a.id: a.versions for a in self.client.application.list()}
        self.assertEqual(apps, {"blender": ["2.79", "3.0"], "tools-x": ["1.0"]})  # not another account's
        self.assertEqual(self.client.application.get("blender").versions, ["2.79", "3.0"])
        self.assertEqual(self.error(self.client.application.get, "secret").code, "ApplicationNotFound")
        page = list(self.client.application.list(bm.ApplicationListOptions(max_results=1)))
        self.assertEqual(len(page), 2)  # the SDK follows the next link

    def test_packages_are_on_the_nodes(self):
        self.client.pool.add(bm.PoolAddParameter(
            id="render", vm_size="STANDARD_D1", virtual_machine_configuration=vm_configuration(), target_dedicated_nodes=1,
            application_package_references=[bm.ApplicationPackageReference(application_id="blender")],
            start_task=bm.StartTask(command_line="/bin/sh -c 'cat $AZ_BATCH_APP_PACKAGE_blender/bin/version.txt'",
                                    wait_for_success=True)))
        node = self.only_idle("render")
        self.assertEqual(node.start_task_info.exit_code, 0)
        out = b"".join(self.client.file.get_from_compute_node("render", node.id, "startup/stdout.txt")).decode()
        self.assertEqual(out, "b279")  # the default version: the first given
        self.job("frames", "render")
        self.task("frames", "f1", "/bin/sh -c 'cat $AZ_BATCH_APP_PACKAGE_blender_2_79/bin/version.txt "
                                  "$AZ_BATCH_APP_PACKAGE_tools_x_1_0/bin/version.txt'",
                  application_package_references=[bm.ApplicationPackageReference(application_id="tools-x", version="1.0")])
        self.state_of("frames", "f1", bm.TaskState.completed)
        self.assertEqual(b"".join(self.client.file.get_from_task("frames", "f1", "stdout.txt")).decode(), "b279tools")
        listed = {f.name for f in self.client.file.list_from_compute_node("render", node.id, recursive=True)}
        self.assertTrue({"applications/blender_2.79/bin/version.txt", "applications/tools-x_1.0/bin/version.txt"} <= listed, listed)

    def test_unknown_packages_are_refused(self):
        for body, prop in (
            ({"id": "p1", "vmSize": "STANDARD_D1", "cloudServiceConfiguration": {"osFamily": "5"},
              "applicationPackageReferences": [{"applicationId": "blender", "version": "9.9"}]}, "applicationPackageReferences[0]"),
            ({"id": "p2", "vmSize": "STANDARD_D1", "cloudServiceConfiguration": {"osFamily": "5"},
              "applicationPackageReferences": [{"applicationId": "blender"}, {"applicationId": "secret"}]},
             "applicationPackageReferences[1]"),
        ):
            r = self.raw("POST", "/pools", body)
            self.assertEqual((r.status_code, r.json()["code"]), (400, "InvalidApplicationPackageReferences"), r.text)
            self.assertIn({"key": "PropertyName", "value": prop}, r.json()["values"])
        self.assertFalse(self.client.pool.exists("p1"))

    def only_idle(self, pool_id):
        return harness.wait_for(lambda: next((n for n in self.client.compute_node.list(pool_id)
                                              if n.state == bm.ComputeNodeState.idle), None), what=f"an idle node of {pool_id}")


if __name__ == "__main__":
    import unittest
    unittest.main()
