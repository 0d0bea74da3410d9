"""The emulated nodes' ssh servers (emulator/node_login/) through paramiko, as `az batchai ... node
exec` reaches them: listRemoteLoginInformation's address and port, the cluster's admin user with
its password or key and nothing else, commands with and without a terminal and their exit
status, direct-tcpip forwards to loopback ports only, and a node that leaves (refused, its
sessions ended, no hang)."""
import hashlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import threading
import time
import unittest

import paramiko
from azure.mgmt.batchai import models as m

import harness
from jobs_fixture import EXP, RG, WS, JobsTestCase

PASSWORD = "Secret-Pass1"  # the fixture's clusters' admin: alice


def echo_server():
    """A loopback TCP server that answers each connection with what it read, upper-cased, then
    closes; (its port, a stop function)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stopping = threading.Event()

    def serve():
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            with conn:
                conn.settimeout(10)
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(data.upper())
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def stop():
        stopping.set()
        thread.join()
        listener.close()
    return listener.getsockname()[1], stop


def silent_server():
    """A loopback TCP server that accepts connections and never reads them; (its port, a stop function)."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (its connections' too: soon full)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held = []
    stopping = threading.Event()

    def serve():
        listener.settimeout(0.2)
        while not stopping.is_set():
            try:
                held.append(listener.accept()[0])
            except socket.timeout:
                continue
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def stop():
        stopping.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()
    return listener.getsockname()[1], stop


def send_in_background(channel, size):
    """Sends `size` bytes on the channel from a thread of its own (it waits while the window is shut)."""
    def send():
        try:
            channel.sendall(b"\0" * size)
        except Exception:  # the channel closed under it: what the test wanted
            pass
    threading.Thread(target=send, daemon=True).start()


class NodeLogin(JobsTestCase):
    # Started as `nohup batchai-emulator &` starts it: its commands must not inherit the ignored
    # signals (a command that ignores SIGHUP outlives its client's hang-up).
    emulator_ignored_signals = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.key = paramiko.RSAKey.generate(2048)
        cls.cluster(cls, "pw", nodes=2)
        cls.client.clusters.begin_create(RG, WS, "keyed", m.ClusterCreateParameters(
            vm_size="STANDARD_D1", user_account_settings=m.UserAccountSettings(
                admin_user_name="bob", admin_user_ssh_public_key=f"ssh-rsa {cls.key.get_base64()} bob@laptop"),
            scale_settings=m.ScaleSettings(manual=m.ManualScaleSettings(target_node_count=1)))).result()
        cls.wait_cluster(cls, "pw", idle=2)
        cls.wait_cluster(cls, "keyed", idle=1)

    def logins(self, cluster):
        return list(self.client.clusters.list_remote_login_information(RG, WS, cluster))

    def connect(self, login, username="alice", password=PASSWORD, pkey=None):
        ssh = paramiko.SSHClient()
        ssh.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        ssh.connect(login.ip_address, int(login.port), username, password=password, pkey=pkey, look_for_keys=False,
                    allow_agent=False, timeout=10, banner_timeout=10, auth_timeout=10)
        self.addCleanup(ssh.close)
        return ssh

    def run_on(self, ssh, command, pty=False, timeout=30):
        _, out, err = ssh.exec_command(command, get_pty=pty, timeout=timeout)
        return out.read().decode(), err.read().decode(), out.channel.recv_exit_status()

    def test_commands_start_with_every_signal_at_its_default(self):
        # The emulator ignores SIGHUP, SIGINT and SIGQUIT here (emulator_ignored_signals): a
        # login's command, with a terminal and without, ignores and blocks none (as under sshd).
        ssh = self.connect(self.logins("pw")[0])
        for pty in (False, True):
            out, _, status = self.run_on(ssh, "grep -E '^Sig(Ign|Blk):' /proc/self/status", pty=pty)
            self.assertEqual(status, 0)
            self.assertEqual(out.replace("\r", "").split(), ["SigBlk:", "0" * 16, "SigIgn:", "0" * 16], f"pty={pty}")

    def test_each_node_has_its_own_server_at_its_address(self):
        logins = self.logins("pw")
        nodes = {n["nodeId"]: n for n in self.nodes() if n["cluster"].endswith("/clusters/pw")}
        self.assertEqual(sorted(l.node_id for l in logins), sorted(nodes))
        for login in logins:
            self.assertEqual(login.ip_address, nodes[login.node_id]["ipAddress"])
            ssh = self.connect(login)
            out, err, status = self.run_on(ssh, "echo $HOME; pwd; echo $AZ_BATCHAI_MOUNT_ROOT; ls $AZ_BATCHAI_MOUNT_ROOT")
            root = nodes[login.node_id]["root"]
            self.assertEqual(out.splitlines(), [root + "/home", root + "/home", root + "/mounts", "afs"])
            self.assertEqual((err, status), ("", 0))
        # One host key for the emulator, owner-only in its data directory.
        key_file = os.path.join(self.emu.location, "ssh", "host_ed25519_key")
        self.assertEqual(stat.S_IMODE(os.stat(key_file).st_mode), 0o600)
        seen = {self.connect(l).get_transport().get_remote_server_key().get_base64() for l in logins}
        self.assertEqual(len(seen), 1)

    def test_a_command_its_streams_and_exit_status(self):
        ssh = self.connect(self.logins("pw")[0])
        self.assertEqual(self.run_on(ssh, "echo out; echo err >&2; exit 3"), ("out\n", "err\n", 3))
        stdin, out, _ = ssh.exec_command("cat; echo done", timeout=30)
        stdin.write(b"piped\n")
        stdin.close()  # EOF: cat ends
        self.assertEqual((out.read().decode(), out.channel.recv_exit_status()), ("piped\ndone\n", 0))
        # As az runs it: bash -ilc with a terminal (both streams on it, lines ending \r\n).
        out, err, status = self.run_on(ssh, 'bash -ilc "tty; echo $TERM; echo hi; exit 7"', pty=True)
        lines = out.replace("\r\n", "\n").splitlines()
        self.assertRegex(lines[0], r"^/dev/pts/\d+$")
        self.assertEqual((lines[1:3], err, status), (["vt100", "hi"], "", 7))  # (then bash's own "logout")
        # A command killed by a signal: its signal, no status.
        _, out, _ = ssh.exec_command("kill -TERM $$", timeout=30)
        out.read()
        self.assertEqual(out.channel.recv_exit_status(), -1)

    def test_only_the_admin_user_with_its_password_or_key(self):
        pw = self.logins("pw")[0]
        for user, password in (("alice", "wrong"), ("root", PASSWORD), ("Alice", PASSWORD), ("alice", "")):
            with self.assertRaises(paramiko.AuthenticationException, msg=(user, password)):
                self.connect(pw, user, password)
        stranger = paramiko.RSAKey.generate(2048)
        with self.assertRaises(paramiko.AuthenticationException):
            self.connect(pw, pkey=stranger, password=None)  # a password cluster takes no key
        keyed = self.logins("keyed")[0]
        self.assertEqual(self.run_on(self.connect(keyed, "bob", None, self.key), "echo in")[0], "in\n")
        with self.assertRaises(paramiko.AuthenticationException):
            self.connect(keyed, "bob", None, stranger)
        with self.assertRaises(paramiko.AuthenticationException):
            self.connect(keyed, "alice", None, self.key)
        with self.assertRaises(paramiko.AuthenticationException):
            self.connect(keyed, "bob", "anything")
        # A client that sends garbage instead of SSH is dropped (no hang: recv times out otherwise).
        with socket.create_connection((keyed.ip_address, int(keyed.port)), timeout=10) as raw:
            raw.sendall(b"GET / HTTP/1.1\r\n\r\n" * 4)
            while raw.recv(4096):
                pass

    @unittest.skipUnless(shutil.which("ssh"), "no OpenSSH client here")
    def test_openssh_logs_in_with_the_key(self):
        key_file = os.path.join(self.emu.location, "bob_key")
        self.key.write_private_key_file(key_file)
        login = self.logins("keyed")[0]
        ssh = ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o",
               f"UserKnownHostsFile={self.emu.location}/known_hosts", "-i", key_file, "-p", str(login.port)]
        for terminal in ([], ["-tt"]):
            done = subprocess.run(ssh + terminal + [f"bob@{login.ip_address}", "echo in $HOME; exit 5"],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 5, done.stderr)
            self.assertRegex(done.stdout, r"^in /\S+/home\r?\n$")
        done = subprocess.run(ssh + [f"alice@{login.ip_address}", "true"], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 255)
        self.assertIn("Permission denied (publickey)", done.stderr)

    def test_forwards_reach_loopback_ports_only(self):
        port, stop = echo_server()
        self.addCleanup(stop)
        transport = self.connect(self.logins("pw")[0]).get_transport()
        for host in ("127.0.0.1", "localhost"):
            channel = transport.open_channel("direct-tcpip", (host, port), ("127.0.0.1", 40000), timeout=10)
            channel.sendall(b"through the node\n")
            received = b""
            while chunk := channel.recv(4096):
                received += chunk
            self.assertEqual(received, b"THROUGH THE NODE\n")
            channel.close()
        for host in ("10.255.255.1", "192.0.2.1", "example.com", "0.0.0.0"):
            with self.assertRaises(paramiko.ChannelException, msg=host) as refused:
                transport.open_channel("direct-tcpip", (host, port), ("127.0.0.1", 40000), timeout=10)
            self.assertEqual(refused.exception.code, paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED)
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        free_port = closed.getsockname()[1]
        closed.close()
        with self.assertRaises(paramiko.ChannelException):
            transport.open_channel("direct-tcpip", ("127.0.0.1", free_port), ("127.0.0.1", 40000), timeout=10)
        # The connection still serves after the refusals.
        self.assertEqual(self.run_on(self.connect(self.logins("pw")[0]), "echo still")[0], "still\n")

    def test_a_node_that_leaves_refuses_and_ends_its_sessions(self):
        self.cluster("leaving", nodes=1, vm_size="STANDARD_D1")
        self.wait_cluster("leaving", idle=1)
        login, = self.logins("leaving")
        ssh = self.connect(login)
        _, out, _ = ssh.exec_command(f"echo started; {harness.sleep_of_this_run(600)}", timeout=60)
        self.assertEqual(out.readline(), "started\n")
        self.client.clusters.begin_delete(RG, WS, "leaving").result()
        started = time.monotonic()
        out.read()  # the session ends with its node: no hang
        self.assertLess(time.monotonic() - started, 60)

        def refused():
            try:
                socket.create_connection((login.ip_address, int(login.port)), timeout=5).close()
                return False
            except ConnectionRefusedError:
                return True
        harness.wait_for(refused, timeout=30, what="the node's ssh server gone")
        with self.assertRaises(Exception):
            self.connect(login)

    def test_logins_leave_no_thread_descriptor_or_process_behind(self):
        pid = self.emu.process.pid
        login = self.logins("pw")[0]
        marker = harness.sleep_of_this_run(4242)

        def counts():
            return len(os.listdir(f"/proc/{pid}/task")), len(os.listdir(f"/proc/{pid}/fd"))

        def one_login(i):
            ssh = self.connect(login)
            self.assertEqual(self.run_on(ssh, f"echo {i}", pty=i % 2 == 0)[2], 0)
            if i % 3 == 0:
                ssh.exec_command(marker)  # still running when the client goes
                harness.wait_for(lambda: harness.processes_named(marker), what="the command started")
            ssh.close()
        one_login(1)
        harness.wait_for(lambda: not harness.processes_named(marker), what="the warm-up's command ended")
        baseline = counts()
        for i in range(2, 14):
            one_login(i)
        # Each connection's thread, socket, terminal, pipes and pidfd go with it; its commands too.
        harness.wait_for(lambda: all(a <= b for a, b in zip(counts(), baseline)) and not harness.processes_named(marker),
                         timeout=30,
                         what=f"threads and descriptors back to {baseline} (now {counts()}), no {marker} left")

    def test_a_reader_that_does_not_read_stops_nothing_else(self):
        # A command that never reads its stdin, and a forward whose target never reads, are sent
        # megabytes: what they do not take waits (the client's window shuts), and the connection
        # serves its other channels meanwhile, and hangs the command up when the client closes it.
        ssh = self.connect(self.logins("pw")[0])
        transport = ssh.get_transport()
        marker = harness.sleep_of_this_run(4343)
        stuck = transport.open_session(timeout=10)
        stuck.exec_command(f"echo started; {marker}")
        stuck.settimeout(30)
        self.assertEqual(stuck.recv(100), b"started\n")
        send_in_background(stuck, 4 << 20)
        port, stop = silent_server()
        self.addCleanup(stop)
        tunnel = transport.open_channel("direct-tcpip", ("127.0.0.1", port), ("127.0.0.1", 40000), timeout=10)
        send_in_background(tunnel, 16 << 20)
        # Both windows shut: every byte sent is either written or waiting.
        harness.wait_for(lambda: stuck.out_window_size == 0 and tunnel.out_window_size == 0, timeout=60,
                         what="the client's windows shut")
        self.assertEqual(self.run_on(ssh, "echo still", timeout=15), ("still\n", "", 0))
        stuck.close()
        tunnel.close()
        harness.wait_for(lambda: not harness.processes_named(marker), timeout=30, what=f"{marker} hung up on")
        self.assertEqual(self.run_on(ssh, "echo after"), ("after\n", "", 0))

    def test_a_late_reader_gets_all_of_its_stdin_in_order(self):
        # The command starts reading only after its stdin (and the client's window) has filled:
        # what waited, in libssh's buffer and in the server's, reaches it whole and in order.
        data = os.urandom(12 << 20)
        ssh = self.connect(self.logins("pw")[0])
        stdin, out, _ = ssh.exec_command("sleep 2; sha256sum", timeout=60)
        stdin.write(data)
        stdin.close()  # (EOF after all of it)
        self.assertEqual(out.read().decode().split()[0], hashlib.sha256(data).hexdigest())
        self.assertEqual(out.channel.recv_exit_status(), 0)

    def test_a_slow_reader_gets_all_of_the_output(self):
        # The client reads nothing until its window (paramiko's 2 MiB) has shut: the command waits
        # for it meanwhile, the connection serves another command, and then every byte arrives.
        ssh = self.connect(self.logins("pw")[0])
        transport = ssh.get_transport()
        size = 24 << 20
        big = transport.open_session(timeout=10)
        big.exec_command(f"head -c {size} /dev/zero; echo end >&2")
        window = big.transport.default_window_size
        harness.wait_for(lambda: len(big.in_buffer) >= window - 65536, timeout=30, what="the client's window full")
        # (15 s: less than the 30 s libssh would wait for a shut window, holding the connection)
        self.assertEqual(self.run_on(ssh, "echo still", timeout=15), ("still\n", "", 0))
        big.settimeout(60)
        received = 0
        while chunk := big.recv(1 << 20):
            received += len(chunk)
        self.assertEqual(received, size)
        self.assertEqual(big.makefile_stderr().read(), b"end\n")
        self.assertEqual(big.recv_exit_status(), 0)

    def test_commands_that_ignore_the_hang_up_share_one_grace(self):
        # A client leaves with eight commands that ignore SIGHUP: they are hung up on together and
        # killed together after one grace of 2 s (not 2 s each, one after another).
        ssh = self.connect(self.logins("pw")[0])
        marker = harness.sleep_of_this_run(4545)
        for _ in range(8):
            _, out, _ = ssh.exec_command(f"trap '' HUP; echo started; exec {marker}", timeout=30)
            self.assertEqual(out.readline(), "started\n")
        ssh.close()
        harness.wait_for(lambda: not harness.processes_named(marker), timeout=10, what=f"every {marker} killed")

    def test_clients_not_logged_in_have_a_cap_of_their_own(self):
        # 32 clients that say nothing after the server's banner take every place for those not
        # logged in: the next connection is closed at once, with no banner (as sshd's MaxStartups
        # drops it); when they go, a client logs in again.
        login = self.logins("pw")[0]
        idle = []
        self.addCleanup(lambda: [c.close() for c in idle])
        for _ in range(32):
            c = socket.create_connection((login.ip_address, int(login.port)), timeout=10)
            idle.append(c)
            self.assertTrue(c.recv(100).startswith(b"SSH-2.0-"))
        with socket.create_connection((login.ip_address, int(login.port)), timeout=10) as over:
            self.assertEqual(over.recv(100), b"")
        for c in idle:
            c.close()

        def banner():
            with socket.create_connection((login.ip_address, int(login.port)), timeout=10) as c:
                return c.recv(100).startswith(b"SSH-2.0-")
        harness.wait_for(banner, timeout=30, what="a banner again")
        self.assertEqual(self.run_on(self.connect(login), "echo in")[0], "in\n")

    def test_a_jobs_nodes_are_its_clusters(self):
        job = self.job("logins", self.client.clusters.get(RG, WS, "pw"), wait=False,
                       custom_toolkit_settings=m.CustomToolkitSettings(command_line=harness.sleep_of_this_run(600)))
        harness.wait_for(lambda: self.client.jobs.get(RG, WS, EXP, "logins").execution_state == "running",
                         what="job running")
        login, = list(self.client.jobs.list_remote_login_information(RG, WS, EXP, "logins"))
        by_node = {l.node_id: l for l in self.logins("pw")}
        self.assertEqual((login.ip_address, login.port), (by_node[login.node_id].ip_address, by_node[login.node_id].port))
        # (the job runs once its command's shell has started: the sleep itself may come a moment
        # later; pgrep -x, as the shell running pgrep has the pattern in its own command line)
        ssh = self.connect(login)
        harness.wait_for(lambda: self.run_on(ssh, f"pgrep -xf '{harness.sleep_of_this_run(600)}' >/dev/null && echo seen")
                         == ("seen\n", "", 0), timeout=30, what="the job's sleep seen from its node's login")
        self.client.jobs.begin_terminate(RG, WS, EXP, "logins").result()
        del job


class NodeLoginStop(JobsTestCase):
    """An emulator of its own, stopped while a login's command has a full stdin."""

    def test_the_emulator_stops_with_a_login_whose_stdin_is_full(self):
        self.cluster("stopping", nodes=1, vm_size="STANDARD_D1")
        self.wait_cluster("stopping", idle=1)
        login, = list(self.client.clusters.list_remote_login_information(RG, WS, "stopping"))
        ssh = paramiko.SSHClient()
        ssh.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        ssh.connect(login.ip_address, int(login.port), "alice", password=PASSWORD, look_for_keys=False,
                    allow_agent=False, timeout=10, banner_timeout=10, auth_timeout=10)
        self.addCleanup(ssh.close)
        stuck = ssh.get_transport().open_session(timeout=10)
        stuck.exec_command(f"echo started; {harness.sleep_of_this_run(600)}")
        stuck.settimeout(30)
        self.assertEqual(stuck.recv(100), b"started\n")
        send_in_background(stuck, 4 << 20)
        harness.wait_for(lambda: stuck.out_window_size == 0, timeout=30, what="the client's window shut")
        self.client.clusters.begin_delete(RG, WS, "stopping").result()
        code, _ = self.emu.stop(timeout=30)  # (killed, -9, if it does not stop by then)
        self.assertEqual(code, 0)


if __name__ == "__main__":
    unittest.main()
