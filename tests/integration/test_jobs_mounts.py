"""File shares FUSE-mounted into jobs (fuse_mounts): what a running job writes is seen through the
File REST API while it runs, what REST writes the job reads, job-level mounts serve the job
preparation and the job and are gone for the next job, and what was written stays in the share."""
import unittest

from azure.mgmt.batchai import models as m
from azure.core.exceptions import ResourceNotFoundError
from azure.storage.fileshare import ShareServiceClient

import harness
from jobs_fixture import JobsTestCase, RG, WS, EXP, SHARE

JOB_SHARE = "jobshare"


def fuse_works():
    import os
    return os.geteuid() == 0 and os.access("/dev/fuse", os.R_OK | os.W_OK)


def mounted(share):
    """A shell test: is the share mounted here? (A FUSE mount names it as its source, a bind mount
    of its directory as its root: both in mountinfo.)"""
    return f"grep -Eq 'devstoreaccount1/(shares/)?{share}( |$)' /proc/self/mountinfo"


@unittest.skipUnless(fuse_works(), "needs /dev/fuse and root to mount")
class ShareMountTest(JobsTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.shares = ShareServiceClient.from_connection_string(harness.connection_string(cls.endpoints))
        cls.shares.create_share(JOB_SHARE)
        cls.c = cls.cluster(cls, "mounts", nodes=1)
        cls.wait_cluster(cls, "mounts", idle=1)

    def test_a_running_jobs_writes_and_rest_writes_meet_both_ways(self):
        afs = "$AZ_BATCHAI_MOUNT_ROOT/afs"
        # The job waits for go.txt's content, not its name: REST makes a file in two calls (Create
        # File sets its length, zero-filled, then Put Range writes it), and a job that read it
        # between the two appended zeros.
        command = (f"printf 'line1\\n' > {afs}/live.txt; "
                   f"for i in $(seq 600); do grep -q from-rest {afs}/go.txt 2>/dev/null && break; sleep 0.05; done; "
                   f"cat {afs}/go.txt >> {afs}/live.txt")
        self.job("live", self.c, wait=False, custom_toolkit_settings=m.CustomToolkitSettings(command_line=command))
        self.wait_job("live", states=("running",))
        live = self.share.get_file_client("live.txt")
        # The job's write, through the REST API while the job still runs.
        harness.wait_for(lambda: self._size(live) == 6, timeout=20, what="live.txt through REST")
        self.assertEqual(self.client.jobs.get(RG, WS, EXP, "live").execution_state, "running")
        # REST's write, read by the job through its mount.
        self.share.get_file_client("go.txt").upload_file(b"from-rest\n")
        j = self.wait_job("live")
        self.assertEqual(j.execution_state, "succeeded")
        self.assertEqual(live.download_file().readall(), b"line1\nfrom-rest\n")

    def test_job_level_mounts_serve_the_job_and_are_gone_for_the_next(self):
        volumes = m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
            account_name=harness.DEV_ACCOUNT,
            azure_file_url=f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/{JOB_SHARE}",
            credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path="js")])
        js = "$AZ_BATCHAI_JOB_MOUNT_ROOT/js"
        prep = m.JobPreparation(command_line=f"echo prep > {js}/prep.txt")
        j = self.job("withmount", self.c, mount_volumes=volumes, job_preparation=prep,
                     custom_toolkit_settings=m.CustomToolkitSettings(
                         command_line=f"cat {js}/prep.txt > {js}/job.txt && {mounted(JOB_SHARE)}"))
        self.assertEqual(j.execution_state, "succeeded", self.read("withmount", "stderr.txt"))
        checker = self.job("checker", self.c, custom_toolkit_settings=m.CustomToolkitSettings(
            command_line=f"! {mounted(JOB_SHARE)}"))
        self.assertEqual(checker.execution_state, "succeeded", "the job-level mount outlived its job")
        share = self.shares.get_share_client(JOB_SHARE)
        self.assertEqual(share.get_file_client("job.txt").download_file().readall(), b"prep\n")
        self.assertEqual(sorted(f["name"] for f in share.list_directories_and_files()), ["job.txt", "prep.txt"])

    def test_concurrent_writers_from_several_processes(self):
        afs = "$AZ_BATCHAI_MOUNT_ROOT/afs/many"
        j = self.job("writers", self.c, custom_toolkit_settings=m.CustomToolkitSettings(command_line=(
            f"mkdir -p {afs} && for i in 1 2 3 4 5 6; do "
            f"(head -c 300000 /dev/zero | tr '\\0' \"$i\" > {afs}/p$i.bin) & done; wait")))
        self.assertEqual(j.execution_state, "succeeded", self.read("writers", "stderr.txt"))
        for i in range(1, 7):
            body = self.share.get_file_client(f"many/p{i}.bin").download_file().readall()
            self.assertEqual(body, str(i).encode() * 300000, i)

    def test_file_and_directory_modes_of_a_share(self):
        self.shares.create_share("modeshare")
        volumes = m.MountVolumes(azure_file_shares=[m.AzureFileShareReference(
            account_name=harness.DEV_ACCOUNT,
            azure_file_url=f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/modeshare",
            credentials=m.AzureStorageCredentialsInfo(account_key=harness.DEV_KEY), relative_mount_path="modes",
            file_mode="0640", directory_mode="0750")])
        here = "$AZ_BATCHAI_JOB_MOUNT_ROOT/modes"
        j = self.job("modes", self.c, mount_volumes=volumes, custom_toolkit_settings=m.CustomToolkitSettings(
            command_line=f"umask 000; mkdir -p {here}/m/d && touch {here}/m/f && chmod 777 {here}/m/f && "
                         f"stat -c %a {here}/m/f {here}/m/d"))
        self.assertEqual(j.execution_state, "succeeded", self.read("modes", "stderr.txt"))
        self.assertEqual(self.read("modes", "stdout.txt").split(), ["640", "750"])

    def faults_url(self, share):
        return f"{self.endpoints['arm']}/emulator/shares/{harness.DEV_ACCOUNT}/{share}/faults"

    def test_an_injected_enospc_is_what_the_jobs_write_gets(self):
        import requests
        ca = self.endpoints["ca_cert"]
        r = requests.put(self.faults_url(SHARE), json={"error": "ENOSPC", "operations": 1000}, verify=ca, timeout=10)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.json(), {"error": "ENOSPC", "operations": 1000, "stallMs": 0})
        try:
            j = self.job("nospace", self.c, std_out_err_path_prefix="$AZ_BATCHAI_JOB_TEMP", output_directories=[],
                         custom_toolkit_settings=m.CustomToolkitSettings(
                             command_line="echo data > $AZ_BATCHAI_MOUNT_ROOT/afs/full.txt"))
        finally:
            self.assertEqual(requests.delete(self.faults_url(SHARE), verify=ca, timeout=10).status_code, 204)
        self.assertEqual(j.execution_state, "failed")
        self.assertEqual(j.execution_info.exit_code, 1)
        self.assertEqual(requests.get(self.faults_url(SHARE), verify=ca, timeout=10).status_code, 404)

    def test_bad_fault_plans_name_their_field(self):
        import requests
        ca = self.endpoints["ca_cert"]
        for body, field in (({"error": "EPERM", "operations": 1}, "error"), ({"error": "EIO"}, "operations"),
                            ({"error": "EIO", "operations": 0}, "operations"), ({"operations": 1}, "stallMs"),
                            ({"operations": 1, "stallMs": -5}, "stallMs"), ([1, 2], "object")):
            r = requests.put(self.faults_url(SHARE), json=body, verify=ca, timeout=10)
            self.assertEqual(r.status_code, 400, body)
            self.assertEqual(r.json()["error"]["code"], "InvalidFaultPlan")
            self.assertIn(field, r.json()["error"]["message"])
        r = requests.put(self.faults_url(SHARE), data=b"{not json", verify=ca, timeout=10)
        self.assertEqual(r.status_code, 400)

    def _size(self, file_client):
        try:
            return file_client.get_file_properties().size
        except Exception:
            return None


class BoundShareMountTest(ShareMountTest):
    """The same with --share-mounts bind: shares are bind mounts of their directories in the store
    (no FUSE in the path of a job's small files), and the File API catches up with the disk when it
    reads a path. Shares with modes stay FUSE mounts; fault plans cannot reach a bind mount."""
    emulator_args = JobsTestCase.emulator_args + ["--share-mounts", "bind"]

    def test_an_injected_enospc_is_what_the_jobs_write_gets(self):
        import requests
        r = requests.put(self.faults_url(SHARE), json={"error": "ENOSPC", "operations": 1},
                         verify=self.endpoints["ca_cert"], timeout=10)
        self.assertEqual(r.status_code, 409, r.text)
        self.assertEqual(r.json()["error"]["code"], "FaultPlansNeedFuseMounts")
        self.assertIn("--share-mounts fuse", r.json()["error"]["message"])

    def test_a_jobs_small_files_through_rest_while_it_runs(self):
        afs = "$AZ_BATCHAI_MOUNT_ROOT/afs"
        command = (f"stat -f -c %T {afs} > {afs}/fstype.txt; mkdir -p {afs}/shards/a/b; "
                   f"for i in $(seq 200); do echo shard $i > {afs}/shards/a/b/s$i.txt; done; touch {afs}/shards/gone.txt; "
                   f"for i in $(seq 600); do [ \"$(cat {afs}/shards/next.txt 2>/dev/null)\" = from-rest ] && break; sleep 0.05; done; "
                   f"rm {afs}/shards/gone.txt; echo more >> {afs}/shards/a/b/s1.txt; cat {afs}/shards/next.txt > {afs}/shards/done.txt")
        self.job("shards", self.c, wait=False, custom_toolkit_settings=m.CustomToolkitSettings(command_line=command))
        self.wait_job("shards", states=("running",))
        def listed():
            try:
                return sorted(f["name"] for f in self.share.list_directories_and_files("shards/a/b"))
            except ResourceNotFoundError:
                return []  # not made yet
        harness.wait_for(lambda: len(listed()) == 200, timeout=30, what="the job's 200 files through a REST listing")
        self.assertIn("s17.txt", listed())
        s1 = self.share.get_file_client("shards/a/b/s1.txt")
        first = s1.get_file_properties()
        self.assertEqual(first.size, len("shard 1\n"))
        self.assertEqual(s1.get_file_properties().etag, first.etag)  # unchanged on disk: the same ETag
        self.assertIn("gone.txt", [f["name"] for f in self.share.list_directories_and_files("shards")])
        # REST writes into a directory the job made; the job reads it through its bind mount.
        self.share.get_file_client("shards/next.txt").upload_file(b"from-rest\n")
        j = self.wait_job("shards")
        self.assertEqual(j.execution_state, "succeeded", self.read("shards", "stderr.txt"))
        self.assertEqual(self.share.get_file_client("shards/done.txt").download_file().readall(), b"from-rest\n")
        self.assertNotIn("gone.txt", [f["name"] for f in self.share.list_directories_and_files("shards")])
        second = s1.get_file_properties()
        self.assertEqual(second.size, len("shard 1\nmore\n"))
        self.assertNotEqual(second.etag, first.etag)
        fstype = self.share.get_file_client("fstype.txt").download_file().readall()
        self.assertNotEqual(fstype.strip(), b"fuseblk")
        self.assertFalse(fstype.startswith(b"fuse"), fstype)


if __name__ == "__main__":
    unittest.main()
