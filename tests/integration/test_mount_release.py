"""Mounts under DIR/nodes are released: stale ones at start, and all of them at a clean stop; and
the test harness releases those of an emulator killed under a test.
Uses tmpfs mounts in place of the FUSE mounts (needs root; skipped with a visible line if not)."""
import os
import shutil
import signal
import subprocess
import tempfile
import unittest

from harness import Emulator


def mounted(path):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


def can_mount():
    if os.geteuid() != 0:
        return False
    probe = tempfile.mkdtemp(prefix="bai-mount-probe-")
    try:
        ok = subprocess.run(["mount", "-t", "tmpfs", "tmpfs", probe], capture_output=True).returncode == 0
        if ok:
            subprocess.run(["umount", probe])
        return ok
    finally:
        os.rmdir(probe)


@unittest.skipUnless(can_mount(), "SKIPPED: needs root and permission to mount tmpfs")
class MountRelease(unittest.TestCase):
    def setUp(self):
        self.location = os.path.realpath(tempfile.mkdtemp(prefix="bai-it-"))
        self.addCleanup(shutil.rmtree, self.location, True)

    def mount_tmpfs(self, relative):
        path = os.path.join(self.location, relative)
        os.makedirs(path, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "tmpfs", path], check=True)
        self.addCleanup(lambda: mounted(path) and subprocess.run(["umount", "-l", path]))
        return path

    def test_stale_mounts_are_released_at_start(self):
        outer = self.mount_tmpfs("nodes/c1/tvm-1/mounts/afs")
        inner = self.mount_tmpfs("nodes/c1/tvm-1/mounts/afs/nested")
        outside = self.mount_tmpfs("elsewhere")
        with Emulator(self.location):
            self.assertFalse(mounted(inner))
            self.assertFalse(mounted(outer))
            self.assertTrue(mounted(outside))

    def test_mounts_are_released_at_a_clean_stop(self):
        with Emulator(self.location) as emu:
            path = self.mount_tmpfs("nodes/c1/tvm-2/mounts/bfs")
            self.assertTrue(mounted(path))
            code, _ = emu.stop()
            self.assertEqual(code, 0)
            self.assertFalse(mounted(path))

    def test_the_harness_releases_a_killed_emulators_mounts(self):
        # (kill -9 leaves them, as a dead FUSE server's: every suite listing the machine's mounts
        # would see them, and the directory could not go)
        emu = Emulator().start()
        paths = []
        for relative in ("nodes/c1/tvm-3/mounts/afs", "nodes/c1/tvm-3/mounts/a share\twith space"):
            path = os.path.join(os.path.realpath(emu.location), relative)
            os.makedirs(path)
            subprocess.run(["mount", "-t", "tmpfs", "tmpfs", path], check=True)
            self.addCleanup(lambda p=path: mounted_escaped(p) and subprocess.run(["umount", "-l", p]))
            paths.append(path)
        self.assertTrue(all(mounted_escaped(p) for p in paths))
        emu.stop(signal.SIGKILL)
        emu.close()
        self.assertEqual([p for p in paths if mounted_escaped(p)], [])
        self.assertFalse(os.path.exists(emu.location))


def mounted_escaped(path):
    """mounted() for a path with a space or a tab (octal-escaped in mountinfo)."""
    escaped = path.replace("\\", "\\134").replace(" ", "\\040").replace("\t", "\\011")
    return mounted(escaped)


if __name__ == "__main__":
    unittest.main()
