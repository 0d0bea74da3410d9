"""bai-blobfuse: a blob container mounted through the Blob REST API (as on a Slurm host that does
not share the emulator's process or disk), driven by the kernel's FUSE and the azure-storage-blob
SDK: what one writes the other reads; changes made through REST reach the mount through the
emulator's change feed even with caches of an hour; a restarted emulator, a wrong key, a missing
container and a bad config file are reported, never a hang. Skipped (visibly) without /dev/fuse."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from azure.storage.blob import BlobServiceClient

import harness
from remote_mount import RemoteMountTest

BLOBFUSE = os.environ.get("BAI_BLOBFUSE", "bai-blobfuse")
WHY_NOT = "" if os.path.exists("/dev/fuse") and os.geteuid() == 0 else "no /dev/fuse, or not root"
if WHY_NOT:
    print(f"SKIPPED: bai-blobfuse tests: {WHY_NOT}", file=sys.stderr)
LONG_CACHES = ["-o", "attr_timeout=3600,entry_timeout=3600,negative_timeout=3600"]


@unittest.skipIf(WHY_NOT, WHY_NOT)
class BlobfuseOverRest(RemoteMountTest, unittest.TestCase):
    PROGRAM = BLOBFUSE

    def setUp(self):
        self.emu = harness.Emulator().start()
        self.addCleanup(self.emu.close)
        self.svc = BlobServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
        self.container = self.svc.create_container("data")
        self.dir = tempfile.mkdtemp(prefix="bai-blobfuse-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.mnt = os.path.join(self.dir, "mnt")
        os.mkdir(self.mnt)

    def config(self, key=harness.DEV_KEY, container="data", extra="", sas=None):
        path = os.path.join(self.dir, "blobfuse.cfg")
        credential = f"sasToken {sas}" if sas else f"accountKey {key}"
        with open(path, "w") as f:
            f.write(f"accountName {harness.DEV_ACCOUNT}\n{credential}\ncontainerName {container}\n"
                    f"blobEndpoint {self.emu.endpoints['blob']}/{harness.DEV_ACCOUNT}\n{extra}")
        return path

    def blobs(self):
        return sorted(b.name for b in self.container.list_blobs())

    def test_what_one_side_writes_the_other_reads(self):
        self.container.upload_blob("a/b.txt", b"hello")
        self.mounted()
        self.assertEqual(os.listdir(self.mnt), ["a"])
        with open(self.at("a", "b.txt")) as f:
            self.assertEqual(f.read(), "hello")
        with open(self.at("a", "c.txt"), "w") as f:
            f.write("from the mount")
        self.assertEqual(self.container.download_blob("a/c.txt").readall(), b"from the mount")
        os.mkdir(self.at("d"))
        props = self.container.get_blob_client("d").get_blob_properties()
        self.assertEqual((props.size, props.metadata.get("hdi_isfolder")), (0, "true"))
        # Past one Put Blob (8 MiB): Put Block and Put Block List; read back whole both ways.
        big = os.urandom(20 << 20)
        with open(self.at("big.bin"), "wb") as f:
            f.write(big)
        self.assertEqual(self.container.download_blob("big.bin").readall(), big)
        with open(self.at("big.bin"), "rb") as f:
            self.assertEqual(f.read(), big)
        os.rename(self.at("a"), self.at("z"))
        os.unlink(self.at("big.bin"))
        self.assertEqual(self.blobs(), ["d", "z/b.txt", "z/c.txt"])
        self.assertEqual(sorted(os.listdir(self.mnt)), ["d", "z"])

    def test_changes_through_rest_reach_the_mount_despite_hour_long_caches(self):
        self.container.upload_blob("f.txt", b"12345")
        self.mounted(*LONG_CACHES)
        self.assertEqual(os.stat(self.at("f.txt")).st_size, 5)
        self.assertFalse(os.path.exists(self.at("later.txt")))  # a negative entry, cached for an hour
        self.container.upload_blob("f.txt", b"replaced: longer", overwrite=True)
        self.container.upload_blob("later.txt", b"new")
        harness.wait_for(lambda: os.stat(self.at("f.txt")).st_size == 16, timeout=10, what="the new size")
        with open(self.at("f.txt")) as f:
            self.assertEqual(f.read(), "replaced: longer")
        harness.wait_for(lambda: os.path.exists(self.at("later.txt")), timeout=10, what="the new blob")
        self.container.delete_blob("later.txt")
        harness.wait_for(lambda: not os.path.exists(self.at("later.txt")), timeout=10, what="the deletion")
        self.assertEqual(sorted(os.listdir(self.mnt)), ["f.txt"])

    def test_a_soft_deleted_container_goes_and_its_restore_comes_back(self):
        """With container soft delete on (ARM's blobServices/default), a container deleted under
        the mount goes from it, and restored, its files are there again, caches of an hour or not."""
        group = f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/mounts"
        r = harness.arm_call(self.emu.endpoints, "PUT", group, {"location": "eastus"}, api_version="2021-04-01")
        self.assertIn(r.status_code, (200, 201), r.text)
        r = harness.arm_call(self.emu.endpoints, "PATCH", f"{group}/providers/Microsoft.Storage/storageAccounts/"
                             f"{harness.DEV_ACCOUNT}/blobServices/default",
                             {"properties": {"containerDeleteRetentionPolicy": {"enabled": True}}}, api_version="2021-04-01")
        self.assertEqual(r.status_code, 200, r.text)
        self.container.upload_blob("kept/f.txt", b"kept")
        self.mounted(*LONG_CACHES)
        self.assertEqual(os.stat(self.at("kept", "f.txt")).st_size, 4)
        self.container.delete_container()
        harness.wait_for(lambda: not os.path.exists(self.at("kept", "f.txt")), timeout=15, what="the deletion")
        [version] = [c.version for c in self.svc.list_containers(include_deleted=True) if c.deleted]
        self.svc.undelete_container("data", version)
        harness.wait_for(lambda: os.path.exists(self.at("kept", "f.txt")), timeout=15, what="the restore")
        with open(self.at("kept", "f.txt")) as f:
            self.assertEqual(f.read(), "kept")

    def test_a_restarted_emulator_is_found_again_and_its_changes_seen(self):
        self.container.upload_blob("f.txt", b"before")
        self.mounted(*LONG_CACHES)
        self.assertEqual(os.stat(self.at("f.txt")).st_size, 6)
        port = self.emu.endpoints["blob"].rsplit(":", 1)[1]
        self.assertEqual(self.emu.stop()[0], 0)
        # Unreachable: an error, not a hang.
        started = time.monotonic()
        with self.assertRaises(OSError):
            with open(self.at("f.txt")) as f:
                f.read()
        self.assertLess(time.monotonic() - started, 30)
        # The same data directory and port, another run: its change numbers start again.
        again = harness.Emulator(location=self.emu.location, args=["--blob-port", port]).start()
        self.addCleanup(again.close)
        svc = BlobServiceClient.from_connection_string(harness.connection_string(again.endpoints))
        svc.get_container_client("data").upload_blob("f.txt", b"after the restart", overwrite=True)
        harness.wait_for(lambda: os.stat(self.at("f.txt")).st_size == 17, timeout=15, what="the size after the restart")
        with open(self.at("f.txt")) as f:
            self.assertEqual(f.read(), "after the restart")

    def test_a_container_sas_is_enough_and_a_read_only_one_keeps_it_read_only(self):
        from datetime import datetime, timedelta, timezone
        from azure.storage.blob import ContainerSasPermissions, generate_container_sas
        self.container.upload_blob("f.txt", b"12345")
        sas = lambda permission: generate_container_sas(
            harness.DEV_ACCOUNT, "data", account_key=harness.DEV_KEY, permission=permission,
            expiry=datetime.now(timezone.utc) + timedelta(hours=1))
        process = self.start(*LONG_CACHES, config=self.config(sas=sas(ContainerSasPermissions(
            read=True, add=True, create=True, write=True, delete=True, list=True))))
        harness.wait_for(lambda: os.path.ismount(self.mnt) or process.poll() is not None, what="the mount")
        self.assertIsNone(process.poll(), self.log())
        with open(self.at("f.txt")) as f:
            self.assertEqual(f.read(), "12345")
        with open(self.at("g.txt"), "w") as f:
            f.write("written under a SAS")
        self.assertEqual(self.container.download_blob("g.txt").readall(), b"written under a SAS")
        self.container.upload_blob("f.txt", b"changed", overwrite=True)  # the feed answers a SAS too
        harness.wait_for(lambda: os.stat(self.at("f.txt")).st_size == 7, timeout=10, what="the new size")
        self.stop(process)
        # Read and list only, mounted -o ro: reads work, writes are refused by the mount itself.
        process = self.start("-o", "ro", config=self.config(sas=sas(ContainerSasPermissions(read=True, list=True))))
        harness.wait_for(lambda: os.path.ismount(self.mnt) or process.poll() is not None, what="the mount")
        with open(self.at("g.txt")) as f:
            self.assertEqual(f.read(), "written under a SAS")
        with self.assertRaises(OSError):
            with open(self.at("h.txt"), "w") as f:
                f.write("no")
        self.assertNotIn("h.txt", self.blobs())

    def test_unmounted_from_outside_it_ends(self):
        process = self.mounted()
        # (Right after the mount, under a sanitizer's slowness, the kernel may still call it busy.)
        for _ in range(25):
            unmounted = subprocess.run(["fusermount3", "-u", self.mnt], capture_output=True, text=True)
            if unmounted.returncode == 0:
                break
            time.sleep(0.2)
        self.assertEqual(unmounted.returncode, 0, unmounted.stderr)
        self.assertEqual(process.wait(20), 0)
        self.assertIn("unmounted", self.log())

    def test_what_it_cannot_mount_it_says_and_exits(self):
        bad_key = self.start(config=self.config(key="AAAA" + harness.DEV_KEY[4:]))
        self.assertEqual(bad_key.wait(30), 1)
        self.assertIn("cannot reach the blob container data", self.log())
        self.assertIn("AuthenticationFailed (HTTP 403)", self.log())
        missing = self.start(config=self.config(container="nope"))
        self.assertEqual(missing.wait(30), 1)
        self.assertIn("the blob container nope of storage account devstoreaccount1 does not exist", self.log())
        bad_line = self.start(config=self.config(extra="frobnicate yes\n"))
        self.assertEqual(bad_line.wait(30), 2)
        self.assertIn("config line 5: frobnicate: unknown key", self.log())
        self.assertFalse(os.path.ismount(self.mnt))


if __name__ == "__main__":
    unittest.main()
