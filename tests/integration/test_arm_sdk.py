"""The Batch AI management API (2018-05-01) driven by the azure-mgmt-batchai SDK over HTTPS, with
its own LRO pollers, plus the little ARM around it (resource groups, storage accounts)."""
import unittest
import urllib.request

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.mgmt.batchai import BatchAI
from azure.mgmt.batchai import models as m
from azure.mgmt.network import NetworkManagementClient
from azure.mgmt.resource import ResourceManagementClient
from azure.mgmt.storage import StorageManagementClient
from azure.storage.blob import BlobServiceClient, CorsRule
from azure.storage.fileshare import ShareServiceClient

import harness

RG = "rg-sdk"
LOCATION = "eastus"


def cluster_parameters(target=1, password="Secret-Pass1"):
    return m.ClusterCreateParameters(
        vm_size="STANDARD_NC6",
        user_account_settings=m.UserAccountSettings(admin_user_name="alice", admin_user_password=password),
        scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=target)))


def job_parameters(cluster_id, **extra):
    settings = dict(cluster=m.ResourceId(id=cluster_id), node_count=1,
                    std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs",
                    custom_toolkit_settings=m.CustomToolkitSettings(command_line="echo hello"))
    settings.update(extra)
    return m.JobCreateParameters(**settings)


class BatchAiSdkTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator().start()
        cls.client = harness.arm_client(BatchAI, cls.emu.endpoints)
        cls.resources = harness.arm_client(ResourceManagementClient, cls.emu.endpoints)
        cls.resources.resource_groups.create_or_update(RG, {"location": LOCATION})

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert code == 0, f"emulator exited with {code}"

    def workspace(self, name):
        return self.client.workspaces.begin_create(
            RG, name, m.WorkspaceCreateParameters(location=LOCATION, tags={"team": "ml"})).result()

    def cluster(self, workspace, name):
        # No nodes: these tests look at the API's side of jobs, which then stay queued.
        return self.client.clusters.begin_create(RG, workspace, name, cluster_parameters(target=0)).result()

    def assert_not_found(self, code, call, *args):
        with self.assertRaises(ResourceNotFoundError) as caught:
            call(*args)
        self.assertEqual(caught.exception.error.code, code)

    def test_workspace_lifecycle(self):
        ws = self.workspace("ws-life")
        self.assertEqual(ws.provisioning_state, "succeeded")
        self.assertEqual(ws.location, LOCATION)
        self.assertEqual(ws.tags, {"team": "ml"})
        self.assertEqual(self.client.workspaces.get(RG, "ws-life").id, ws.id)
        self.assertIn("ws-life", [w.name for w in self.client.workspaces.list_by_resource_group(RG)])
        self.assertIn("ws-life", [w.name for w in self.client.workspaces.list()])
        updated = self.client.workspaces.update(RG, "ws-life", m.WorkspaceUpdateParameters(tags={"team": "vision"}))
        self.assertEqual(updated.tags, {"team": "vision"})
        self.assertEqual(self.client.workspaces.get(RG, "ws-life").tags, {"team": "vision"})
        self.client.workspaces.begin_delete(RG, "ws-life").result()
        self.assert_not_found("WorkspaceNotFound", self.client.workspaces.get, RG, "ws-life")

    def test_experiment_lifecycle_and_paging(self):
        self.workspace("ws-exp")
        names = [f"exp{i}" for i in range(5)]
        for name in names:
            exp = self.client.experiments.begin_create(RG, "ws-exp", name).result()
            self.assertEqual(exp.provisioning_state, "succeeded")
        pages = self.client.experiments.list_by_workspace(
            RG, "ws-exp", m.ExperimentsListByWorkspaceOptions(max_results=2)).by_page()
        sizes = [len(list(page)) for page in pages]
        self.assertEqual(sizes, [2, 2, 1])
        self.assertEqual([e.name for e in self.client.experiments.list_by_workspace(RG, "ws-exp")], names)
        self.client.experiments.begin_delete(RG, "ws-exp", "exp0").result()
        self.assert_not_found("ExperimentNotFound", self.client.experiments.get, RG, "ws-exp", "exp0")
        self.assertEqual(self.client.experiments.get(RG, "ws-exp", "exp1").name, "exp1")

    def test_cluster_lifecycle_update_and_secrets(self):
        self.workspace("ws-cl")
        cluster = self.cluster("ws-cl", "gpu")
        self.assertEqual(cluster.provisioning_state, "succeeded")
        self.assertEqual(cluster.vm_priority, "dedicated")
        self.assertEqual(cluster.scale_settings.manual.node_deallocation_option, "requeue")
        self.assertIn(cluster.allocation_state, ("steady", "resizing"))
        self.assertIsNone(cluster.user_account_settings.admin_user_password)
        self.assertEqual(cluster.user_account_settings.admin_user_name, "alice")
        self.assertEqual(cluster.virtual_machine_configuration.image_reference.offer, "amlcompute")
        updated = self.client.clusters.update(RG, "ws-cl", "gpu", m.ClusterUpdateParameters(scale_settings=m.ScaleSettings(
            auto_scale=m.AutoScaleSettings(minimum_node_count=0, maximum_node_count=3))))
        self.assertIsNone(updated.scale_settings.manual)
        self.assertEqual(updated.scale_settings.auto_scale.maximum_node_count, 3)
        self.assertEqual(self.client.clusters.get(RG, "ws-cl", "gpu").scale_settings.auto_scale.minimum_node_count, 0)
        self.assertEqual([c.name for c in self.client.clusters.list_by_workspace(RG, "ws-cl")], ["gpu"])
        self.assertEqual(list(self.client.clusters.list_remote_login_information(RG, "ws-cl", "gpu")), [])
        # A create of a cluster that exists changes nothing and returns it.
        again = self.client.clusters.begin_create(RG, "ws-cl", "gpu", cluster_parameters()).result()
        self.assertEqual(again.scale_settings.auto_scale.maximum_node_count, 3)
        self.client.clusters.begin_delete(RG, "ws-cl", "gpu").result()
        self.assert_not_found("ClusterNotFound", self.client.clusters.get, RG, "ws-cl", "gpu")

    def test_file_server_lifecycle(self):
        self.workspace("ws-fs")
        fs = self.client.file_servers.begin_create(RG, "ws-fs", "nfs", m.FileServerCreateParameters(
            vm_size="STANDARD_D2_V2",
            ssh_configuration=m.SshConfiguration(user_account_settings=m.UserAccountSettings(
                admin_user_name="bob", admin_user_ssh_public_key="ssh-rsa AAAA bob")),
            data_disks=m.DataDisks(disk_size_in_gb=10, disk_count=2, storage_account_type="Standard_LRS"))).result()
        self.assertEqual(fs.provisioning_state, "succeeded")
        self.assertEqual(fs.mount_settings.mount_point, "/data")
        # The subnet of the virtual network the service made for it, in a group of its own.
        self.assertRegex(fs.subnet.id, r"^/subscriptions/[^/]+/resourceGroups/fileserverrg-[0-9a-f-]{36}/providers/"
                                       r"Microsoft.Network/virtualNetworks/[0-9a-f-]{36}vnet/subnets/Subnet-1$")
        self.assertIsNone(fs.ssh_configuration.public_ips_to_allow)
        self.assertEqual(fs.data_disks.caching_type, "none")
        self.assertEqual([f.name for f in self.client.file_servers.list_by_workspace(RG, "ws-fs")], ["nfs"])
        # This SDK has no get or delete for file servers: raw requests, as the REST API documents them.
        path = f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/{RG}/providers/Microsoft.BatchAI/workspaces/ws-fs/fileServers/nfs"
        got = harness.arm_call(self.emu.endpoints, "GET", path)
        self.assertEqual(got.status_code, 200)
        self.assertNotIn("adminUserPassword", got.text)
        deleted = harness.arm_call(self.emu.endpoints, "DELETE", path)
        self.assertEqual(deleted.status_code, 202)
        self.assertEqual(harness.wait_for_operation(self.emu.endpoints, deleted)["status"], "Succeeded")
        missing = harness.arm_call(self.emu.endpoints, "GET", path)
        self.assertEqual((missing.status_code, missing.json()["error"]["code"]), (404, "FileServerNotFound"))

    def test_job_lifecycle_defaults_and_redaction(self):
        self.workspace("ws-job")
        self.client.experiments.begin_create(RG, "ws-job", "exp").result()
        cluster = self.cluster("ws-job", "c")
        job = self.client.jobs.begin_create(RG, "ws-job", "exp", "j1", job_parameters(
            cluster.id,
            secrets=[m.EnvironmentVariableWithSecretValue(name="TOKEN", value="s3cret")],
            environment_variables=[m.EnvironmentVariable(name="MODE", value="fast")],
            mount_volumes=m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
                account_name="acct", azure_file_url="https://acct.file.core.windows.net/data",
                credentials=m.AzureStorageCredentialsInfo(account_key="a2V5"), relative_mount_path="afs")]))).result()
        self.assertEqual(job.provisioning_state, "succeeded")
        self.assertEqual(job.execution_state, "queued")
        self.assertIsNone(job.execution_info)
        self.assertEqual(job.scheduling_priority, "normal")
        self.assertEqual(job.tool_type, "custom")
        self.assertEqual(job.constraints.max_wall_clock_time.days, 150)  # the service's default by 2020
        self.assertTrue(job.job_output_directory_path_segment.startswith(
            f"{harness.SUBSCRIPTION}/{RG}/workspaces/ws-job/experiments/exp/jobs/j1/"))
        self.assertEqual([s.name for s in job.secrets], ["TOKEN"])
        self.assertIsNone(job.secrets[0].value)
        self.assertEqual(job.environment_variables[0].value, "fast")
        share = job.mount_volumes.azure_file_shares[0]
        self.assertIsNone(share.credentials.account_key)
        self.assertEqual((share.file_mode, share.directory_mode), ("0777", "0777"))

        mpi = self.client.jobs.begin_create(RG, "ws-job", "exp", "mpi", job_parameters(
            cluster.id, node_count=2, custom_toolkit_settings=None,
            custom_mpi_settings=m.CustomMpiSettings(command_line="hostname"))).result()
        self.assertEqual(mpi.tool_type, "custommpi")
        self.assertEqual(mpi.custom_mpi_settings.process_count, 2)

        self.assertEqual(sorted(j.name for j in self.client.jobs.list_by_experiment(RG, "ws-job", "exp")), ["j1", "mpi"])
        self.assertEqual(list(self.client.jobs.list_remote_login_information(RG, "ws-job", "exp", "j1")), [])
        self.client.jobs.begin_terminate(RG, "ws-job", "exp", "j1").result()
        terminated = self.client.jobs.get(RG, "ws-job", "exp", "j1")
        self.assertEqual(terminated.execution_state, "failed")
        self.assertIsNone(terminated.execution_info.exit_code)
        self.assertEqual(terminated.execution_info.errors[0].code, "JobTerminated")
        self.client.jobs.begin_delete(RG, "ws-job", "exp", "j1").result()
        self.assert_not_found("JobNotFound", self.client.jobs.get, RG, "ws-job", "exp", "j1")
        self.assertEqual(self.client.jobs.get(RG, "ws-job", "exp", "mpi").name, "mpi")

    def test_defaults_are_the_services_latest(self):
        # What the service filled in for the Java SDK's tests (its records of 2019-2020), and the
        # image and job fields of its latest records (the az CLI's, February and July 2021).
        self.workspace("ws-2020")
        self.client.experiments.begin_create(RG, "ws-2020", "exp").result()
        # The body the Java SDK sent (this Python SDK always sends initialNodeCount).
        path = f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/{RG}/providers/Microsoft.BatchAI/workspaces/ws-2020/clusters/small"
        created = harness.arm_call(self.emu.endpoints, "PUT", path, {"properties": {
            "vmSize": "Standard_D1_v2",
            "scaleSettings": {"autoScale": {"minimumNodeCount": 1, "maximumNodeCount": 1}},
            "userAccountSettings": {"adminUserName": "tirekicker", "adminUserPassword": "MyPassword"}}})
        self.assertEqual(created.status_code, 202)
        harness.wait_for(lambda: self.client.clusters.get(RG, "ws-2020", "small").provisioning_state == "succeeded",
                         timeout=30, what="cluster created")
        cluster = self.client.clusters.get(RG, "ws-2020", "small")
        self.assertEqual(cluster.vm_size, "STANDARD_D1_V2")
        self.assertEqual(cluster.scale_settings.auto_scale.initial_node_count, 1)
        image = cluster.virtual_machine_configuration.image_reference
        self.assertEqual((image.publisher, image.offer, image.sku, image.version),
                         ("microsoft-dsvm", "amlcompute", "runtime-gen1-ubuntu18", "latest"))
        job = self.client.jobs.begin_create(RG, "ws-2020", "exp", "MyJob", m.JobCreateParameters(
            cluster=m.ResourceId(id=cluster.id), node_count=1, std_out_err_path_prefix="$AZ_BATCHAI_MOUNT_ROOT/logs",
            cntk_settings=m.CNTKsettings(python_script_file_path="$AZ_BATCHAI_JOB_MOUNT_ROOT/none.py"))).result()
        self.assertEqual(job.name, "myjob")
        self.assertTrue(job.id.endswith("/jobs/myjob"))
        self.assertEqual(job.constraints.max_wall_clock_time.days, 150)
        self.assertEqual(job.cntk_settings.language_type, "Python")
        self.assertIn("/jobs/myjob/", job.job_output_directory_path_segment)
        raw = harness.arm_call(self.emu.endpoints, "GET", job.id).json()["properties"]
        self.assertEqual((raw["maxJobDurationSeconds"], raw["cleanupNodeBeforeRun"], raw["cleanupNodeAfterRun"]),
                         (2592000, False, False))
        self.assertEqual(raw["constraints"]["maxAttempts"], 5)
        self.assertEqual(self.client.jobs.get(RG, "ws-2020", "exp", "MYJOB").name, "myjob")
        # A shorter maxWallClockTime is the shorter cap.
        short = self.client.jobs.begin_create(RG, "ws-2020", "exp", "short", job_parameters(
            cluster.id, constraints=m.JobBasePropertiesConstraints(max_wall_clock_time="PT2H"))).result()
        self.assertEqual(harness.arm_call(self.emu.endpoints, "GET", short.id).json()["properties"]["maxJobDurationSeconds"], 7200)
        # The Ubuntu Data Science VM image was refused by then.
        with self.assertRaises(HttpResponseError) as caught:
            self.client.clusters.begin_create(RG, "ws-2020", "dsvm", m.ClusterCreateParameters(
                vm_size="STANDARD_D1_V2",
                user_account_settings=m.UserAccountSettings(admin_user_name="a", admin_user_password="Pass-1234"),
                virtual_machine_configuration=m.VirtualMachineConfiguration(image_reference=m.ImageReference(
                    publisher="microsoft-ads", offer="linux-data-science-vm-ubuntu", sku="linuxdsvmubuntu")))).result()
        self.assertEqual((caught.exception.status_code, caught.exception.error.code), (400, "PropertyNotSupported"))
        self.assertIn("imageReference", caught.exception.error.message)

    def test_job_needs_an_existing_cluster(self):
        self.workspace("ws-nocl")
        self.client.experiments.begin_create(RG, "ws-nocl", "exp").result()
        missing = f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/{RG}/providers/Microsoft.BatchAI/workspaces/ws-nocl/clusters/none"
        with self.assertRaises(HttpResponseError) as caught:
            self.client.jobs.begin_create(RG, "ws-nocl", "exp", "j", job_parameters(missing)).result()
        self.assertEqual(caught.exception.status_code, 400)
        self.assertEqual(caught.exception.error.code, "ClusterNotFound")
        self.assertEqual(caught.exception.error.target, "properties.cluster.id")

    def test_isolation_of_workspaces_and_experiments(self):
        for ws in ("iso-a", "iso-b"):
            self.workspace(ws)
            cluster = self.cluster(ws, "c")
            for exp in ("e1", "e2"):
                self.client.experiments.begin_create(RG, ws, exp).result()
                self.client.jobs.begin_create(RG, ws, exp, "job", job_parameters(cluster.id)).result()
        self.client.experiments.begin_delete(RG, "iso-a", "e1").result()
        self.assert_not_found("ExperimentNotFound", self.client.jobs.get, RG, "iso-a", "e1", "job")
        self.assertEqual(self.client.jobs.get(RG, "iso-a", "e2", "job").execution_state, "queued")
        self.client.workspaces.begin_delete(RG, "iso-a").result()
        self.assert_not_found("WorkspaceNotFound", self.client.jobs.get, RG, "iso-a", "e2", "job")
        self.assert_not_found("WorkspaceNotFound", self.client.clusters.get, RG, "iso-a", "c")
        for exp in ("e1", "e2"):
            self.assertEqual(self.client.jobs.get(RG, "iso-b", exp, "job").name, "job")
        self.assertEqual(self.client.clusters.get(RG, "iso-b", "c").name, "c")

    def test_operations_and_usages(self):
        names = {o.name for o in self.client.operations.list()}
        self.assertIn("Microsoft.BatchAI/workspaces/experiments/jobs/write", names)
        self.assertIn("Microsoft.BatchAI/workspaces/clusters/delete", names)
        usages = list(self.client.usages.list(LOCATION))
        self.assertEqual(len(usages), 55)  # the June 2021 model
        for usage in usages:
            self.assertEqual(usage.unit, "Count")
            self.assertTrue(usage.name.value)
        self.assertEqual(usages[0].name.value, "Total Cluster vCPUs")

    def test_list_output_files_reads_the_mounted_share(self):
        self.workspace("ws-out")
        self.client.experiments.begin_create(RG, "ws-out", "exp").result()
        params = cluster_parameters(target=0)
        params.node_setup = m.NodeSetup(mount_volumes=m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
            account_name=harness.DEV_ACCOUNT, azure_file_url=f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/logs",
            credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path="afs")]))
        cluster = self.client.clusters.begin_create(RG, "ws-out", "c", params).result()
        job = self.client.jobs.begin_create(RG, "ws-out", "exp", "j", job_parameters(
            cluster.id, output_directories=[m.OutputDirectory(id="MODEL", path_prefix="$AZ_BATCHAI_MOUNT_ROOT/afs")])).result()
        segment = job.job_output_directory_path_segment
        shares = ShareServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
        share = shares.create_share("logs")
        path = ""
        for part in (segment + "/stdouterr").split("/"):
            path = f"{path}/{part}" if path else part
            share.create_directory(path)
        share.get_file_client(f"{path}/stdout.txt").upload_file(b"hello\n")
        share.get_file_client(f"{path}/stderr.txt").upload_file(b"")
        share.create_directory(f"{path}/ranks")
        files = list(self.client.jobs.list_output_files(
            RG, "ws-out", "exp", "j", m.JobsListOutputFilesOptions(outputdirectoryid="stdouterr", max_results=2)))
        kinds = {f.name: f.file_type for f in files}
        self.assertEqual(kinds, {"stdout.txt": "file", "stderr.txt": "file", "ranks": "directory"})
        stdout = next(f for f in files if f.name == "stdout.txt")
        self.assertEqual(stdout.content_length, 6)
        with urllib.request.urlopen(stdout.download_url, timeout=10) as r:
            self.assertEqual(r.read(), b"hello\n")
        outputs = list(self.client.jobs.list_output_files(
            RG, "ws-out", "exp", "j", m.JobsListOutputFilesOptions(outputdirectoryid="MODEL")))
        self.assertEqual(outputs, [])
        with self.assertRaises(HttpResponseError) as caught:
            list(self.client.jobs.list_output_files(
                RG, "ws-out", "exp", "j", m.JobsListOutputFilesOptions(outputdirectoryid="NOPE")))
        self.assertEqual(caught.exception.status_code, 400)
        # A directory outside the output directory, with either slash, is a 400 naming the parameter.
        for directory in ("..", "../..", "..\\..\\..", "ranks\\..\\..\\..", "ranks/../../x", "a\\..\\..\\b",
                          "bad:name", "ranks\\bad|name"):
            with self.assertRaises(HttpResponseError, msg=directory) as caught:
                list(self.client.jobs.list_output_files(RG, "ws-out", "exp", "j", m.JobsListOutputFilesOptions(
                    outputdirectoryid="stdouterr", directory=directory)))
            self.assertEqual(caught.exception.status_code, 400, directory)
            self.assertEqual(caught.exception.error.code, "InvalidQueryParameterValue", directory)
            self.assertEqual(caught.exception.error.target, "directory", directory)
        # A backslash separates like a slash: ranks\. is the ranks directory.
        self.assertEqual(list(self.client.jobs.list_output_files(RG, "ws-out", "exp", "j", m.JobsListOutputFilesOptions(
            outputdirectoryid="stdouterr", directory="ranks\\."))), [])


class ArmAroundBatchAiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.emu = harness.Emulator().start()
        cls.resources = harness.arm_client(ResourceManagementClient, cls.emu.endpoints)
        cls.storage = harness.arm_client(StorageManagementClient, cls.emu.endpoints)
        cls.batchai = harness.arm_client(BatchAI, cls.emu.endpoints)

    @classmethod
    def tearDownClass(cls):
        code, _ = cls.emu.stop()
        cls.emu.close()
        assert code == 0, f"emulator exited with {code}"

    def test_resource_groups(self):
        group = self.resources.resource_groups.create_or_update("rg-a", {"location": "westeurope", "tags": {"a": "1"}})
        self.assertEqual(group.location, "westeurope")
        self.assertTrue(self.resources.resource_groups.check_existence("rg-a"))
        self.assertFalse(self.resources.resource_groups.check_existence("rg-none"))
        self.assertIn("rg-a", [g.name for g in self.resources.resource_groups.list()])
        self.batchai.workspaces.begin_create("rg-a", "ws", m.WorkspaceCreateParameters(location="westeurope")).result()
        self.resources.resource_groups.begin_delete("rg-a").result()
        self.assertFalse(self.resources.resource_groups.check_existence("rg-a"))
        with self.assertRaises(ResourceNotFoundError) as caught:
            self.batchai.workspaces.get("rg-a", "ws")
        self.assertEqual(caught.exception.error.code, "ResourceGroupNotFound")
        # A subscription where no group was ever made is one ARM does not know.
        unknown = harness.arm_call(self.emu.endpoints, "GET", "/subscriptions/99999999-0000-0000-0000-000000000000/"
                                   "resourceGroups/nowhere/providers/Microsoft.BatchAI/workspaces/ws")
        self.assertEqual((unknown.status_code, unknown.json()["error"]["code"]), (404, "SubscriptionNotFound"))

    def test_virtual_networks_and_a_cluster_in_one_of_their_subnets(self):
        network = harness.arm_client(NetworkManagementClient, self.emu.endpoints)
        self.resources.resource_groups.create_or_update("rg-net", {"location": "eastus"})
        body = {"location": "eastus", "address_space": {"address_prefixes": ["192.168.0.0/16"]},
                "subnets": [{"name": "MySubnet", "address_prefix": "192.168.200.0/24"},
                            {"name": "Other", "address_prefix": "192.168.1.0/24"}]}
        vnet = network.virtual_networks.begin_create_or_update("rg-net", "vnet1", body).result()
        self.assertEqual(vnet.provisioning_state, "Succeeded")
        self.assertEqual([s.name for s in vnet.subnets], ["MySubnet", "Other"])
        self.assertTrue(all(s.provisioning_state == "Succeeded" for s in vnet.subnets))
        self.assertEqual(network.virtual_networks.get("rg-net", "vnet1").resource_guid, vnet.resource_guid)
        self.assertEqual([v.name for v in network.virtual_networks.list("rg-net")], ["vnet1"])
        self.assertIn("vnet1", [v.name for v in network.virtual_networks.list_all()])
        subnet = network.subnets.get("rg-net", "vnet1", "MySubnet")
        self.assertEqual((subnet.address_prefix, subnet.id), ("192.168.200.0/24", vnet.id + "/subnets/MySubnet"))
        self.assertEqual(sorted(s.name for s in network.subnets.list("rg-net", "vnet1")), ["MySubnet", "Other"])
        # Refused as the Network provider refuses, naming the field.
        bad = [({"location": "eastus", "address_space": {"address_prefixes": ["10.0.0.0/16"]},
                 "subnets": [{"name": "s", "address_prefix": "10.1.0.0/24"}]}, "NetcfgSubnetRangeOutsideVnet"),
               ({"location": "eastus", "address_space": {"address_prefixes": ["10.0.0.0/16"]},
                 "subnets": [{"name": "a", "address_prefix": "10.0.0.0/24"}, {"name": "b", "address_prefix": "10.0.0.128/25"}]},
                "NetcfgSubnetRangesOverlap"),
               ({"location": "eastus", "address_space": {"address_prefixes": ["10.0.0.300/16"]}}, "InvalidAddressPrefixFormat"),
               ({"address_space": {"address_prefixes": ["10.0.0.0/16"]}}, "LocationRequired")]
        for doc, code in bad:
            with self.assertRaises(HttpResponseError) as caught:
                network.virtual_networks.begin_create_or_update("rg-net", "bad", doc).result()
            self.assertEqual((caught.exception.status_code, caught.exception.error.code), (400, code))
        with self.assertRaises(ResourceNotFoundError):
            network.virtual_networks.get("rg-net", "bad")
        # An update keeps the network's identity and answers 200.
        body["subnets"].append({"name": "Third", "address_prefix": "192.168.2.0/24"})
        again = network.virtual_networks.begin_create_or_update("rg-net", "vnet1", body).result()
        self.assertEqual((again.resource_guid, len(again.subnets)), (vnet.resource_guid, 3))
        # A Batch AI cluster in the subnet names it.
        self.batchai.workspaces.begin_create("rg-net", "ws", m.WorkspaceCreateParameters(location="eastus")).result()
        cluster = self.batchai.clusters.begin_create("rg-net", "ws", "c", m.ClusterCreateParameters(
            vm_size="STANDARD_D1_V2", subnet=m.ResourceId(id=subnet.id),
            user_account_settings=m.UserAccountSettings(admin_user_name="a", admin_user_password="Pass-1234"))).result()
        self.assertEqual(cluster.subnet.id, subnet.id)
        network.virtual_networks.begin_delete("rg-net", "vnet1").result()
        with self.assertRaises(ResourceNotFoundError):
            network.virtual_networks.get("rg-net", "vnet1")
        # A group's deletion takes its networks.
        network.virtual_networks.begin_create_or_update("rg-net", "vnet2", body).result()
        self.resources.resource_groups.begin_delete("rg-net").result()
        self.assertNotIn("vnet2", [v.name for v in network.virtual_networks.list_all()])

    def test_storage_account_keys_work_on_the_storage_services(self):
        self.resources.resource_groups.create_or_update("rg-st", {"location": "eastus"})
        account = self.storage.storage_accounts.begin_create("rg-st", "mldata01", {
            "location": "eastus", "kind": "StorageV2", "sku": {"name": "Standard_LRS"}}).result()
        self.assertEqual(account.provisioning_state, "Succeeded")
        self.assertEqual(account.primary_endpoints.blob, f"{self.emu.endpoints['blob']}/mldata01/")
        self.assertEqual(self.storage.storage_accounts.get_properties("rg-st", "mldata01").name, "mldata01")
        self.assertIn("mldata01", [a.name for a in self.storage.storage_accounts.list_by_resource_group("rg-st")])
        self.assertIn("mldata01", [a.name for a in self.storage.storage_accounts.list()])
        keys = {k.key_name: k.value for k in self.storage.storage_accounts.list_keys("rg-st", "mldata01").keys}
        self.assertEqual(set(keys), {"key1", "key2"})
        conn = harness.connection_string(self.emu.endpoints, "mldata01", keys["key1"])
        BlobServiceClient.from_connection_string(conn).create_container("models")
        fresh = {k.key_name: k.value for k in self.storage.storage_accounts.regenerate_key(
            "rg-st", "mldata01", {"key_name": "key1"}).keys}
        self.assertNotEqual(fresh["key1"], keys["key1"])
        self.assertEqual(fresh["key2"], keys["key2"])
        with self.assertRaises(HttpResponseError) as caught:
            BlobServiceClient.from_connection_string(conn).create_container("other")
        self.assertEqual(caught.exception.status_code, 403)
        conn = harness.connection_string(self.emu.endpoints, "mldata01", fresh["key1"])
        self.assertIn("models", [c.name for c in BlobServiceClient.from_connection_string(conn).list_containers()])
        with self.assertRaises(HttpResponseError) as caught:
            self.storage.storage_accounts.begin_create("rg-st", "devstoreaccount1", {
                "location": "eastus", "kind": "StorageV2", "sku": {"name": "Standard_LRS"}}).result()
        self.assertEqual(caught.exception.status_code, 409)
        ShareServiceClient.from_connection_string(conn).create_share("scripts")
        self.storage.storage_accounts.delete("rg-st", "mldata01")
        with self.assertRaises(ResourceNotFoundError):
            self.storage.storage_accounts.get_properties("rg-st", "mldata01")
        with self.assertRaises(HttpResponseError) as caught:
            BlobServiceClient.from_connection_string(conn).create_container("gone")
        self.assertIn(caught.exception.status_code, (403, 404))
        # Its containers and shares went with it: an account of the same name starts empty, also
        # when it goes with its resource group.
        for delete in (lambda: self.storage.storage_accounts.delete("rg-st", "mldata01"),
                       lambda: self.resources.resource_groups.begin_delete("rg-st").result()):
            self.resources.resource_groups.create_or_update("rg-st", {"location": "eastus"})
            self.storage.storage_accounts.begin_create("rg-st", "mldata01", {
                "location": "eastus", "kind": "StorageV2", "sku": {"name": "Standard_LRS"}}).result()
            key = self.storage.storage_accounts.list_keys("rg-st", "mldata01").keys[0].value
            conn = harness.connection_string(self.emu.endpoints, "mldata01", key)
            blobs = BlobServiceClient.from_connection_string(conn)
            self.assertEqual([c.name for c in blobs.list_containers()], [])
            self.assertEqual([s.name for s in ShareServiceClient.from_connection_string(conn).list_shares()], [])
            self.assertEqual(blobs.get_service_properties()["cors"], [])  # no settings of the old account
            # A leased container and service properties go with the account too.
            blobs.create_container("models").acquire_lease(lease_duration=-1)
            blobs.set_service_properties(cors=[CorsRule(["https://app.example"], ["GET"])])
            ShareServiceClient.from_connection_string(conn).create_share("scripts")
            delete()


if __name__ == "__main__":
    unittest.main()
