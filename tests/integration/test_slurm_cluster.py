"""The Slurm test cluster (slurm_cluster.py), the ground the emulator's nodes on Slurm are to
stand on (emulator/engine/slurm.md): two slurmd hosts in their own namespaces; a holder job per
emulated node lands on each; `srun --jobid --overlap` steps run on the holder's host with the
caller's environment, their output in files and their exit status as srun's; a step reaches a
listener on the bridge's address (where the emulator will listen for the hosts' storage
requests); a low-priority holder is pre-empted by a dedicated one (partition priority) and a
holder cancelled from outside reads CANCELLED, as the emulator's poll will read them.
SKIPPED where Slurm, munge or namespaces are not available."""
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import harness
from slurm_cluster import SlurmCluster

CLUSTER = SlurmCluster(hosts=2)
CANNOT = CLUSTER.cannot_start()


@unittest.skipIf(CANNOT, f"SKIPPED: {CANNOT}")
class SlurmClusterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        CLUSTER.start()
        cls.out = tempfile.mkdtemp(prefix="bai-slurm-out-")

    @classmethod
    def tearDownClass(cls):
        CLUSTER.stop()
        shutil.rmtree(cls.out, ignore_errors=True)

    def sbatch(self, name, partition="main", cpus=2):
        done = subprocess.run(["sbatch", "--parsable", "--no-requeue", "-N1", "-n1", f"--cpus-per-task={cpus}",
                               "--mem=200", f"--partition={partition}", f"--job-name=bai-test-{name}",
                               "--output=/dev/null", "--wrap", "exec sleep infinity"],
                              capture_output=True, text=True, timeout=30, env=CLUSTER.env())
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout.strip().split(";")[0]

    def running(self, job):
        return harness.wait_for(lambda: (lambda s: s if s[0] == "RUNNING" else None)(CLUSTER.squeue(job)),
                                timeout=30, interval=0.1, what=f"job {job} running")

    def step(self, job, command, **env):
        out, err = (os.path.join(self.out, f"{job}-{n}-{time.monotonic_ns()}") for n in ("out", "err"))
        done = subprocess.run(["srun", f"--jobid={job}", "--overlap", "-N1", "-n1", "--export=ALL",
                               f"--output={out}", f"--error={err}", "--", "/bin/sh", "-c", command],
                              capture_output=True, text=True, timeout=60, env=dict(CLUSTER.env(), **env))
        with open(out) as o, open(err) as e:
            return done.returncode, o.read(), e.read()

    def test_a_holder_per_node_and_steps_on_its_host(self):
        first, second = self.sbatch("n1"), self.sbatch("n2")
        hosts = {self.running(first)[1], self.running(second)[1]}
        self.assertEqual(hosts, {"host1", "host2"})  # two cores each: one holder per host
        for job in (first, second):
            host = CLUSTER.squeue(job)[1]
            code, out, err = self.step(job, 'echo "$(hostname) $BAI_PROBE $SLURM_JOB_ID"; echo oops >&2; exit 7',
                                       BAI_PROBE="carried")
            self.assertEqual(code, 7)
            self.assertEqual(out, f"{host} carried {job}\n")
            self.assertEqual(err, "oops\n")
        # A step on a host reaches a listener on the bridge's address (in 127.0.0.0/8).
        server = socket.socket()
        server.bind((CLUSTER.bridge_address, 0))
        server.listen()
        port = server.getsockname()[1]
        threading.Thread(target=lambda: (lambda c: (c[0].sendall(b"from the head"), c[0].close()))(server.accept()),
                         daemon=True).start()
        code, out, _ = self.step(second, "python3 -c 'import socket; "
                                         f"print(socket.create_connection((\"{CLUSTER.bridge_address}\", {port})).recv(64).decode())'")
        server.close()
        self.assertEqual((code, out.strip()), (0, "from the head"))
        for job in (first, second):
            subprocess.run(["scancel", job], env=CLUSTER.env(), timeout=30)
            harness.wait_for(lambda: CLUSTER.squeue(job)[0] == "CANCELLED", timeout=30, interval=0.1,
                             what=f"job {job} cancelled")

    def test_b_a_low_priority_holder_is_pre_empted_by_a_dedicated_one(self):
        low = [self.sbatch(f"low{i}", partition="lowpri") for i in (1, 2)]
        for job in low:
            self.running(job)
        dedicated = self.sbatch("dedicated")
        self.running(dedicated)
        states = sorted(CLUSTER.squeue(job)[0] for job in low)
        self.assertEqual(states, ["PREEMPTED", "RUNNING"])
        # The emulator's poll (slurm_commands.h: squeue_argv, parse_squeue) reads lines of five fields.
        lines = subprocess.run(["squeue", "--noheader", "--states=all", "--format=%i|%j|%T|%N|%r"], capture_output=True,
                               text=True, timeout=30, env=CLUSTER.env()).stdout.splitlines()
        preempted = [line.split("|") for line in lines if "|PREEMPTED|" in line]
        self.assertEqual(len(preempted), 1, lines)
        self.assertEqual(len(preempted[0]), 5)
        self.assertTrue(preempted[0][0].isdigit())
        self.assertTrue(preempted[0][1].startswith("bai-test-low"))
        subprocess.run(["scancel", dedicated] + low, env=CLUSTER.env(), timeout=30)


if __name__ == "__main__":
    unittest.main()
