"""bai-sharefuse: a file share mounted through the File REST API (as on a Slurm host that shares
neither the emulator's process nor its disk), driven by the kernel's FUSE and the
azure-storage-file-share SDK: real directories (empty ones stay, a non-empty one is not removed),
renames of files and directories as one call of the service, files written at close, changes made
through REST reaching the mount through the share's change feed despite hour-long caches, a share
SAS, and what it cannot mount reported. Skipped (visibly) without /dev/fuse."""
import errno
import os
import shutil
import sys
import tempfile
import unittest
from datetime import datetime, timedelta, timezone

from azure.storage.fileshare import ShareServiceClient, ShareSasPermissions, generate_share_sas

import harness
from remote_mount import RemoteMountTest

SHAREFUSE = os.environ.get("BAI_SHAREFUSE", "bai-sharefuse")
WHY_NOT = "" if os.path.exists("/dev/fuse") and os.geteuid() == 0 else "no /dev/fuse, or not root"
if WHY_NOT:
    print(f"SKIPPED: bai-sharefuse tests: {WHY_NOT}", file=sys.stderr)
LONG_CACHES = ["-o", "attr_timeout=3600,entry_timeout=3600,negative_timeout=3600"]


@unittest.skipIf(WHY_NOT, WHY_NOT)
class SharefuseOverRest(RemoteMountTest, unittest.TestCase):
    PROGRAM = SHAREFUSE

    def setUp(self):
        self.emu = harness.Emulator().start()
        self.addCleanup(self.emu.close)
        self.svc = ShareServiceClient.from_connection_string(harness.connection_string(self.emu.endpoints))
        self.share = self.svc.create_share("work")
        self.dir = tempfile.mkdtemp(prefix="bai-sharefuse-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.mnt = os.path.join(self.dir, "mnt")
        os.mkdir(self.mnt)

    def config(self, key=harness.DEV_KEY, share="work", sas=None, extra=""):
        path = os.path.join(self.dir, "sharefuse.cfg")
        credential = f"sasToken {sas}" if sas else f"accountKey {key}"
        with open(path, "w") as f:
            f.write(f"accountName {harness.DEV_ACCOUNT}\n{credential}\nshareName {share}\n"
                    f"fileEndpoint {self.emu.endpoints['file']}/{harness.DEV_ACCOUNT}\n{extra}")
        return path

    def names(self, directory=""):
        return sorted(e["name"] for e in self.share.list_directories_and_files(directory))

    def read(self, path):
        return self.share.get_file_client(path).download_file().readall()

    def test_directories_files_and_renames_both_ways(self):
        self.share.create_directory("data")
        self.share.get_file_client("data/in.txt").upload_file(b"hello")
        self.mounted()
        with open("/proc/self/mounts") as f:
            self.assertIn(f" {self.mnt} fuse.bai-share ", f.read())
        self.assertEqual(os.listdir(self.mnt), ["data"])
        with open(self.at("data", "in.txt")) as f:
            self.assertEqual(f.read(), "hello")
        # A directory made here is a directory of the share, and stays while empty.
        os.makedirs(self.at("out", "ckpt"))
        self.assertEqual(self.names(), ["data", "out"])
        self.assertEqual(self.names("out"), ["ckpt"])
        self.assertTrue(os.path.isdir(self.at("out", "ckpt")))
        with open(self.at("out", "ckpt", "epoch1.pt"), "wb") as f:
            f.write(b"w" * 100)
        self.assertEqual(self.read("out/ckpt/epoch1.pt"), b"w" * 100)
        with self.assertRaises(OSError) as caught:
            os.rmdir(self.at("out", "ckpt"))
        self.assertEqual(caught.exception.errno, errno.ENOTEMPTY)
        # Past one Put Range (4 MiB), with a hole left unwritten.
        big = os.urandom(9 << 20)
        with open(self.at("big.bin"), "wb") as f:
            f.write(big)
            f.seek(20 << 20)
            f.write(b"end")
        expected = big + bytes((20 << 20) - len(big)) + b"end"
        self.assertEqual(self.read("big.bin"), expected)
        with open(self.at("big.bin"), "rb") as f:
            self.assertEqual(f.read(), expected)
        # Renames are the service's Rename File and Rename Directory.
        os.rename(self.at("out"), self.at("done"))
        os.rename(self.at("data", "in.txt"), self.at("done", "in.txt"))
        self.assertEqual(self.names(), ["big.bin", "data", "done"])
        self.assertEqual(self.names("done"), ["ckpt", "in.txt"])
        self.assertEqual(self.read("done/ckpt/epoch1.pt"), b"w" * 100)
        self.assertEqual(sorted(os.listdir(self.at("done"))), ["ckpt", "in.txt"])
        # A rename over an existing file replaces it.
        with open(self.at("other.txt"), "w") as f:
            f.write("replaced")
        os.rename(self.at("done", "in.txt"), self.at("other.txt"))
        self.assertEqual(self.read("other.txt"), b"hello")
        os.unlink(self.at("big.bin"))
        os.remove(self.at("done", "ckpt", "epoch1.pt"))
        os.rmdir(self.at("done", "ckpt"))
        self.assertEqual(self.names(), ["data", "done", "other.txt"])
        self.assertEqual(self.names("done"), [])

    def test_an_append_and_a_truncate_keep_the_rest_of_the_file(self):
        self.share.get_file_client("log.txt").upload_file(b"line 1\n")
        self.mounted()
        with open(self.at("log.txt"), "a") as f:
            f.write("line 2\n")
        self.assertEqual(self.read("log.txt"), b"line 1\nline 2\n")
        os.truncate(self.at("log.txt"), 4)
        self.assertEqual(self.read("log.txt"), b"line")
        self.assertEqual(os.stat(self.at("log.txt")).st_size, 4)

    def test_a_leased_file_refuses_the_mounts_writes(self):
        # Lease File: the service refuses the mount's writes (it has no lease id) with 412
        # LeaseIdMissing, which the mount answers EBUSY, as the local share mount does; reads go on.
        held = self.share.get_file_client("held.txt")
        held.upload_file(b"kept\n")
        lease = held.acquire_lease()
        self.mounted()
        with self.assertRaises(OSError) as caught:
            with open(self.at("held.txt"), "wb") as f:
                f.write(b"changed\n")
        self.assertEqual(caught.exception.errno, errno.EBUSY)
        with self.assertRaises(OSError) as caught:
            os.unlink(self.at("held.txt"))
        self.assertEqual(caught.exception.errno, errno.EBUSY)
        self.assertEqual(self.read("held.txt"), b"kept\n")
        self.assertEqual(held.download_file().readall(), b"kept\n")
        lease.release()

    def test_a_writer_commits_what_it_wrote_not_what_others_wrote_meanwhile(self):
        # Two hosts' mounts of one share (two bai-sharefuse here) write their own parts of one file,
        # both open at once; and REST writes another part meanwhile: each close sends its own
        # writes (Put Range of them), never its stale copy of the rest, as on an SMB mount.
        self.share.get_file_client("shards.bin").upload_file(b"." * 30)
        other = os.path.join(self.dir, "other")
        os.mkdir(other)
        self.mounted()
        self.mounted(mnt=other)
        first = open(self.at("shards.bin"), "r+b")
        second = open(os.path.join(other, "shards.bin"), "r+b")
        first.seek(0)
        first.write(b"AAAAAAAAAA")
        second.seek(10)
        second.write(b"BBBBBBBBBB")
        self.share.get_file_client("shards.bin").upload_range(b"CCCCCCCCCC", offset=20, length=10)
        first.close()
        second.close()
        self.assertEqual(self.read("shards.bin"), b"A" * 10 + b"B" * 10 + b"C" * 10)
        # Grown past its end by one, shrunk by the other: the size is the last close's.
        with open(self.at("shards.bin"), "ab") as f:
            f.write(b"DDDDD")
        self.assertEqual(self.read("shards.bin"), b"A" * 10 + b"B" * 10 + b"C" * 10 + b"D" * 5)
        os.truncate(os.path.join(other, "shards.bin"), 12)
        self.assertEqual(self.read("shards.bin"), b"A" * 10 + b"BB")

    def test_changes_through_rest_reach_the_mount_despite_hour_long_caches(self):
        self.share.get_file_client("f.txt").upload_file(b"12345")
        self.mounted(*LONG_CACHES)
        self.assertEqual(os.stat(self.at("f.txt")).st_size, 5)
        self.assertFalse(os.path.exists(self.at("later")))  # a negative entry, cached for an hour
        self.share.get_file_client("f.txt").upload_file(b"replaced: longer")
        self.share.create_directory("later")
        harness.wait_for(lambda: os.stat(self.at("f.txt")).st_size == 16, timeout=10, what="the new size")
        with open(self.at("f.txt")) as f:
            self.assertEqual(f.read(), "replaced: longer")
        harness.wait_for(lambda: os.path.isdir(self.at("later")), timeout=10, what="the new directory")
        self.share.get_directory_client("later").rename_directory("renamed")
        harness.wait_for(lambda: not os.path.exists(self.at("later")), timeout=10, what="the rename")
        self.assertTrue(os.path.isdir(self.at("renamed")))
        self.assertEqual(sorted(os.listdir(self.mnt)), ["f.txt", "renamed"])

    def test_a_soft_deleted_share_goes_and_its_undelete_comes_back(self):
        """With share soft delete on (ARM's fileServices/default), a share deleted under the mount
        goes from it (its names ENOENT, a write refused, nothing kept of it), and undeleted, its
        files are there again through the same mount, caches of an hour or not."""
        group = f"/subscriptions/{harness.SUBSCRIPTION}/resourceGroups/mounts"
        r = harness.arm_call(self.emu.endpoints, "PUT", group, {"location": "eastus"}, api_version="2021-04-01")
        self.assertIn(r.status_code, (200, 201), r.text)
        r = harness.arm_call(self.emu.endpoints, "PATCH", f"{group}/providers/Microsoft.Storage/storageAccounts/"
                             f"{harness.DEV_ACCOUNT}/fileServices/default",
                             {"properties": {"shareDeleteRetentionPolicy": {"enabled": True, "days": 7}}},
                             api_version="2021-04-01")
        self.assertEqual(r.status_code, 200, r.text)
        self.share.create_directory("kept")
        self.share.get_file_client("kept/f.txt").upload_file(b"kept")
        self.mounted(*LONG_CACHES)
        self.assertEqual(os.stat(self.at("kept", "f.txt")).st_size, 4)
        self.share.delete_share()
        harness.wait_for(lambda: not os.path.exists(self.at("kept", "f.txt")), timeout=15, what="the deletion")
        with self.assertRaises(OSError) as caught:
            with open(self.at("new.txt"), "wb") as f:
                f.write(b"lost")
        self.assertEqual(caught.exception.errno, errno.ENOENT)
        [version] = [s.version for s in self.svc.list_shares(include_deleted=True) if s.deleted]
        self.svc.undelete_share("work", version)
        harness.wait_for(lambda: os.path.exists(self.at("kept", "f.txt")), timeout=15, what="the undelete")
        with open(self.at("kept", "f.txt")) as f:
            self.assertEqual(f.read(), "kept")
        self.assertEqual(self.names(), ["kept"])  # nothing landed while it was gone

    def test_a_share_sas_is_enough(self):
        self.share.get_file_client("f.txt").upload_file(b"12345")
        sas = generate_share_sas(harness.DEV_ACCOUNT, "work", harness.DEV_KEY,
                                 permission=ShareSasPermissions(read=True, create=True, write=True, delete=True,
                                                                list=True),
                                 expiry=datetime.now(timezone.utc) + timedelta(hours=1))
        self.mounted(*LONG_CACHES, config=self.config(sas=sas))
        with open(self.at("f.txt")) as f:
            self.assertEqual(f.read(), "12345")
        with open(self.at("g.txt"), "w") as f:
            f.write("written under a SAS")
        os.rename(self.at("g.txt"), self.at("h.txt"))
        self.assertEqual(self.read("h.txt"), b"written under a SAS")
        self.share.get_file_client("f.txt").upload_file(b"changed")  # the feed answers a SAS too
        harness.wait_for(lambda: os.stat(self.at("f.txt")).st_size == 7, timeout=10, what="the new size")

    def test_what_it_cannot_mount_it_says_and_exits(self):
        missing = self.start(config=self.config(share="nope"))
        self.assertEqual(missing.wait(30), 1)
        self.assertIn("the file share nope of storage account devstoreaccount1 does not exist", self.log())
        bad_key = self.start(config=self.config(key="AAAA" + harness.DEV_KEY[4:]))
        self.assertEqual(bad_key.wait(30), 1)
        self.assertIn("AuthenticationFailed (HTTP 403)", self.log())
        blob_words = self.start(config=self.config(extra="containerName work\n"))
        self.assertEqual(blob_words.wait(30), 2)
        self.assertIn("containerName: unknown key here (a share takes shareName and fileEndpoint)", self.log())
        self.assertFalse(os.path.ismount(self.mnt))


if __name__ == "__main__":
    unittest.main()
