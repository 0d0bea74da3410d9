"""Blob containers, file servers and unmanaged file systems mounted into jobs (fuse_mounts): a job
writes a model into a blob container and the Blob REST API has it whole once the file is closed,
directories become hdi_isfolder markers, read-only and bad mountOptions, output directories on a
container listed through listOutputFiles, a file server's export shared by two clusters, a
mountCommand run with the path appended and its failure as a clear error."""
import os
import unittest

import requests
from azure.mgmt.batchai import models as m
from azure.storage.blob import BlobServiceClient

import harness
from jobs_fixture import JobsTestCase, RG, WS, EXP, share_volume

CONTAINER = "models"


def fuse_works():
    return os.geteuid() == 0 and os.access("/dev/fuse", os.R_OK | os.W_OK)


def blob_volume(relative="bfs", container=CONTAINER, options=None):
    return m.AzureBlobFileSystemReference(
        account_name=harness.DEV_ACCOUNT, container_name=container,
        credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path=relative,
        mount_options=options)


@unittest.skipUnless(fuse_works(), "needs /dev/fuse and root to mount")
class VolumesTest(JobsTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.blobs = BlobServiceClient.from_connection_string(harness.connection_string(cls.endpoints))
        cls.container = cls.blobs.create_container(CONTAINER)
        cls.container.upload_blob("data/input.txt", b"from-rest\n")
        volumes = share_volume(cls.endpoints)
        volumes.azure_blob_file_systems = [blob_volume()]
        cls.c = cls.cluster(cls, "blobs", nodes=1, volumes=volumes)
        cls.wait_cluster(cls, "blobs", idle=1)

    def custom(self, command):
        return m.CustomToolkitSettings(command_line=command)

    def test_a_job_writes_a_blob_whole_and_reads_what_rest_wrote(self):
        bfs = "$AZ_BATCHAI_MOUNT_ROOT/bfs"
        j = self.job("writer", self.c, custom_toolkit_settings=self.custom(
            f"mkdir -p {bfs}/out/empty && cat {bfs}/data/input.txt > {bfs}/out/copy.txt && "
            f"head -c 3000000 /dev/zero > {bfs}/out/model.bin && ls {bfs}/out && "
            f"grep -q 'devstoreaccount1/{CONTAINER} .* fuse.bai-blob ' /proc/self/mounts && echo mounted"))
        self.assertEqual(j.execution_state, "succeeded", self.read("writer", "stderr.txt"))
        self.assertEqual(self.read("writer", "stdout.txt").split(), ["copy.txt", "empty", "model.bin", "mounted"])
        self.assertEqual(self.container.download_blob("out/copy.txt").readall(), b"from-rest\n")
        model = self.container.get_blob_client("out/model.bin").get_blob_properties()
        self.assertEqual(model.size, 3000000)
        marker = self.container.get_blob_client("out/empty").get_blob_properties()
        self.assertEqual(marker.size, 0)
        self.assertEqual(marker.metadata.get("hdi_isfolder"), "true")

    def test_concurrent_writers_from_several_processes(self):
        bfs = "$AZ_BATCHAI_MOUNT_ROOT/bfs/many"
        j = self.job("blobwriters", self.c, custom_toolkit_settings=self.custom(
            f"mkdir -p {bfs} && for i in 1 2 3 4 5 6; do "
            f"(head -c 300000 /dev/zero | tr '\\0' \"$i\" > {bfs}/p$i.bin) & done; wait"))
        self.assertEqual(j.execution_state, "succeeded", self.read("blobwriters", "stderr.txt"))
        for i in range(1, 7):
            self.assertEqual(self.container.download_blob(f"many/p{i}.bin").readall(), str(i).encode() * 300000, i)

    def test_output_directories_on_a_container_are_listed(self):
        j = self.job("blobout", self.c, output_directories=[
            m.OutputDirectory(id="MODEL", path_prefix="$AZ_BATCHAI_MOUNT_ROOT/bfs")],
            custom_toolkit_settings=self.custom("echo weights > $AZ_BATCHAI_OUTPUT_MODEL/w.txt"))
        self.assertEqual(j.execution_state, "succeeded", self.read("blobout", "stderr.txt"))
        self.assertEqual(self.read("blobout", "w.txt", "MODEL"), "weights\n")

    def test_job_level_read_only_container_and_bad_options(self):
        self.blobs.create_container("frozen").upload_blob("f.txt", b"kept")
        volumes = m.MountVolumes(azure_blob_file_systems=[blob_volume("ro", "frozen", "-o ro -o attr_timeout=5")])
        here = "$AZ_BATCHAI_JOB_MOUNT_ROOT/ro"
        j = self.job("readonly", self.c, mount_volumes=volumes, custom_toolkit_settings=self.custom(
            f"cat {here}/f.txt; echo x > {here}/g.txt 2>&1 || echo refused"))
        self.assertEqual(j.execution_state, "succeeded", self.read("readonly", "stderr.txt"))
        self.assertEqual(self.read("readonly", "stdout.txt"), "keptrefused\n")
        bad = m.MountVolumes(azure_blob_file_systems=[blob_volume("bad", "frozen", "-o frobnicate")])
        j = self.job("badopts", self.c, mount_volumes=bad, custom_toolkit_settings=self.custom("true"))
        self.assertEqual(j.execution_state, "failed")
        self.assertEqual(j.execution_info.errors[0].code, "JobPreparationFailed")
        self.assertIn("frobnicate", j.execution_info.errors[0].message)
        missing = m.MountVolumes(azure_blob_file_systems=[blob_volume("gone", "no-such-container")])
        j = self.job("nocontainer", self.c, mount_volumes=missing, custom_toolkit_settings=self.custom("true"))
        self.assertEqual(j.execution_state, "failed")
        self.assertIn("no-such-container", j.execution_info.errors[0].message)

    def test_container_faults_reach_the_job(self):
        url = f"{self.endpoints['arm']}/emulator/containers/{harness.DEV_ACCOUNT}/{CONTAINER}/faults"
        ca = self.endpoints["ca_cert"]
        r = requests.put(url, json={"error": "EIO", "operations": 1000}, verify=ca, timeout=10)
        self.assertEqual(r.status_code, 200, r.text)
        try:
            j = self.job("blobfault", self.c, custom_toolkit_settings=self.custom(
                "echo x > $AZ_BATCHAI_MOUNT_ROOT/bfs/fault.txt"))
        finally:
            self.assertEqual(requests.delete(url, verify=ca, timeout=10).status_code, 204)
        self.assertEqual(j.execution_state, "failed")
        self.assertEqual(requests.get(url, verify=ca, timeout=10).status_code, 404)

    def test_a_file_server_is_one_disk_shared_by_the_clusters_that_mount_it(self):
        server = self.client.file_servers.begin_create(RG, WS, "nfs", m.FileServerCreateParameters(
            vm_size="STANDARD_D2_V2",
            ssh_configuration=m.SshConfiguration(user_account_settings=m.UserAccountSettings(
                admin_user_name="bob", admin_user_ssh_public_key="ssh-rsa AAAA bob")),
            data_disks=m.DataDisks(disk_size_in_gb=10, disk_count=1, storage_account_type="Standard_LRS"))).result()
        volumes = share_volume(self.endpoints)
        volumes.file_servers = [m.FileServerReference(file_server=m.ResourceId(id=server.id), relative_mount_path="nfs")]
        first = self.cluster("fs-a", volumes=volumes)
        second = self.cluster("fs-b", volumes=volumes)
        self.wait_cluster("fs-a", idle=1)
        self.wait_cluster("fs-b", idle=1)
        nfs = "$AZ_BATCHAI_MOUNT_ROOT/nfs"
        j = self.job("fs-write", first, custom_toolkit_settings=self.custom(f"mkdir -p {nfs}/sub && echo shared > {nfs}/sub/f.txt"))
        self.assertEqual(j.execution_state, "succeeded", self.read("fs-write", "stderr.txt"))
        j = self.job("fs-read", second, custom_toolkit_settings=self.custom(
            f"cat {nfs}/sub/f.txt && grep -q ' fuse.bai-export ' /proc/self/mounts && echo mounted"))
        self.assertEqual(j.execution_state, "succeeded", self.read("fs-read", "stderr.txt"))
        self.assertEqual(self.read("fs-read", "stdout.txt"), "shared\nmounted\n")
        # A job-level mount of a subdirectory, read-only.
        sub = m.MountVolumes(file_servers=[m.FileServerReference(
            file_server=m.ResourceId(id=server.id), relative_mount_path="sub", source_directory="/data/sub",
            mount_options="ro")])
        j = self.job("fs-sub", second, mount_volumes=sub, custom_toolkit_settings=self.custom(
            "cat $AZ_BATCHAI_JOB_MOUNT_ROOT/sub/f.txt; touch $AZ_BATCHAI_JOB_MOUNT_ROOT/sub/x 2>/dev/null || echo refused"))
        self.assertEqual(self.read("fs-sub", "stdout.txt"), "shared\nrefused\n")
        wrong = m.MountVolumes(file_servers=[m.FileServerReference(
            file_server=m.ResourceId(id=server.id + "-missing"), relative_mount_path="x")])
        j = self.job("fs-missing", second, mount_volumes=wrong, custom_toolkit_settings=self.custom("true"))
        self.assertEqual(j.execution_state, "failed")
        self.assertIn("nfs-missing", j.execution_info.errors[0].message)
        # Deleting the file server deletes its disk: one created again under that name starts empty.
        disks = os.path.join(self.emu.location, "fileservers")
        self.assertEqual(len(os.listdir(disks)), 1)
        deleted = harness.arm_call(self.endpoints, "DELETE", server.id)
        self.assertEqual(harness.wait_for_operation(self.endpoints, deleted)["status"], "Succeeded")
        harness.wait_for(lambda: not os.listdir(disks), what="the file server's disk removed")

    def test_unmanaged_file_systems_run_their_mount_command(self):
        volumes = m.MountVolumes(unmanaged_file_systems=[
            m.UnmanagedFileSystemReference(mount_command="mount -t tmpfs -o size=1m tmpfs", relative_mount_path="tmp")])
        here = "$AZ_BATCHAI_JOB_MOUNT_ROOT/tmp"
        j = self.job("unmanaged", self.c, mount_volumes=volumes, custom_toolkit_settings=self.custom(
            f"echo hi > {here}/f && df -t tmpfs {here} > /dev/null && echo mounted"))
        self.assertEqual(j.execution_state, "succeeded", self.read("unmanaged", "stderr.txt"))
        self.assertEqual(self.read("unmanaged", "stdout.txt"), "mounted\n")
        after = self.job("unmanaged-after", self.c, custom_toolkit_settings=self.custom(
            "! grep -q '/jobs/unmanaged/mounts/tmp ' /proc/self/mounts"))
        self.assertEqual(after.execution_state, "succeeded", "the job-level mount outlived its job")
        failing = m.MountVolumes(unmanaged_file_systems=[
            m.UnmanagedFileSystemReference(mount_command="sh -c 'echo no such server >&2; exit 32' --",
                                           relative_mount_path="nfs")])
        j = self.job("unmanaged-bad", self.c, mount_volumes=failing, custom_toolkit_settings=self.custom("true"))
        self.assertEqual(j.execution_state, "failed")
        message = j.execution_info.errors[0].message
        self.assertIn("exited with 32", message)
        self.assertIn("no such server", message)

    def test_z_a_killed_emulator_leaves_no_blob_mount_hanging(self):
        # (Named to run last: it restarts the emulator under the other tests' cluster.)
        sleeper = harness.sleep_of_this_run(6005)
        bfs = "$AZ_BATCHAI_MOUNT_ROOT/bfs"
        command = (f"if [ -e {bfs}/ran-once ]; then cat {bfs}/held.txt; echo second; "
                   f"else touch {bfs}/ran-once; exec 3> {bfs}/held.txt; echo first >&3; exec {sleeper}; fi")
        self.job("held", self.c, wait=False, custom_toolkit_settings=self.custom(command))
        harness.wait_for(lambda: harness.processes_named(sleeper), what="the first run")
        try:
            self.emu.send(9)
            self.emu.process.wait()
            self.emu.start()
            type(self).client = harness.arm_client(type(self).client.__class__, self.emu.endpoints)
            j = self.wait_job("held", timeout=60)
            self.assertEqual(j.execution_state, "succeeded", self.read("held", "stderr.txt"))
            # The shell's redirection of echo closed a duplicate of the descriptor: that close committed
            # "first", which survives the crash; the restarted emulator's mount reads it.
            self.assertEqual(self.read("held", "stdout.txt"), "first\nsecond\n")
        finally:
            harness.kill_processes_named(sleeper)


@unittest.skipUnless(fuse_works(), "needs /dev/fuse and root to mount")
class BoundSharesVolumesTest(JobsTestCase):
    """With --share-mounts bind, shares are bind mounts of their directories in the store, while a
    file server's export stays a mount of its own disk."""
    emulator_args = JobsTestCase.emulator_args + ["--share-mounts", "bind"]
    custom = VolumesTest.custom
    test_a_file_server_is_one_disk_shared_by_the_clusters_that_mount_it = \
        VolumesTest.test_a_file_server_is_one_disk_shared_by_the_clusters_that_mount_it


if __name__ == "__main__":
    unittest.main()
