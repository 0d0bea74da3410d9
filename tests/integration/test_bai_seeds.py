"""The seeds' command sequences with `az batchai` replaced by `bai` and storage done by
`az storage` against the emulator, end to end: the CNTK MNIST quickstart on the flat preview API,
the Horovod recipe on a workspace with job preparation, and the one-command submit workflow
(project.json, images in a blob container, a 0-node auto-scale cluster). The frameworks are not
installed: `python` on the nodes is the system Python, and the scripts are small stand-ins that
read their data and write their models as the real ones do. Jobs run on the host
(--container-runtime host): the seeds' images are not at hand."""
import json
import os
import shutil
import tempfile
import unittest

from azure.mgmt.storage import StorageManagementClient

import harness
from bai_fixture import BaiTestCase

MNIST_SCRIPT = r'''
import os, sys
data, model = sys.argv[1], sys.argv[2]
for name in ("Train-28x28_cntk_text.txt", "Test-28x28_cntk_text.txt"):
    with open(os.path.join(data, name)) as f:
        print("read %d samples from %s" % (len(f.read().splitlines()), name))
sys.stderr.write("Finished Epoch[1 of 2]: loss = 0.5\nFinished Epoch[2 of 2]: loss = 0.1\n")
with open(os.path.join(model, "ConvNet_MNIST.dnn"), "w") as f:
    f.write("trained")
print("model saved")
'''

HOROVOD_SCRIPT = r'''
import os
rank, size = os.environ["OMPI_COMM_WORLD_RANK"], os.environ["OMPI_COMM_WORLD_SIZE"]
prepared = os.path.exists(os.path.join(os.environ["AZ_BATCHAI_JOB_TEMP"], "prepared"))
print("horovod rank %s of %s prepared=%s" % (rank, size, prepared))
'''

TRANSFER_SCRIPT = r'''
import os
data = os.path.join(os.environ["AZ_BATCHAI_JOB_MOUNT_ROOT"], "data")
counts = {d: len(os.listdir(os.path.join(data, d))) for d in ("train", "val")}
for epoch in range(2):
    print("epoch %d train=%d val=%d" % (epoch, counts["train"], counts["val"]))
with open(os.path.join(os.environ["AZ_BATCHAI_OUTPUT_MODEL"], "model.pt"), "w") as f:
    f.write("weights for %d images" % sum(counts.values()))
'''


class Seeds(BaiTestCase):
    emulator_args = BaiTestCase.emulator_args + ["--container-runtime", "host"]

    @classmethod
    def setUpClass(cls):
        # `python` on the nodes: the system interpreter, as the images' python would be.
        cls.tools = tempfile.mkdtemp(prefix="bai-python-")
        os.symlink("/usr/bin/python3", os.path.join(cls.tools, "python"))
        cls.emulator_env = dict(os.environ, PATH=cls.tools + ":" + os.environ["PATH"])
        super().setUpClass()
        cls.env["AZURE_SUBSCRIPTION_ID"] = harness.SUBSCRIPTION  # the subscription the SDK made the account in
        cls.conn = harness.connection_string(cls.endpoints)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.tools, ignore_errors=True)

    def az(self, *args, conn=None, cwd=None):
        result = harness.run_az(list(args), conn or self.conn, cwd=cwd)
        self.assertEqual(result.returncode, 0, f"az {' '.join(args)}:\n{result.stdout}\n{result.stderr}")
        return result

    def test_seed1_cntk_mnist_quickstart_on_the_flat_api(self):
        rg = ["--resource-group", "myResourceGroup"]
        self.bai("group", "create", "--name", "myResourceGroup", "--location", "eastus")
        # az storage account create: through ARM, as the quickstart did; its keys are generated.
        with harness.arm_client(StorageManagementClient, self.endpoints) as storage:
            storage.storage_accounts.begin_create("myResourceGroup", "mystorageaccount", {
                "location": "eastus", "sku": {"name": "Standard_LRS"}, "kind": "StorageV2"}).result()
            key = storage.storage_accounts.list_keys("myResourceGroup", "mystorageaccount").keys[0].value
        conn = harness.connection_string(self.endpoints, "mystorageaccount", key)
        files = self.write("mnist/ConvNet_MNIST.py", MNIST_SCRIPT)
        self.write("mnist/Train-28x28_cntk_text.txt", "|labels 0 1 |features 0 0\n" * 60)
        self.write("mnist/Test-28x28_cntk_text.txt", "|labels 1 0 |features 1 1\n" * 10)
        cwd = os.path.dirname(files)
        self.az("storage", "share", "create", "--name", "batchaiquickstart", conn=conn)
        self.az("storage", "directory", "create", "--share-name", "batchaiquickstart", "--name", "mnistcntksample",
                conn=conn)
        for name in ("ConvNet_MNIST.py", "Train-28x28_cntk_text.txt", "Test-28x28_cntk_text.txt"):
            self.az("storage", "file", "upload", "--share-name", "batchaiquickstart", "--source", name,
                    "--path", "mnistcntksample", conn=conn, cwd=cwd)

        # No workspace: the flat 2017-09-01-preview API; the key comes from the account through ARM.
        self.bai("cluster", "create", "--name", "mycluster", "--vm-size", "STANDARD_NC6", "--image", "UbuntuLTS",
                 "--min", "1", "--max", "1", "--storage-account-name", "mystorageaccount",
                 "--afs-name", "batchaiquickstart", "--afs-mount-path", "azurefileshare",
                 "--user-name", "demoUser", "--password", "Demo-Pass1", *rg, "--location", "eastus")
        harness.wait_for(lambda: self.bai("cluster", "show", "--name", "mycluster", *rg, "--query", "allocationState",
                                          "-o", "tsv").stdout == "steady\n", timeout=60, what="cluster steady")
        job = {"properties": {
            "nodeCount": 1,
            "cntkSettings": {"pythonScriptFilePath": "$AZ_BATCHAI_INPUT_SCRIPT/ConvNet_MNIST.py",
                             "commandLineArgs": "$AZ_BATCHAI_INPUT_DATASET $AZ_BATCHAI_OUTPUT_MODEL"},
            "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/azurefileshare",
            "inputDirectories": [{"id": "SCRIPT", "path": "$AZ_BATCHAI_MOUNT_ROOT/azurefileshare/mnistcntksample"},
                                 {"id": "DATASET", "path": "$AZ_BATCHAI_MOUNT_ROOT/azurefileshare/mnistcntksample"}],
            "outputDirectories": [{"id": "MODEL", "pathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/azurefileshare",
                                   "pathSuffix": "Models"}],
            "containerSettings": {"imageSourceRegistry": {"image": "microsoft/cntk:2.1-gpu-python3.5-cuda8.0-cudnn6.0"}}}}
        self.bai("job", "create", "--name", "myjob", "--cluster-name", "mycluster", *rg,
                 "--config", self.write("mnist/job.json", job), "--location", "eastus")
        harness.wait_for(lambda: self.bai("job", "show", "--name", "myjob", *rg, "--query", "executionState",
                                          "-o", "tsv").stdout in ("succeeded\n", "failed\n"), timeout=90,
                         what="job done")
        shown = self.bai_json("job", "show", "--name", "myjob", *rg)
        self.assertEqual(shown["executionState"], "succeeded", shown)
        listed = self.bai("job", "list-files", "--name", "myjob", "--output-directory-id", "stdouterr", *rg,
                          "-o", "table").stdout
        self.assertIn("stdout.txt", listed)
        self.assertIn("stderr.txt", listed)
        streamed = self.bai("job", "stream-file", "--job-name", "myjob", "--output-directory-id", "stdouterr",
                            "--name", "stderr.txt", *rg).stdout
        self.assertIn("Finished Epoch[2 of 2]: loss = 0.1", streamed)
        stdout = self.bai("job", "stream-file", "--job-name", "myjob", "-d", "stdouterr", "-n", "stdout.txt", *rg).stdout
        self.assertIn("read 60 samples from Train-28x28_cntk_text.txt", stdout)
        models = self.bai_json("job", "list-files", "--name", "myjob", "-d", "MODEL", *rg)
        self.assertEqual([f["name"] for f in models], ["ConvNet_MNIST.dnn"])
        self.bai("job", "delete", "--name", "myjob", *rg, "-y")
        self.bai("cluster", "delete", "--name", "mycluster", *rg, "-y")
        self.assertEqual(self.bai_json("cluster", "list", *rg), [])

    def test_seed2_horovod_on_a_workspace_with_job_preparation(self):
        names = ["-g", "batchai.recipes", "-w", "recipe_workspace"]
        self.bai("group", "create", "-n", "batchai.recipes", "-l", "eastus")
        self.bai("workspace", "create", "-g", "batchai.recipes", "-n", "recipe_workspace", "-l", "eastus")
        script = self.write("horovod/tensorflow_mnist.py", HOROVOD_SCRIPT)
        self.az("storage", "share", "create", "-n", "logs")
        self.az("storage", "share", "create", "-n", "scripts")
        self.az("storage", "directory", "create", "-n", "horovod", "-s", "scripts")
        self.az("storage", "file", "upload", "-s", "scripts", "--source", script, "-p", "horovod")
        self.bai("cluster", "create", "-n", "nc6", *names, "-s", "Standard_NC6", "-t", "2", "--generate-ssh-keys")
        harness.wait_for(lambda: self.bai_json("cluster", "show", "-n", "nc6", *names)
                         .get("nodeStateCounts", {}).get("idleNodeCount") == 2, timeout=60, what="2 idle nodes")
        self.assertRegex(self.bai("cluster", "show", "-n", "nc6", *names, "-o", "table").stdout,
                         r"nc6\s+batchai.recipes\s+recipe_workspace\s+STANDARD_NC6\s+steady\s+2\s+0\s+0\s+0\s+0")
        self.bai("experiment", "create", *names, "-n", "horovod_experiment")
        # The recipe's job.json, its job preparation made harmless (no apt or pip here).
        with open(os.path.join(harness_recipes(), "Horovod", "Horovod-Tensorflow", "job.json")) as f:
            job = json.load(f)
        job["properties"]["jobPreparation"]["commandLine"] = "touch $AZ_BATCHAI_JOB_TEMP/prepared"
        self.bai("job", "create", "-n", "horovod", "-c", "nc6", *names, "-e", "horovod_experiment",
                 "-f", self.write("horovod/job.json", job), "--storage-account-name", harness.DEV_ACCOUNT)
        streamed = self.bai("job", "file", "stream", "-j", "horovod", *names, "-e", "horovod_experiment",
                            "-f", "stdout.txt").stdout
        self.assertEqual(sorted(streamed.splitlines()),
                         ["horovod rank 0 of 2 prepared=True", "horovod rank 1 of 2 prepared=True"])
        files = self.bai_json("job", "file", "list", "-j", "horovod", *names, "-e", "horovod_experiment",
                              "-d", "stdouterr", "--query", "[].name")
        self.assertIn("stdout-job_prep.txt", files)
        nodes = self.bai_json("job", "node", "list", "-j", "horovod", *names, "-e", "horovod_experiment")
        self.assertEqual(len(nodes), 2)
        self.assertEqual(self.bai("job", "wait", "-n", "horovod", *names, "-e", "horovod_experiment").returncode, 0)
        self.bai("job", "delete", "-n", "horovod", *names, "-e", "horovod_experiment", "-y")
        self.bai("cluster", "delete", "-n", "nc6", *names, "-y")

    def test_seed3_submit_workflow_with_a_blob_data_lake(self):
        project_dir = os.path.join(self.home, "transfer")
        for split, count in (("train", 6), ("val", 3)):
            for i in range(count):
                self.write(f"transfer/images/{split}/img{i}.jpg", "jpeg" * (i + 1))
        self.az("storage", "container", "create", "-n", "datalake")
        self.az("storage", "blob", "upload-batch", "-d", "datalake", "-s", os.path.join(project_dir, "images"))
        self.write("transfer/train.py", TRANSFER_SCRIPT)
        self.write("transfer/job.json", {"properties": {
            "nodeCount": 1,
            "pyTorchSettings": {"pythonScriptFilePath": "$AZ_BATCHAI_JOB_MOUNT_ROOT/afs/scripts/train.py"},
            "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/afs",
            "outputDirectories": [{"id": "MODEL", "pathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/afs"}],
            "mountVolumes": {
                "azureFileShares": [{"azureFileUrl": "https://<AZURE_BATCHAI_STORAGE_ACCOUNT>.file.core.windows.net/work",
                                     "relativeMountPath": "afs"}],
                "azureBlobFileSystems": [{"accountName": "<AZURE_BATCHAI_STORAGE_ACCOUNT>",
                                          "containerName": "datalake", "relativeMountPath": "data"}]}}})
        project = self.write("transfer/project.json", {
            "resourceGroup": "rg-transfer", "location": "eastus", "workspace": "ws", "experiment": "transfer",
            "cluster": {"name": "gpu", "vmSize": "STANDARD_NC6", "minNodes": 0, "maxNodes": 1},
            "storage": {"accountName": harness.DEV_ACCOUNT, "share": "work", "scriptDirectory": "scripts"},
            "job": {"config": "job.json", "script": "train.py", "namePrefix": "transfer"},
            "persistCluster": False})
        self.bai("group", "create", "-n", "rg-transfer", "-l", "eastus")
        result = self.bai("job", "submit", "--project", project, timeout=300)
        self.assertIn("epoch 1 train=6 val=3", result.stdout, result.stderr)  # streamed stdout
        self.assertRegex(result.stderr, r"Job transfer_\d{8}_\d{6} submitted")
        with open(os.path.join(project_dir, "models", "model.pt")) as f:
            self.assertEqual(f.read(), "weights for 9 images")
        with open(os.path.join(project_dir, "logs", "stdout-0.txt")) as f:  # PyTorch: rank 0's
            self.assertIn("epoch 0 train=6 val=3", f.read())
        cluster = self.bai_json("cluster", "show", "-g", "rg-transfer", "-w", "ws", "-n", "gpu")
        self.assertEqual(cluster["scaleSettings"], {"manual": {"targetNodeCount": 0, "nodeDeallocationOption": "requeue"}})
        jobs = self.bai_json("job", "list", "-g", "rg-transfer", "-w", "ws", "-e", "transfer")
        self.assertEqual([j["executionState"] for j in jobs], ["succeeded"])


def harness_recipes():
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared",
                                         "reference", "jobs", "recipes"))


if __name__ == "__main__":
    unittest.main()
