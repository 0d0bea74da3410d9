"""`az batchai cluster node exec` and `az batchai job node exec` (azure-cli 2.45) against the
emulated nodes' ssh servers (emulator/node_login/), after `bai az-login`: a command on a node
with the cluster's password or the key `--generate-ssh-keys` made, a `-L` forward reaching a
loopback port the test opens (checked by a real connection through it), and refusals as az
prints them (a wrong password, a deleted cluster): an `ERROR:` line, no traceback, no hang.

az binds a `-L` port on 0.0.0.0 (its custom.py, _create_tunnel); the project serves loopback
only, so the forward's test runs az through a small launcher that changes that one address to
127.0.0.1 before az starts. Everything else, the tunnel included (sshtunnel's direct-tcpip over
paramiko), is az's own code."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import harness

SUBSCRIPTION = "ba1e5ab5-0000-4000-8000-000000000001"  # the one az works in after `bai az-login`
GROUP = ["-g", "nodes"]
NAMES = GROUP + ["-w", "ws"]
PASSWORD = "Pass-word1"

# az with its -L ports bound on loopback (see the module's docstring).
LOOPBACK_AZ = r'''
import runpy, sys
import azure.cli.command_modules.batchai.custom as custom
given = custom._create_tunnel
def on_loopback(host, port, user, password, key, local_addresses, remote_addresses, func):
    return given(host, port, user, password, key, [("127.0.0.1", p) for _, p in local_addresses], remote_addresses, func)
custom._create_tunnel = on_loopback
sys.argv[0] = "az"
runpy.run_module("azure.cli", run_name="__main__", alter_sys=True)
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AzNodeExec(unittest.TestCase):
    timings = []  # (command line, wall seconds), printed at the end beside az group show's (not asserted)

    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="bai-aznodeexec-")
        cls.emu = harness.Emulator(args=["--gpus", "fake:2", "--lro-delay", "0", "--container-runtime", "host"]).start()
        cls.endpoints = cls.emu.endpoints
        cls.env = dict(os.environ, AZURE_CONFIG_DIR=os.path.join(cls.home, "az"), AZURE_CORE_COLLECT_TELEMETRY="no",
                       AZURE_CORE_NO_COLOR="true", BAI_CONFIG_DIR=os.path.join(cls.home, "bai"), HOME=cls.home)
        cls.env.pop("REQUESTS_CA_BUNDLE", None)
        login = subprocess.run([harness.CLI, "--data-dir", cls.emu.location, "az-login"], capture_output=True,
                               text=True, env=cls.env, timeout=300)
        assert login.returncode == 0, login.stderr
        cls.env["REQUESTS_CA_BUNDLE"] = cls.endpoints["ca_cert"]
        harness.arm_call(cls.endpoints, "PUT", f"/subscriptions/{SUBSCRIPTION}/resourcegroups/nodes",
                         {"location": "eastus"}, api_version="2021-04-01").raise_for_status()
        cls.launcher = os.path.join(cls.home, "loopback_az.py")
        with open(cls.launcher, "w") as f:
            f.write(LOOPBACK_AZ)
        cls.az_setup("batchai", "workspace", "create", *GROUP, "-n", "ws", "-l", "eastus")
        cls.az_setup("batchai", "experiment", "create", *NAMES, "-n", "exp")
        cls.az_setup("batchai", "cluster", "create", *NAMES, "-n", "pw", "-s", "Standard_D1", "-t", "2", "-u", "alice",
                     "-p", PASSWORD)
        cls.az_setup("batchai", "cluster", "create", *NAMES, "-n", "keyed", "-s", "Standard_D1", "-t", "1", "-u",
                     "bob", "--generate-ssh-keys")
        for cluster, count in (("pw", 2), ("keyed", 1)):
            harness.wait_for(lambda: len(cls.logins(cluster)) == count and cls.idle(cluster) == count, timeout=60,
                             what=f"{count} idle nodes in {cluster}")
        cls.group_show = []
        for _ in range(3):
            started = time.monotonic()
            cls.az_setup("group", "show", "-n", "nodes")
            cls.group_show.append(time.monotonic() - started)

    @classmethod
    def tearDownClass(cls):
        harness.print_az_timings(cls.timings, cls.group_show)
        code, _ = cls.emu.stop()
        cls.emu.close()
        shutil.rmtree(cls.home, ignore_errors=True)
        assert code == 0, f"emulator exited with {code}"

    @classmethod
    def az_setup(cls, *args):
        result = harness.az([*args, "-o", "none"], env=cls.env, cwd=cls.home)
        assert result.returncode == 0, f"az {' '.join(args)}\n{result.stderr}"

    @classmethod
    def cluster_path(cls, name):
        return (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/nodes/providers/Microsoft.BatchAI/workspaces/ws/"
                f"clusters/{name}")

    @classmethod
    def logins(cls, cluster):
        r = harness.arm_call(cls.endpoints, "POST", cls.cluster_path(cluster) + "/listRemoteLoginInformation")
        return r.json()["value"] if r.status_code == 200 else []

    @classmethod
    def idle(cls, cluster):
        r = harness.arm_call(cls.endpoints, "GET", cls.cluster_path(cluster))
        return r.json()["properties"].get("nodeStateCounts", {}).get("idleNodeCount") if r.status_code == 200 else None

    def az(self, *args, launcher=None, timeout=120):
        command = [sys.executable, launcher] if launcher else ["az"]
        started = time.monotonic()
        result = subprocess.run([*command, *args], capture_output=True, text=True, env=self.env, timeout=timeout,
                                cwd=self.home)
        self.timings.append(("az " + " ".join(args), time.monotonic() - started))
        self.assertNotIn("Traceback", result.stderr)
        return result

    def test_exec_with_the_password_on_each_node(self):
        nodes = {n["nodeId"]: n for n in harness.arm_call(self.endpoints, "GET", "/emulator/nodes", api_version=None)
                 .json()["value"] if n["cluster"].endswith("/clusters/pw")}
        for login in self.logins("pw"):
            result = self.az("batchai", "cluster", "node", "exec", *NAMES, "-c", "pw", "-n", login["nodeId"], "--exec",
                             "hostname; echo hi; echo $HOME", "-p", PASSWORD)
            self.assertEqual(result.returncode, 0, result.stderr)
            lines = result.stdout.replace("\r\n", "\n").splitlines()
            self.assertEqual(lines[:3], [socket.gethostname(), "hi", nodes[login["nodeId"]]["root"] + "/home"])
        # Without -n: the first node.
        result = self.az("batchai", "cluster", "node", "exec", *NAMES, "-c", "pw", "--exec", "echo first", "-p", PASSWORD)
        self.assertEqual((result.returncode, result.stdout.replace("\r\n", "\n").splitlines()[:1]), (0, ["first"]))

    def test_exec_with_the_generated_key(self):
        self.assertTrue(os.path.exists(os.path.join(self.home, ".ssh", "id_rsa")))
        # No password given: paramiko offers ~/.ssh/id_rsa, the key --generate-ssh-keys made.
        result = self.az("batchai", "cluster", "node", "exec", *NAMES, "-c", "keyed", "--exec", "echo with the key")
        self.assertEqual((result.returncode, result.stdout.replace("\r\n", "\n").splitlines()[:1]),
                         (0, ["with the key"]), result.stderr)
        result = self.az("batchai", "cluster", "node", "exec", *NAMES, "-c", "keyed", "--exec", "echo x", "-k",
                         os.path.join(self.home, ".ssh", "id_rsa"))
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_forward_reaches_a_loopback_port(self):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        self.addCleanup(listener.close)
        target = listener.getsockname()[1]
        local = free_port()
        release = os.path.join(self.home, "release-forward")

        def answer():  # every connection (the first ones may come before the tunnel is up)
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    conn.sendall(b"served " + conn.recv(64))
        server = threading.Thread(target=answer, daemon=True)
        server.start()
        # The tunnel lives while the command runs: it waits (bounded) for the test to let it go. (No
        # $ in it: az puts the line in double quotes, which the login's shell expands first, as sshd's.)
        command = f"timeout 60 sh -c 'while [ ! -e {release} ]; do sleep 0.1; done'; echo released"
        az = subprocess.Popen([sys.executable, self.launcher, "batchai", "cluster", "node", "exec", *NAMES, "-c", "pw",
                               "-L", f"{local}:localhost:{target}", "--exec", command, "-p", PASSWORD],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env, cwd=self.home)
        try:
            def through():
                try:
                    with socket.create_connection(("127.0.0.1", local), timeout=5) as s:
                        s.sendall(b"ping")  # (no half-close: sshtunnel ends the channel at its client's EOF)
                        data = b""
                        while chunk := s.recv(64):
                            data += chunk
                        return data or None
                except OSError:
                    return None
            try:
                reached = harness.wait_for(through, timeout=60, interval=0.1, what="the forward")
            except TimeoutError:
                az.kill()
                out, err = az.communicate()
                with open(os.path.join(self.emu.location, "emulator.log")) as log:
                    self.fail(f"the forward never answered; az printed:\n{out}\n{err[-2000:]}\n"
                              f"the emulator's log ends:\n{log.read()[-3000:]}")
            self.assertEqual(reached, b"served ping")
        finally:
            open(release, "w").close()
            out, err = az.communicate(timeout=60)
        self.assertEqual(az.returncode, 0, err)
        self.assertIn("released", out)
        self.assertNotIn("Traceback", err)

    def test_job_node_exec(self):
        job = os.path.join(self.home, "job.json")
        # (a command line no other run on the machine has: the node's pgrep sees the whole machine)
        sleeper = f"sleep 300.{os.getpid()}"
        with open(job, "w") as f:
            f.write('{"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP", '
                    f'"customToolkitSettings": {{"commandLine": "{sleeper}"}}}}}}')
        self.az_setup("batchai", "job", "create", *NAMES, "-e", "exp", "-n", "sleeper", "-c", "pw", "-f", job)
        job_path = self.cluster_path("pw").rsplit("/clusters/", 1)[0] + "/experiments/exp/jobs/sleeper"
        harness.wait_for(lambda: harness.arm_call(self.endpoints, "GET", job_path).json()["properties"]
                         ["executionState"] == "running", timeout=60, what="job running")
        result = self.az("batchai", "job", "node", "exec", *NAMES, "-e", "exp", "-j", "sleeper", "--exec",
                         f"pgrep -xf '{sleeper}' >/dev/null && echo the job runs here", "-p", PASSWORD)
        self.assertEqual((result.returncode, result.stdout.replace("\r\n", "\n").splitlines()[:1]),
                         (0, ["the job runs here"]), result.stderr)
        self.az_setup("batchai", "job", "terminate", *NAMES, "-e", "exp", "-n", "sleeper", "--yes")

    def test_refusals(self):
        login = self.logins("pw")[0]
        wrong = self.az("batchai", "cluster", "node", "exec", *NAMES, "-c", "pw", "-n", login["nodeId"], "--exec",
                        "echo never", "-p", "not-the-password")
        self.assertEqual(wrong.returncode, 1)
        self.assertIn("ERROR: Connection to remote host failed. Please check provided credentials.", wrong.stderr)
        self.assertNotIn("never", wrong.stdout)
        # A cluster deleted, its node gone.
        self.az_setup("batchai", "cluster", "create", *NAMES, "-n", "doomed", "-s", "Standard_D1", "-t", "1", "-u",
                      "alice", "-p", PASSWORD)
        harness.wait_for(lambda: len(self.logins("doomed")) == 1, timeout=60, what="a node in doomed")
        node = self.logins("doomed")[0]
        self.az_setup("batchai", "cluster", "delete", *NAMES, "-n", "doomed", "--yes")
        gone = self.az("batchai", "cluster", "node", "exec", *NAMES, "-c", "doomed", "-n", node["nodeId"], "--exec",
                       "echo never", "-p", PASSWORD)
        self.assertIn(gone.returncode, (1, 3))
        self.assertIn("ERROR: (ClusterNotFound)", gone.stderr)
        self.assertIn("doomed", gone.stderr)
        # Its server is gone too: a client that kept the address is refused.
        def refused():
            try:
                socket.create_connection((node["ipAddress"], node["port"]), timeout=5).close()
                return False
            except ConnectionRefusedError:
                return True
        harness.wait_for(refused, timeout=30, what="the deleted node's ssh server gone")


if __name__ == "__main__":
    unittest.main()
