"""Password-less ssh between a job's nodes, as Batch AI set it up: `ssh NODE COMMAND` from a
job's process runs COMMAND on that node (its sandbox or container, its hostname), with the
caller's stdin, stdout and stderr and its exit status, through the job's node gateway
(emulator/engine/node_gateway.h). Only the job's own processes can use it."""
import os
import socket
import struct
import subprocess
import unittest

from azure.mgmt.batchai import models as m

import harness
from jobs_fixture import JobsTestCase
from test_jobs_containers import container, sandbox_works


def warning(host, port=None):
    shown = f"[{host}]:{port}" if port else host
    return f"Warning: Permanently added '{shown}' (ECDSA) to the list of known hosts.\r\n"


class SshTests:
    """What both runtimes must do; `port` is how the warnings name a host (23 in containers)."""
    port = None
    settings = {}
    # Prints the node a command runs on: its hostname in a sandbox; on the host (one machine, one
    # hostname) the node's own directory its job directory lies in.
    where = "hostname"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.c = cls.cluster(cls, "pair", nodes=2)
        cls.wait_cluster(cls, "pair", idle=2)
        nodes = [n for n in cls.nodes(cls) if n["cluster"].endswith("/clusters/pair")]
        cls.by_address = {n["ipAddress"]: n["nodeId"] for n in nodes}

    def two_node_job(self, name, command, wait=True):
        return self.job(name, self.c, wait=wait, node_count=2,
                        custom_toolkit_settings=m.CustomToolkitSettings(command_line=command), **self.settings)

    def master_and_other(self, name):
        master = self.read(name, "stdout.txt").splitlines()[0]
        other = next(a for a, n in self.by_address.items() if n != master)
        mine = next(a for a, n in self.by_address.items() if n == master)
        return mine, other

    def test_ssh_runs_a_command_on_the_other_node_with_its_status_and_streams(self):
        a, b = sorted(self.by_address)
        w = self.where
        command = (f"{w} && ssh {b} '{w}' && ssh -o StrictHostKeyChecking=no -p 22 alice@{a} '{w}' && "
                   f"ssh -q {b} 'echo from $({w}) >&2; exit 3'; echo rc=$? && echo piped | ssh {b} cat && "
                   f"ssh {b} '{w}'")
        j = self.two_node_job("ssh1", command)
        self.assertEqual(j.execution_state, "succeeded", self.read("ssh1", "stderr.txt"))
        out = self.read("ssh1", "stdout.txt").splitlines()
        master = out[0]
        self.assertEqual(out[1:3], [self.by_address[b], self.by_address[a]])
        self.assertEqual(out[3:], ["rc=3", "piped", self.by_address[b]])
        err = self.read("ssh1", "stderr.txt")
        self.assertIn(f"from {self.by_address[b]}\n", err)
        mine = next(addr for addr, node in self.by_address.items() if node == master)
        other = b if mine == a else a
        if self.port:  # the containers kept no known hosts: a warning on every call but -q's
            self.assertEqual(err.count(warning(b, self.port)), 3)
            self.assertEqual(err.count(warning(a, self.port)), 1)
        else:  # a node knows itself and remembers the others it met
            self.assertEqual(err.count(warning(other)), 1)
            self.assertNotIn(warning(mine), err)

    def test_a_job_on_two_nodes_has_an_execution_log_per_node(self):
        j = self.two_node_job("logs2", "true")
        self.assertEqual(j.execution_state, "succeeded")
        logs = {f for f in self.files("logs2") if f.startswith("execution")}
        self.assertEqual(logs, {f"execution-{node}.log" for node in self.by_address.values()})
        texts = {f: self.read("logs2", f) for f in logs}
        master = next(f for f, t in texts.items() if "started on" in t)
        other = next(f for f in logs if f != master)
        self.assertIn(" node 1: " + other[len("execution-"):-len(".log")], texts[other])
        self.assertNotIn("started on", texts[other])  # the job's one process ran on the master
        self.assertIn("succeeded", texts[other].splitlines()[-1])

    def test_a_host_that_is_no_node_of_the_job_is_the_real_ssh(self):
        j = self.two_node_job("ssh2", "ssh -o ConnectTimeout=2 -o BatchMode=yes 127.9.9.9 true; echo rc=$?")
        self.assertEqual(j.execution_state, "succeeded", self.read("ssh2", "stderr.txt"))
        self.assertEqual(self.read("ssh2", "stdout.txt").splitlines(), ["rc=255"])

    def test_terminate_ends_what_ssh_started_on_the_other_node(self):
        b = sorted(self.by_address)[1]
        sleeper = harness.sleep_of_this_run(6005)
        self.two_node_job("ssh3", f"ssh {b} {sleeper}", wait=False)
        harness.wait_for(lambda: harness.processes_named(sleeper), what="the remote sleep")
        self.client.jobs.begin_terminate("rg-jobs", "ws", "exp", "ssh3").result()
        self.assertEqual(self.wait_job("ssh3").execution_state, "failed")
        harness.wait_for(lambda: not harness.processes_named(sleeper), what="the remote sleep to go")

    def test_the_gateway_serves_the_jobs_processes_only(self):
        b = sorted(self.by_address)[1]
        remote = harness.sleep_of_this_run(6006)
        self.two_node_job("ssh4", f"echo $BAI_NODE_GATEWAY_TOKEN $BAI_NODE_GATEWAY; ssh {b} {remote}", wait=False)
        harness.wait_for(lambda: harness.processes_named(remote), what="the job's ssh")
        def written():
            try:
                return self.read("ssh4", "stdout.txt").split() or None
            except KeyError:  # not listed yet
                return None
        # This job's own gateway (other tests' jobs may have theirs listening at the same time).
        token, gateway = harness.wait_for(written, what="the job's token and gateway")
        with open("/proc/net/unix") as table:
            names = [line.split()[-1] for line in table if line.split()[-1] == "@" + gateway.lstrip("@")]
        self.assertTrue(names, f"the job's gateway {gateway} is not listening")
        # The command writes to the caller's own stdout (the descriptors it hands over), so the
        # probe sees whether it ran wherever the node's /tmp is (a sandbox has its own).
        def call(token, as_nobody):
            script = (
                "import socket,struct,sys,array\n"
                "s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1].replace('@','\\0',1))\n"
                f"m=b'bai-ssh-2\\x00'+sys.argv[2].encode()+b'\\x00\\x00{b}\\x00\\x00echo the-gateway-ran-it'\n"
                "sys.stdout.flush()\n"
                "try:\n"
                "  s.sendmsg([struct.pack('I',len(m))+m],[(socket.SOL_SOCKET,socket.SCM_RIGHTS,array.array('i',[0,1,2]))])\n"
                "except OSError:\n"
                "  pass\n"  # refused before the request was read: the answer is there all the same
                "d=s.recv(4);print(struct.unpack('i',d)[0] if len(d)==4 else 'closed')\n")
            argv = ["/usr/bin/python3", "-c", script, names[0], token]
            if as_nobody:
                argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + argv
            return subprocess.run(argv, capture_output=True, text=True, timeout=20).stdout.split()

        refused = ["1001"]
        self.assertEqual(call("not-the-token", as_nobody=False), refused)
        self.assertIn("call refused: not the job's token", self.emu.stderr())
        self.assertEqual(call(token, as_nobody=True), refused)  # another user, even with the token
        self.assertIn("call refused: another user's process", self.emu.stderr())
        self.assertNotIn("a malformed request", self.emu.stderr())  # the probe itself is well-formed
        # The control: the same call with the token, as the emulator's user, runs.
        self.assertEqual(call(token, as_nobody=False), ["the-gateway-ran-it", "0"], self.emu.stderr()[-1500:])
        self.client.jobs.begin_terminate("rg-jobs", "ws", "exp", "ssh4").result()
        self.wait_job("ssh4")


class HostSshTest(SshTests, JobsTestCase):
    where = "basename $(dirname $(dirname $(pwd)))"


@unittest.skipUnless(sandbox_works(), "bubblewrap cannot make a sandbox here")
class SandboxSshTest(SshTests, JobsTestCase):
    emulator_args = JobsTestCase.emulator_args + ["--container-runtime", "sandbox"]
    port = 23
    settings = {"container_settings": container("ubuntu:16.04")}


if __name__ == "__main__":
    unittest.main()
