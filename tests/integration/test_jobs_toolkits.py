"""Each toolkit's launch through the SDK, with a Python stand-in for the framework that records
what every process saw: a 2-node x 2-rank MPI job, PyTorch ranks, Caffe2 shards, TensorFlow
parameter servers and workers."""
import os
import unittest

from azure.mgmt.batchai import models as m

from jobs_fixture import JobsTestCase, record_command, PYTHON


SCRIPT = "$AZ_BATCHAI_MOUNT_ROOT/afs/scripts/record.py"
WAIT_FOR_PS = "while [ ! -e $AZ_BATCHAI_OUTPUT_OUT/tf-ps0.json ]; do sleep 0.05; done"


class ToolkitTest(JobsTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.two = cls.cluster(cls, "two", nodes=2, vm_size="STANDARD_NC12")  # 2 GPUs per node: 2 MPI slots
        cls.wait_cluster(cls, "two", idle=2)
        cls.addresses = sorted(n["ipAddress"] for n in cls.nodes(cls) if n["cluster"].endswith("/clusters/two"))

    def assert_succeeded(self, job):
        self.assertEqual(job.execution_state, "succeeded", (job.execution_info, self.execution_log(job.name)))
        self.assertEqual(job.execution_info.exit_code, 0)

    def test_custom_mpi_runs_two_ranks_on_each_of_two_nodes(self):
        job = self.job("mpi", self.two, node_count=2,
                       custom_mpi_settings=m.CustomMpiSettings(command_line=record_command("mpi"), process_count=4))
        self.assert_succeeded(job)
        records = self.records("mpi")
        self.assertEqual(sorted(records), ["mpi-rank0", "mpi-rank1", "mpi-rank2", "mpi-rank3"])
        # Every node's path leads to the same directory of the share (each node mounts it).
        stdouterr = [os.path.relpath(records[f"mpi-rank{r}"]["env"]["AZ_BATCHAI_STDOUTERR_DIR"],
                                     records[f"mpi-rank{r}"]["env"]["AZ_BATCHAI_MOUNT_ROOT"]) for r in range(4)]
        self.assertEqual(len(set(stdouterr)), 1)
        # Ranks 0-1 on the first node, 2-3 on the second: each in its node's environment.
        temps = [records[f"mpi-rank{r}"]["env"]["AZ_BATCHAI_JOB_TEMP"] for r in range(4)]
        self.assertEqual(temps[0], temps[1])
        self.assertEqual(temps[2], temps[3])
        self.assertNotEqual(temps[0], temps[2])
        gpus = [records[f"mpi-rank{r}"]["env"]["NVIDIA_VISIBLE_DEVICES"] for r in range(4)]
        self.assertNotEqual(gpus[0], gpus[2])
        self.assertEqual(len(gpus[0].split(",")), 2)
        self.assertEqual(records["mpi-rank0"]["env"]["AZ_BATCH_HOST_LIST"], ",".join(self.addresses))
        node_lines = [l for l in self.execution_log("mpi").splitlines() if " node 0: " in l or " node 1: " in l]
        self.assertEqual([l.split("GPUs: ")[1] for l in node_lines], [gpus[0], gpus[2]])
        stdout = self.read("mpi", "stdout.txt")
        self.assertEqual(stdout.count('"argv": ["mpi"]'), 4)
        hostfile_lines = sorted(f"{a} slots=2" for a in self.addresses)
        with open(records["mpi-rank0"]["env"]["AZ_BATCHAI_MPI_HOST_FILE"]) as f:
            self.assertEqual(sorted(f.read().split("\n")[:-1]), hostfile_lines)

    def test_horovod_chainer_and_cntk_python_go_through_mpi_with_python_commands(self):
        for name, settings in (
                ("horovod", dict(horovod_settings=m.HorovodSettings(
                    python_script_file_path=SCRIPT, python_interpreter_path=PYTHON, command_line_args="hvd", process_count=2))),
                ("chainer", dict(chainer_settings=m.ChainerSettings(
                    python_script_file_path=SCRIPT, python_interpreter_path=PYTHON, command_line_args="chainer"))),
                ("cntk", dict(cntk_settings=m.CNTKsettings(
                    language_type="Python", python_script_file_path=SCRIPT, python_interpreter_path=PYTHON,
                    command_line_args="cntk", process_count=3)))):
            with self.subTest(name):
                job = self.job(name, self.two, node_count=2, **settings)
                self.assert_succeeded(job)
                count = {"horovod": 2, "chainer": 2, "cntk": 3}[name]
                expected = sorted(f"{ {'horovod': 'hvd'}.get(name, name)}-rank{r}" for r in range(count))
                self.assertEqual(sorted(self.records(name)), expected)
                self.assertIn("stdout.txt", self.files(name))

    def test_pytorch_ranks_with_index_init_method_and_backend(self):
        job = self.job("torch", self.two, node_count=2, py_torch_settings=m.PyTorchSettings(
            python_script_file_path=SCRIPT, python_interpreter_path=PYTHON, command_line_args="torch",
            process_count=3, communication_backend="gloo"))
        self.assert_succeeded(job)
        records = self.records("torch")
        self.assertEqual(sorted(records), ["torch-task0", "torch-task1", "torch-task2"])
        env0 = records["torch-task0"]["env"]
        self.assertEqual(env0["AZ_BATCHAI_PYTORCH_BACKEND"], "gloo")
        self.assertEqual(env0["AZ_BATCHAI_PYTORCH_INIT_METHOD"], "file://" + env0["AZ_BATCHAI_SHARED_JOB_TEMP"] + "/pytorch_init")
        self.assertEqual(records["torch-task1"]["env"]["AZ_BATCHAI_JOB_TEMP"], env0["AZ_BATCHAI_JOB_TEMP"])
        self.assertNotEqual(records["torch-task2"]["env"]["AZ_BATCHAI_JOB_TEMP"], env0["AZ_BATCHAI_JOB_TEMP"])
        self.assertTrue({"stdout-0.txt", "stdout-1.txt", "stdout-2.txt", "stderr-2.txt"} <= set(self.files("torch")))

    def test_caffe2_one_shard_per_node(self):
        job = self.job("caffe2", self.two, node_count=2, caffe2_settings=m.Caffe2Settings(
            python_script_file_path=SCRIPT, python_interpreter_path=PYTHON, command_line_args="c2"))
        self.assert_succeeded(job)
        self.assertEqual(sorted(self.records("caffe2")), ["c2-task0", "c2-task1"])
        self.assertTrue({"stdout-0.txt", "stdout-1.txt"} <= set(self.files("caffe2")))

    def test_tensorflow_distributed_parameter_server_and_workers(self):
        # The parameter server waits for ever, as TensorFlow's do; the job ends with its workers.
        job = self.job("tf", self.two, node_count=2, tensor_flow_settings=m.TensorFlowSettings(
            python_script_file_path=SCRIPT, python_interpreter_path=PYTHON,
            # The workers end only once the parameter server has recorded itself (it is stopped then).
            master_command_line_args="tf --master; " + WAIT_FOR_PS, worker_command_line_args="tf --worker; " + WAIT_FOR_PS,
            parameter_server_command_line_args="tf --ps; sleep 600", worker_count=2, parameter_server_count=1))
        self.assert_succeeded(job)
        records = self.records("tf")
        self.assertEqual(sorted(records), ["tf-master0", "tf-ps0", "tf-worker1"])
        master = records["tf-master0"]
        self.assertEqual(master["argv"], ["tf", "--master"])
        self.assertEqual(records["tf-worker1"]["argv"], ["tf", "--worker"])
        a, b = self.addresses
        self.assertEqual(master["env"]["AZ_BATCHAI_PS_HOSTS"], f"{a}:2222")
        self.assertEqual(master["env"]["AZ_BATCHAI_WORKER_HOSTS"], f"{a}:2223,{b}:2222")
        self.assertTrue({"stdout-wk-0.txt", "stdout-wk-1.txt", "stdout-ps-0.txt"} <= set(self.files("tf")))
        self.assertIn("parameter server 0 stopped", self.execution_log("tf"))

    def test_tensorflow_single_node(self):
        job = self.job("tf1", self.two, tensor_flow_settings=m.TensorFlowSettings(
            python_script_file_path=SCRIPT, python_interpreter_path=PYTHON, master_command_line_args="single"))
        self.assert_succeeded(job)
        self.assertEqual(sorted(self.records("tf1")), ["single"])
        self.assertIn("stdout-wk-0.txt", self.files("tf1"))


if __name__ == "__main__":
    unittest.main()
