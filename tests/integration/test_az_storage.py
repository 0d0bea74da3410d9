"""Every az storage command of storage-wire.md §1-2 against the emulator, and the seeds' storage
steps. Downloaded bytes must equal uploaded bytes."""
import filecmp
import json
import os
import random
import shutil
import tempfile
import unittest

from harness import StorageTestCase, run_az

MiB = 1024 * 1024


def make_tree(root, files):
    for relative, size in files.items():
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(random.randbytes(size))


def same_trees(a, b):
    compare = filecmp.dircmp(a, b)
    if compare.left_only or compare.right_only or compare.diff_files or compare.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, compare.common_files, shallow=False)
    return not mismatch and not errors and all(
        same_trees(os.path.join(a, d), os.path.join(b, d)) for d in compare.common_dirs)


class AzStorage(StorageTestCase, unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="bai-az-data-")
        self.addCleanup(shutil.rmtree, self.work, True)

    def az(self, *args, expect_ok=True):
        result = run_az(list(args), self.conn, cwd=self.work)
        if expect_ok:
            self.assertEqual(result.returncode, 0, f"az {' '.join(args)}\n{result.stdout}\n{result.stderr}")
        return result

    def az_json(self, *args):
        return json.loads(self.az(*args, "-o", "json").stdout)

    def test_blob_commands(self):
        self.assertEqual(self.az_json("storage", "container", "create", "-n", "jobdata"), {"created": True})
        self.assertEqual(self.az_json("storage", "container", "create", "-n", "jobdata"), {"created": False})
        src = os.path.join(self.work, "src")
        files = {f"file{i:02d}.bin": 1024 * (1 + i % 20) for i in range(20)}
        files["sub/nested.txt"] = 300
        make_tree(src, files)
        self.az("storage", "blob", "upload-batch", "-d", "jobdata", "-s", src)
        listed = self.az_json("storage", "blob", "list", "-c", "jobdata")
        self.assertEqual(sorted(b["name"] for b in listed), sorted(files))
        self.assertEqual({b["name"]: b["properties"]["contentLength"] for b in listed}, files)
        dst = os.path.join(self.work, "dst")
        os.makedirs(dst)
        self.az("storage", "blob", "download-batch", "-d", dst, "-s", "jobdata")
        self.assertTrue(same_trees(src, dst))

        big = os.path.join(self.work, "big.bin")
        with open(big, "wb") as f:
            f.write(os.urandom(100 * MiB))
        self.az("storage", "blob", "upload", "-c", "jobdata", "-f", big, "-n", "big.bin")
        back = os.path.join(self.work, "big-back.bin")
        self.az("storage", "blob", "download", "-c", "jobdata", "-n", "big.bin", "-f", back)
        self.assertTrue(filecmp.cmp(big, back, shallow=False))

    def test_file_commands(self):
        self.assertEqual(self.az_json("storage", "share", "create", "-n", "share1"), {"created": True})
        self.assertEqual(self.az_json("storage", "share", "create", "-n", "share1"), {"created": False})
        self.assertEqual(self.az_json("storage", "directory", "create", "-s", "share1", "-n", "a"),
                         {"created": True})
        self.assertEqual(self.az_json("storage", "directory", "create", "-s", "share1", "-n", "a/b"),
                         {"created": True})
        self.assertEqual(self.az_json("storage", "directory", "create", "-s", "share1", "-n", "a"),
                         {"created": False})
        missing_parent = self.az("storage", "directory", "create", "-s", "share1", "-n", "x/y",
                                 expect_ok=False)
        self.assertNotEqual(missing_parent.returncode, 0)
        self.assertIn("ParentNotFound", missing_parent.stderr)

        single = os.path.join(self.work, "single.bin")
        with open(single, "wb") as f:
            f.write(os.urandom(5 * MiB + 7))
        self.az("storage", "file", "upload", "-s", "share1", "--source", single, "-p", "a/b/single.bin")
        listed = self.az_json("storage", "file", "list", "-s", "share1", "-p", "a/b")
        self.assertEqual([(e["name"], e["properties"]["contentLength"]) for e in listed],
                         [("single.bin", 5 * MiB + 7)])
        back = os.path.join(self.work, "single-back.bin")
        self.az("storage", "file", "download", "-s", "share1", "-p", "a/b/single.bin", "--dest", back)
        self.assertTrue(filecmp.cmp(single, back, shallow=False))

        src = os.path.join(self.work, "src")
        files = {f"part{i}.dat": 2048 * (i + 1) for i in range(6)}
        files["deeper/nested.txt"] = 100
        make_tree(src, files)
        self.az("storage", "file", "upload-batch", "-d", "share1", "-s", src, "--destination-path", "batch")
        top = {e["name"] for e in self.az_json("storage", "file", "list", "-s", "share1")}
        self.assertEqual(top, {"a", "batch"})
        dst = os.path.join(self.work, "dst")
        os.makedirs(dst)
        self.az("storage", "file", "download-batch", "-d", dst, "-s", "share1")
        self.assertTrue(same_trees(src, os.path.join(dst, "batch")))
        self.assertTrue(filecmp.cmp(single, os.path.join(dst, "a", "b", "single.bin"), shallow=False))

        self.assertEqual(self.az_json("storage", "share", "delete", "-n", "share1"), {"deleted": True})
        # Deleted again at once: the service, still deleting it in the background, answers 202 again
        # (recorded), so az says deleted; the share is gone all the same.
        self.assertEqual(self.az_json("storage", "share", "delete", "-n", "share1"), {"deleted": True})
        self.assertEqual(self.az_json("storage", "share", "exists", "-n", "share1"), {"exists": False})

    def test_share_snapshot_commands(self):
        """az storage share snapshot, and the share as it was read through --snapshot."""
        self.az("storage", "share", "create", "-n", "snapped")
        kept = os.path.join(self.work, "kept.txt")
        with open(kept, "wb") as f:
            f.write(b"as it was\n")
        self.az("storage", "file", "upload", "-s", "snapped", "--source", kept, "-p", "kept.txt")
        snapshot = self.az_json("storage", "share", "snapshot", "--name", "snapped")["snapshot"]
        self.assertRegex(snapshot, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.0000000Z$")
        self.az("storage", "file", "delete", "-s", "snapped", "-p", "kept.txt")
        self.assertEqual(self.az_json("storage", "file", "list", "-s", "snapped"), [])
        listed = self.az_json("storage", "file", "list", "--share-name", "snapped", "--snapshot", snapshot)
        self.assertEqual([(e["name"], e["properties"]["contentLength"]) for e in listed], [("kept.txt", 10)])
        back = os.path.join(self.work, "back.txt")
        self.az("storage", "file", "download", "-s", "snapped", "-p", "kept.txt", "--snapshot", snapshot, "--dest", back)
        self.assertTrue(filecmp.cmp(kept, back, shallow=False))
        self.assertEqual(self.az_json("storage", "share", "show", "-n", "snapped", "--snapshot", snapshot)["snapshot"],
                         snapshot)
        shares = self.az_json("storage", "share", "list", "--include-snapshots")  # other tests' shares too
        self.assertEqual([(s["name"], s["snapshot"]) for s in shares if s["name"] == "snapped"],
                         [("snapped", snapshot), ("snapped", None)])
        refused = self.az("storage", "share", "delete", "-n", "snapped", expect_ok=False)
        self.assertIn("ShareHasSnapshots", refused.stderr)
        self.assertEqual(self.az_json("storage", "share", "delete", "-n", "snapped", "--delete-snapshots", "include"),
                         {"deleted": True})
        self.assertEqual([s for s in self.az_json("storage", "share", "list", "--include-snapshots")
                          if s["name"] == "snapped"], [])

    def test_file_service_properties_and_a_leased_file(self):
        """az storage cors / metrics with --services f (Set and Get File Service Properties), and a
        file leased through the SDK as az storage file shows it and refuses to overwrite it."""
        self.az("storage", "cors", "add", "--services", "f", "--methods", "GET", "PUT",
                "--origins", "https://app.example", "--max-age", "30")
        rules = self.az_json("storage", "cors", "list", "--services", "f")
        self.assertEqual([(r["Service"], r["AllowedOrigins"], r["MaxAgeInSeconds"]) for r in rules],
                         [("file", "https://app.example", 30)])
        self.az("storage", "metrics", "update", "--services", "f", "--hour", "true", "--api", "true", "--retention", "5")
        metrics = self.az_json("storage", "metrics", "show", "--services", "f")
        self.assertTrue(metrics["file"]["hour"]["enabled"])
        self.assertEqual(metrics["file"]["hour"]["retentionPolicy"]["days"], 5)
        self.az("storage", "cors", "clear", "--services", "f")
        self.assertEqual(self.az_json("storage", "cors", "list", "--services", "f"), [])

        from azure.storage.fileshare import ShareFileClient
        self.az("storage", "share", "create", "-n", "leased")
        source = os.path.join(self.work, "held.txt")
        with open(source, "wb") as f:
            f.write(b"held\n")
        self.az("storage", "file", "upload", "-s", "leased", "--source", source, "-p", "held.txt")
        lease = ShareFileClient.from_connection_string(self.conn, "leased", "held.txt").acquire_lease()
        shown = self.az_json("storage", "file", "show", "-s", "leased", "-p", "held.txt")
        self.assertEqual(shown["lease"], {"duration": "infinite", "state": "leased", "status": "locked"})
        refused = self.az("storage", "file", "upload", "-s", "leased", "--source", source, "-p", "held.txt",
                          expect_ok=False)
        self.assertIn("LeaseIdMissing", refused.stderr)
        lease.release()
        self.az("storage", "file", "upload", "-s", "leased", "--source", source, "-p", "held.txt")

    def test_file_copy_commands(self):
        """az storage file copy start (Copy File, complete at once) and copy cancel (nothing pending)."""
        self.az("storage", "share", "create", "-n", "copies")
        source = os.path.join(self.work, "model.bin")
        with open(source, "wb") as f:
            f.write(random.randbytes(5000))
        self.az("storage", "file", "upload", "-s", "copies", "--source", source, "-p", "model.bin")
        started = self.az_json("storage", "file", "copy", "start", "--source-share", "copies", "--source-path",
                               "model.bin", "--destination-share", "copies", "--destination-path", "model-copy.bin")
        self.assertEqual(started["status"], "success")
        shown = self.az_json("storage", "file", "show", "-s", "copies", "-p", "model-copy.bin")
        self.assertEqual((shown["properties"]["copy"]["status"], shown["properties"]["copy"]["id"]),
                         ("success", started["id"]))
        back = os.path.join(self.work, "back.bin")
        self.az("storage", "file", "download", "-s", "copies", "-p", "model-copy.bin", "--dest", back)
        self.assertTrue(filecmp.cmp(source, back, shallow=False))
        refused = self.az("storage", "file", "copy", "cancel", "-s", "copies", "-p", "model-copy.bin",
                          "--copy-id", started["id"], expect_ok=False)
        self.assertIn("NoPendingCopyOperation", refused.stderr)

    def test_file_copy_from_a_blob_and_handles(self):
        """az storage file copy start --source-container/--source-blob (Copy File from a blob), and
        az storage share list-handle / close-handle (no handle is open here: none listed, none closed)."""
        self.az("storage", "container", "create", "-n", "blobsrc")
        self.az("storage", "share", "create", "-n", "fromblobs")
        source = os.path.join(self.work, "weights.bin")
        with open(source, "wb") as f:
            f.write(random.randbytes(7000))
        self.az("storage", "blob", "upload", "-c", "blobsrc", "-f", source, "-n", "weights.bin")
        started = self.az_json("storage", "file", "copy", "start", "--source-container", "blobsrc", "--source-blob",
                               "weights.bin", "--destination-share", "fromblobs", "--destination-path", "weights.bin")
        self.assertEqual(started["status"], "success")
        back = os.path.join(self.work, "back.bin")
        self.az("storage", "file", "download", "-s", "fromblobs", "-p", "weights.bin", "--dest", back)
        self.assertTrue(filecmp.cmp(source, back, shallow=False))
        for path in ([], ["-p", "weights.bin"]):
            listed = self.az_json("storage", "share", "list-handle", "-n", "fromblobs", "--recursive", "true", *path)
            self.assertEqual(listed["items"], [])
        closed = self.az_json("storage", "share", "close-handle", "-n", "fromblobs", "-p", "weights.bin", "--close-all")
        self.assertEqual(closed, {"closed_handles_count": 0, "failed_handles_count": 0})
        # (az 2.45's --handle-id on a directory or the share fails in az itself: a file's handle.)
        closed = self.az_json("storage", "share", "close-handle", "-n", "fromblobs", "-p", "weights.bin",
                              "--handle-id", "31248613640")
        self.assertEqual(closed, {"closed_handles_count": 0, "failed_handles_count": 0})
        missing = self.az("storage", "share", "list-handle", "-n", "nosuchshare", expect_ok=False)
        self.assertIn("ShareNotFound", missing.stderr)

    def test_seed_mnist_share_with_script_and_data(self):
        """The first seed: a share, a folder with the training script and two data files."""
        files = {"mnist_cntk/ConvNet_MNIST.py": 4000, "mnist_cntk/Train-28x28_cntk_text.txt": 300_000,
                 "mnist_cntk/Test-28x28_cntk_text.txt": 60_000}
        make_tree(self.work, files)
        self.az("storage", "share", "create", "-n", "batchaisample")
        self.az("storage", "directory", "create", "-s", "batchaisample", "-n", "mnistcntksample")
        for relative in files:
            name = os.path.basename(relative)
            self.az("storage", "file", "upload", "-s", "batchaisample",
                    "--source", os.path.join(self.work, relative), "-p", f"mnistcntksample/{name}")
        listed = self.az_json("storage", "file", "list", "-s", "batchaisample", "-p", "mnistcntksample")
        self.assertEqual({e["name"]: e["properties"]["contentLength"] for e in listed},
                         {os.path.basename(k): v for k, v in files.items()})

    def test_seed_image_folders_uploaded_with_upload_batch(self):
        """The third seed: ~400 small images in train/ and val/ into a blob container."""
        files = {}
        for split, count in (("train", 300), ("val", 100)):
            for label in ("ants", "bees"):
                for i in range(count // 2):
                    files[f"{split}/{label}/{i:04d}.jpg"] = random.randint(2000, 9000)
        src = os.path.join(self.work, "hymenoptera_data")
        make_tree(src, files)
        self.az("storage", "container", "create", "-n", "datalake")
        self.az("storage", "blob", "upload-batch", "-d", "datalake", "-s", src)
        listed = self.az_json("storage", "blob", "list", "-c", "datalake", "--num-results", "*")
        self.assertEqual(len(listed), 400)
        dst = os.path.join(self.work, "back")
        os.makedirs(dst)
        self.az("storage", "blob", "download-batch", "-d", dst, "-s", "datalake")
        self.assertTrue(same_trees(src, dst))


if __name__ == "__main__":
    unittest.main()
