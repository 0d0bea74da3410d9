"""Azure Batch pools with containerConfiguration and tasks with containerSettings on a real docker
engine and a real registry (docker_engine.py), through the azure-batch SDK: the pool's images
pulled from the private registry with its containerRegistries when a node starts (a node whose
image cannot be pulled is unusable, with the service's error), the start task, a job's
preparation and its tasks each in a container of the task's image, with the node's directories,
the task's variables, containerRunOptions and the working directory as the service gives them;
failed pulls and refused options as the task's failureInfo; terminate, maxWallClockTime, a node
leaving and a killed emulator leave no container behind."""
import os
import unittest

from azure.batch import BatchServiceClient
from azure.batch import models as bm
from azure.batch.batch_auth import SharedKeyCredentials

import docker_engine
import harness
from test_batch_pools import DEV_BATCH, DEV_BATCH_KEY, BatchTestCase, vm_configuration

engine = None
image = None  # "127.0.0.1:PORT/bai/task:1", in the registry only


def setUpModule():
    global engine, image
    engine, image = docker_engine.DockerEngine.with_private_image("bai/task:1", "the task image")


def tearDownModule():
    engine.stop()


def registry(password=docker_engine.PASSWORD):
    return bm.ContainerRegistry(registry_server=engine.registry_address, user_name=docker_engine.USER, password=password)


def container_pool_configuration(images=None, registries=None):
    configuration = vm_configuration()
    configuration.container_configuration = bm.ContainerConfiguration(
        type="dockerCompatible", container_image_names=images, container_registries=registries)
    return configuration


class BatchContainersTestCase(BatchTestCase):
    emulator_args = ["--container-runtime", "docker"]

    @classmethod
    def setUpClass(cls):
        cls.emulator_env = engine.env()
        super().setUpClass()

    def tearDown(self):
        harness.wait_for(lambda: engine.owned_containers() == [], timeout=30, what="the tasks' containers to be removed")

    @classmethod
    def container_pool(cls, pool_id, images=None, registries=None, start_task=None, wait=True):
        cls.client.pool.add(bm.PoolAddParameter(
            id=pool_id, vm_size="STANDARD_D1", target_dedicated_nodes=1, start_task=start_task,
            virtual_machine_configuration=container_pool_configuration(images, registries)))
        if wait:
            cls.idle_node(pool_id)
        cls.client.job.add(bm.JobAddParameter(id=pool_id, pool_info=bm.PoolInformation(pool_id=pool_id)))

    @classmethod
    def idle_node(cls, pool_id):
        def idle():
            nodes = list(cls.client.compute_node.list(pool_id))
            return nodes[0] if nodes and nodes[0].state == bm.ComputeNodeState.idle else None
        return harness.wait_for(idle, timeout=60, what=f"the node of {pool_id} to be idle")

    def completed(self, job_id, task_id):
        return self.state_of(job_id, task_id, bm.TaskState.completed, timeout=60)


class BatchContainerTasks(BatchContainersTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        start = bm.StartTask(command_line="/bin/sh -c 'cat /etc/bai-image > $AZ_BATCH_NODE_SHARED_DIR/from-start'",
                             container_settings=bm.TaskContainerSettings(image_name=image), wait_for_success=True)
        cls.container_pool("docked", images=[image], registries=[registry()], start_task=start)

    def test_the_pools_image_is_pulled_when_its_node_starts_and_a_task_runs_in_it(self):
        self.assertTrue(engine.has_image(image))  # pulled before any task, with the pool's credentials
        node = self.idle_node("docked")
        self.assertEqual(node.start_task_info.result, bm.TaskExecutionResult.success)
        self.assertRegex(node.start_task_info.container_info.container_id, r"^[0-9a-f]{64}$")
        command = ("/bin/sh -c 'cat /etc/bai-image; pwd; echo \"$AZ_BATCH_TASK_WORKING_DIR\"; echo \"vars: $MY_VAR|$DOCKER_HOST|$LD_PRELOAD\"; "
                   "cat $AZ_BATCH_NODE_SHARED_DIR/from-start; echo made-inside > made.txt; echo to-stderr >&2; exit 3'")
        # Variables that would steer a docker client reach the container, not the client on this
        # machine (which would otherwise talk to no engine, or load no library, and fail).
        self.client.task.add("docked", bm.TaskAddParameter(
            id="t", command_line=command, container_settings=bm.TaskContainerSettings(image_name=image),
            environment_settings=[bm.EnvironmentSetting(name="MY_VAR", value="my value"),
                                  bm.EnvironmentSetting(name="DOCKER_HOST", value="unix:///no/such.sock"),
                                  bm.EnvironmentSetting(name="LD_PRELOAD", value="/no/such.so")]))
        task = self.completed("docked", "t")
        out = self.read("docked", "t", "stdout.txt")
        self.assertEqual(task.execution_info.exit_code, 3, out + self.read("docked", "t", "stderr.txt"))
        self.assertEqual(task.execution_info.failure_info.code, "FailureExitCode")
        info = task.execution_info.container_info
        self.assertRegex(info.container_id, r"^[0-9a-f]{64}$")
        self.assertEqual(info.state, "exited")
        lines = out.splitlines()
        self.assertEqual(lines[0], "the task image")  # the image's root, not this machine's
        self.assertEqual(lines[1], lines[2])  # in the task's working directory, at the path its variable names
        self.assertTrue(lines[1].endswith("/workitems/docked/job-1/t/wd"), lines[1])
        self.assertEqual(lines[3], "vars: my value|unix:///no/such.sock|/no/such.so")
        self.assertEqual(lines[4], "the task image")  # the start task ran in the same image
        self.assertEqual(self.read("docked", "t", "stderr.txt").strip(), "to-stderr")
        self.assertEqual(self.read("docked", "t", "wd/made.txt").strip(), "made-inside")
        self.assertFalse(os.path.exists("/etc/bai-image"))

    def test_container_run_options_and_the_images_working_directory(self):
        self.client.task.add("docked", bm.TaskAddParameter(
            id="opts", command_line="/bin/sh -c 'pwd; echo $FROM_OPTIONS'",
            container_settings=bm.TaskContainerSettings(image_name=image, container_run_options="--workdir /etc --env FROM_OPTIONS=yes",
                                                        working_directory="containerImageDefault")))
        task = self.completed("docked", "opts")
        self.assertEqual(task.execution_info.exit_code, 0, self.read("docked", "opts", "stderr.txt"))
        self.assertEqual(self.read("docked", "opts", "stdout.txt").split(), ["/etc", "yes"])
        # The user's options cannot rename, keep or detach the container the task's end removes.
        self.client.task.add("docked", bm.TaskAddParameter(
            id="kept", command_line="/bin/true",
            container_settings=bm.TaskContainerSettings(image_name=image, container_run_options="--name mine --rm=false")))
        self.assertEqual(self.completed("docked", "kept").execution_info.exit_code, 0, self.read("docked", "kept", "stderr.txt"))
        self.assertEqual(engine.client("ps", "--all", "--quiet", "--filter", "name=mine").stdout.strip(), "")
        for task_id, options, code, words in [("badflag", "--no-such-flag", "ContainerInvalidSettings", "unknown flag"),
                                              ("detached", "-itd", "ContainerInvalidSettings", "-itd"),
                                              ("quote", "--env 'A=1", "ContainerInvalidSettings", None)]:
            with self.subTest(task_id):
                self.client.task.add("docked", bm.TaskAddParameter(
                    id=task_id, command_line="/bin/true",
                    container_settings=bm.TaskContainerSettings(image_name=image, container_run_options=options)))
                task = self.completed("docked", task_id)
                self.assertEqual(task.execution_info.result, bm.TaskExecutionResult.failure)
                self.assertIsNone(task.execution_info.exit_code)
                self.assertEqual(task.execution_info.failure_info.code, code)
                if words:
                    self.assertIn(words, task.execution_info.failure_info.details[0].value)
        # No command line: the image's own command, and this image has none.
        self.client.task.add("docked", bm.TaskAddParameter(
            id="imagecmd", command_line="", container_settings=bm.TaskContainerSettings(image_name=image)))
        task = self.completed("docked", "imagecmd")
        self.assertEqual(task.execution_info.failure_info.code, "ContainerMiscError")
        self.assertIn("No command specified", task.execution_info.failure_info.details[0].value)
        # A program the image does not have: docker's words, as the service's CommandProgramNotFound.
        self.client.task.add("docked", bm.TaskAddParameter(
            id="noprog", command_line="/no/such/program", container_settings=bm.TaskContainerSettings(image_name=image)))
        task = self.completed("docked", "noprog")
        self.assertEqual(task.execution_info.failure_info.code, "CommandProgramNotFound")
        self.assertIn("no such file", task.execution_info.failure_info.details[0].value.lower())

    def test_a_registry_host_written_in_capitals_gets_its_credentials(self):
        # docker looks a reference's host up in its credentials case-sensitively; the registry's
        # server as the task names it in another case still matches, as host names do.
        port = engine.registry_address.rsplit(":", 1)[1]
        mixed = f"LocalHost:{port}/bai/task:1"
        own = bm.ContainerRegistry(registry_server=f"localhost:{port}", user_name=docker_engine.USER, password=docker_engine.PASSWORD)
        self.client.task.add("docked", bm.TaskAddParameter(
            id="mixedcase", command_line="/bin/sh -c 'cat /etc/bai-image'",
            container_settings=bm.TaskContainerSettings(image_name=mixed, registry=own)))
        task = self.completed("docked", "mixedcase")
        failure = task.execution_info.failure_info
        self.assertEqual(task.execution_info.exit_code, 0, failure and [d.value for d in failure.details or []])
        self.assertEqual(self.read("docked", "mixedcase", "stdout.txt").strip(), "the task image")
        self.assertTrue(engine.has_image(mixed.lower()) or engine.has_image(mixed))

    def test_failed_pulls_fail_the_task_with_the_registrys_words(self):
        for task_id, settings, code, words in [
                ("missing", bm.TaskContainerSettings(image_name=f"{engine.registry_address}/bai/missing:1"),
                 "ContainerInvalidImage", "not found"),
                ("badpass", bm.TaskContainerSettings(image_name=f"{engine.registry_address}/bai/other:1", registry=registry("wrong")),
                 "ContainerInvalidRegistry", "unauthorized")]:
            with self.subTest(task_id):
                self.client.task.add("docked", bm.TaskAddParameter(id=task_id, command_line="/bin/true", container_settings=settings))
                task = self.completed("docked", task_id)
                failure = task.execution_info.failure_info
                self.assertEqual(failure.code, code)
                self.assertIn("could not be pulled", failure.message)
                self.assertIn(words, failure.details[0].value.lower())
                self.assertNotIn("wrong", failure.details[0].value)

    def test_a_job_preparation_task_runs_in_its_container(self):
        prep = bm.JobPreparationTask(command_line="/bin/sh -c 'cat /etc/bai-image > $AZ_BATCH_NODE_SHARED_DIR/from-prep'",
                                     container_settings=bm.TaskContainerSettings(image_name=image))
        self.client.job.add(bm.JobAddParameter(id="prepared", pool_info=bm.PoolInformation(pool_id="docked"), job_preparation_task=prep))
        self.client.task.add("prepared", bm.TaskAddParameter(id="t", command_line="/bin/sh -c 'cat $AZ_BATCH_NODE_SHARED_DIR/from-prep'",
                                                             container_settings=bm.TaskContainerSettings(image_name=image)))
        task = self.completed("prepared", "t")
        self.assertEqual(task.execution_info.exit_code, 0)
        self.assertEqual(self.read("prepared", "t", "stdout.txt").strip(), "the task image")
        status = list(self.client.job.list_preparation_and_release_task_status("prepared"))[0]
        self.assertEqual(status.job_preparation_task_execution_info.result, bm.TaskExecutionResult.success)

    def test_terminate_and_wall_clock_time_remove_the_running_container(self):
        self.client.task.add("docked", bm.TaskAddParameter(
            id="held", command_line="/bin/sleep 600", container_settings=bm.TaskContainerSettings(image_name=image)))
        harness.wait_for(lambda: engine.owned_containers(), timeout=60, what="the task's container")
        self.client.task.terminate("docked", "held")
        task = self.completed("docked", "held")
        self.assertEqual(task.execution_info.failure_info.code, "TaskEnded")
        harness.wait_for(lambda: engine.owned_containers() == [], timeout=30, what="the terminated task's container to go")
        self.client.task.add("docked", bm.TaskAddParameter(
            id="slow", command_line="/bin/sleep 600", container_settings=bm.TaskContainerSettings(image_name=image),
            constraints=bm.TaskConstraints(max_wall_clock_time="PT2S")))
        task = self.completed("docked", "slow")
        self.assertEqual(task.execution_info.failure_info.code, "MaxWallClockTimeExpiry")


class BatchContainerPools(BatchContainersTestCase):
    def test_a_node_whose_image_cannot_be_pulled_is_unusable(self):
        self.container_pool("unpullable", images=[f"{engine.registry_address}/bai/missing:1"], registries=[registry()], wait=False)

        def unusable():
            nodes = list(self.client.compute_node.list("unpullable"))
            return nodes[0] if nodes and nodes[0].state == bm.ComputeNodeState.unusable else None
        node = harness.wait_for(unusable, timeout=60, what="the node to be unusable")
        self.assertEqual(node.errors[0].code, "ContainerInvalidImage")
        self.assertIn("not found", node.errors[0].error_details[0].value.lower())
        self.client.pool.delete("unpullable")

    def test_a_task_with_container_settings_needs_a_container_pool(self):
        self.client.pool.add(bm.PoolAddParameter(id="plain", vm_size="STANDARD_D1", target_dedicated_nodes=1,
                                                 virtual_machine_configuration=vm_configuration()))
        self.client.job.add(bm.JobAddParameter(id="plain", pool_info=bm.PoolInformation(pool_id="plain")))
        self.client.task.add("plain", bm.TaskAddParameter(id="t", command_line="/bin/true",
                                                          container_settings=bm.TaskContainerSettings(image_name=image)))
        task = self.completed("plain", "t")
        self.assertEqual(task.execution_info.failure_info.code, "ContainerInvalidSettings")
        self.assertIn("containerConfiguration", task.execution_info.failure_info.message)
        # Only a container's task may leave its command line empty (its image's command runs).
        with self.assertRaises(bm.BatchErrorException) as refused:
            self.client.task.add("plain", bm.TaskAddParameter(id="empty", command_line=""))
        self.assertEqual(refused.exception.error.code, "InvalidPropertyValue")
        self.assertEqual(refused.exception.error.values[0].value, "commandLine")

    def test_a_node_leaving_and_a_killed_emulator_leave_no_container(self):
        self.container_pool("leaving", registries=[registry()])
        self.client.task.add("leaving", bm.TaskAddParameter(
            id="held", command_line="/bin/sleep 600", container_settings=bm.TaskContainerSettings(image_name=image)))
        harness.wait_for(lambda: engine.owned_containers(), timeout=60, what="the task's container")
        self.client.pool.resize("leaving", bm.PoolResizeParameter(target_dedicated_nodes=0, node_deallocation_option="requeue"))
        harness.wait_for(lambda: engine.owned_containers() == [], timeout=30, what="the container to go with its node")
        # The container goes before the task is written back as requeued: wait for that too.
        harness.wait_for(lambda: self.client.task.get("leaving", "held").state == bm.TaskState.active,
                         timeout=30, what="the task to be requeued")
        self.client.pool.resize("leaving", bm.PoolResizeParameter(target_dedicated_nodes=1))
        first = harness.wait_for(lambda: engine.owned_containers(), timeout=60, what="the requeued task's container")
        self.emu.send(9)
        self.emu.process.wait()
        self.assertEqual(engine.owned_containers(), first)  # a killed emulator cannot remove it
        self.emu.start()
        type(self).client = BatchServiceClient(SharedKeyCredentials(DEV_BATCH, DEV_BATCH_KEY), batch_url=self.emu.endpoints["batch"])
        # The next start removes it; the task runs again on the pool's new node, in a new one.
        harness.wait_for(lambda: not set(first) & set(engine.owned_containers()), timeout=30, what="the orphan to be removed")
        harness.wait_for(lambda: engine.owned_containers(), timeout=60, what="the task's new container")
        self.client.task.terminate("leaving", "held")
        self.completed("leaving", "held")


if __name__ == "__main__":
    unittest.main()
