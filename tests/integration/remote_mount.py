"""The mount programs of the emulator's for other hosts (bai-blobfuse, bai-sharefuse) as a test runs
them: started on the test's mount point with its config file, their stderr in a log of the test's,
stopped by SIGTERM (never left mounted)."""
import os
import signal
import subprocess

import harness


class RemoteMountTest:
    """Mixin for a unittest.TestCase with self.dir, self.mnt and self.config(); PROGRAM is the
    program's path."""
    PROGRAM = None

    def log_path(self):
        return os.path.join(self.dir, os.path.basename(self.PROGRAM) + ".log")

    def start(self, *options, config=None, mnt=None):
        argv = [self.PROGRAM, mnt or self.mnt, f"--config-file={config or self.config()}",
                f"--tmp-path={os.path.join(self.dir, 'tmp')}", *options]
        log = open(self.log_path(), "wb")
        self.addCleanup(log.close)
        process = subprocess.Popen(argv, stderr=log)
        self.addCleanup(self.stop, process, mnt or self.mnt)
        return process

    def mounted(self, *options, config=None, mnt=None):
        process = self.start(*options, config=config, mnt=mnt)
        harness.wait_for(lambda: os.path.ismount(mnt or self.mnt) or process.poll() is not None, what="the mount")
        self.assertIsNone(process.poll(), self.log())
        return process

    def stop(self, process, mnt=None):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                subprocess.run(["umount", "-l", mnt or self.mnt], capture_output=True)
                self.fail(f"{os.path.basename(self.PROGRAM)} did not end on SIGTERM")

    def log(self):
        with open(self.log_path(), errors="replace") as f:
            return f.read()

    def at(self, *parts):
        return os.path.join(self.mnt, *parts)
