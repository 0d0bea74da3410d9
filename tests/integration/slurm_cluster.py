"""A real Slurm cluster on this machine for the tests: munged, slurmctld, and N slurmd "hosts",
each slurmd in a network namespace of its own (its own address on a private bridge), a UTS
namespace (its own host name) and a mount namespace of its own (private: like a real cluster's
hosts, they see this machine's disk, a shared filesystem at the same paths, but none of the mounts
made here after they start), all started here and stopped by PID (and every process left in a
host's namespace killed) at the end. Every address is in 127.0.0.0/8: the bridge and the hosts
get 127.77.N.0/24 addresses, which Linux routes between namespaces with route_localnet and a
route in each namespace's local table (emulator/engine/slurm.md, "Checked on this machine").

Partitions: `main` (the default, PriorityTier 2) and `lowpri` (PriorityTier 1, PreemptMode
CANCEL) over every host: a job of main pre-empts one of lowpri (preempt/partition_prio, no
accounting database).

    cluster = SlurmCluster(hosts=2)
    reason = cluster.cannot_start()   # None, or why (a SKIPPED line's text)
    cluster.start()
    subprocess.run(["sinfo"], env=cluster.env())
    cluster.stop()
"""
import fcntl
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

COMMANDS = ["slurmctld", "slurmd", "munged", "sbatch", "srun", "squeue", "scancel", "sinfo", "ip", "nsenter", "unshare"]


def run(argv, check=True, **kwargs):
    return subprocess.run(argv, check=check, capture_output=True, text=True, timeout=60, **kwargs)


class SlurmCluster:
    def __init__(self, hosts=2, cpus=2, memory_mib=16000, gpus=0):
        self.hosts = hosts
        # GPUs per host: generic resources whose device files are plain files of the cluster's
        # directory (Slurm binds none of them here: no cgroup device constraint), the index
        # Slurm gives a step in CUDA_VISIBLE_DEVICES as on a GPU host.
        self.gpus = gpus
        self.cpus = cpus
        self.memory_mib = memory_mib
        # Names short enough for interfaces (15 characters); a subnet per run (chosen at start).
        self.tag = "bs%04x" % (os.getpid() & 0xFFFF)
        self.subnet = None
        self.bridge_address = None
        self.dir = None
        self.daemons = []  # (name, Popen)
        self.namespaces = []
        self.bridge = None

    def host_name(self, i):
        return f"host{i}"

    def host_address(self, i):
        return f"127.77.{self.subnet}.{10 + i}"

    def env(self):
        env = dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf"))
        if self.gpus:  # the hosts' nvidia-smi first on the PATH
            env["PATH"] = os.path.join(self.dir, "bin") + ":" + env.get("PATH", "/usr/bin:/bin")
        return env

    def cannot_start(self):
        """None when this machine can run the cluster, else why not."""
        missing = [c for c in COMMANDS if not shutil.which(c)]
        if missing:
            return "needs " + ", ".join(missing) + " (tools/setup --test installs slurm-wlm and munge)"
        if os.geteuid() != 0:
            return "needs root (network and UTS namespaces, a bridge)"
        probe = self.tag + "p"
        made = run(["ip", "netns", "add", probe], check=False)
        if made.returncode != 0:
            return "cannot make a network namespace: " + made.stderr.strip()
        run(["ip", "netns", "del", probe], check=False)
        return None

    # ---- start ----

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="bai-slurm-")
        try:
            self._network()
            self._munge()
            self._config()
            conf = os.path.join(self.dir, "slurm.conf")
            self._daemon("slurmctld", ["unshare", "--uts", "sh", "-c",
                                       f"hostname ctl && exec slurmctld -D -f {conf}"])
            for i in range(1, self.hosts + 1):
                ns = self.namespaces[i - 1]
                # nsenter, not `ip netns exec`: that one remounts /sys, and slurmd then finds no cgroups.
                self._daemon(f"slurmd-{i}", ["nsenter", f"--net=/run/netns/{ns}", "unshare", "--uts", "--mount",
                                             "--propagation", "private", "sh", "-c",
                                             f"hostname {self.host_name(i)} && exec slurmd -D -N {self.host_name(i)} -f {conf}"])
            self._wait_idle()
        except BaseException:
            self.stop()
            raise
        return self

    def _free_subnet(self):
        """The first 127.77.N.0/24 no bridge of another run uses (two suites run at once)."""
        used = run(["ip", "-4", "addr", "show"], check=False).stdout
        for step in range(200):
            n = 20 + (os.getpid() + step) % 200
            if f"inet 127.77.{n}." not in used:
                return n
        raise RuntimeError("no free 127.77.N.0/24 subnet")

    def _network(self):
        # Chosen and taken (the bridge's address) under a lock: another suite may be choosing too.
        with open(os.path.join(tempfile.gettempdir(), "bai-slurm-subnets.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.subnet = self._free_subnet()
            self.bridge_address = f"127.77.{self.subnet}.1"
            self._bridge()
        self._hosts()

    def _bridge(self):
        self.bridge = self.tag + "br"
        run(["ip", "link", "add", self.bridge, "type", "bridge"])
        run(["ip", "addr", "add", self.bridge_address + "/24", "dev", self.bridge])
        run(["ip", "link", "set", self.bridge, "up"])
        run(["sysctl", "-q", "-w", f"net.ipv4.conf.{self.bridge}.route_localnet=1"])
        # Without it, replies to 127.77.N.x would take the loopback's 127.0.0.0/8 route.
        run(["ip", "route", "replace", f"127.77.{self.subnet}.0/24", "dev", self.bridge, "table", "local",
             "proto", "kernel", "scope", "link", "src", self.bridge_address])

    def _hosts(self):
        for i in range(1, self.hosts + 1):
            ns = f"{self.tag}h{i}"
            veth = f"{self.tag}v{i}"
            run(["ip", "netns", "add", ns])
            self.namespaces.append(ns)
            run(["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns])
            run(["ip", "link", "set", veth, "master", self.bridge, "up"])
            inside = ["ip", "netns", "exec", ns]
            run(inside + ["ip", "addr", "add", self.host_address(i) + "/24", "dev", "eth0"])
            run(inside + ["ip", "link", "set", "eth0", "up"])
            run(inside + ["ip", "link", "set", "lo", "up"])
            run(inside + ["sysctl", "-q", "-w", "net.ipv4.conf.eth0.route_localnet=1"])
            run(inside + ["ip", "route", "replace", f"127.77.{self.subnet}.0/24", "dev", "eth0", "table", "local",
                          "proto", "kernel", "scope", "link", "src", self.host_address(i)])

    def _munge(self):
        munge = os.path.join(self.dir, "munge")
        os.makedirs(munge, mode=0o700)
        key = os.path.join(munge, "munge.key")
        with open(key, "wb") as f:
            f.write(secrets.token_bytes(1024))
        os.chmod(key, 0o600)
        self.munge_socket = os.path.join(munge, "munge.socket")
        self._daemon("munged", ["munged", "-F", "--force", f"--key-file={key}", f"--socket={self.munge_socket}",
                                f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log",
                                f"--seed-file={munge}/seed"])
        deadline = time.time() + 10
        while not os.path.exists(self.munge_socket):
            if time.time() > deadline:
                raise RuntimeError("munged did not start: " + self._log("munge/munged.log"))
            time.sleep(0.05)

    def _config(self):
        d = self.dir
        for sub in ("state", "spool", "log"):
            os.makedirs(os.path.join(d, sub))
        port = 21000 + 4 * self.subnet  # per subnet: two suites' controllers never share a port
        gres = f" Gres=gpu:{self.gpus}" if self.gpus else ""
        nodes = "\n".join(f"NodeName={self.host_name(i)} NodeAddr={self.host_address(i)} CPUs={self.cpus} "
                          f"RealMemory={self.memory_mib}{gres} State=UNKNOWN" for i in range(1, self.hosts + 1))
        if self.gpus:
            # nvidia-smi as the hosts' would answer the emulator's query: each host's GPUs by
            # index, their UUIDs naming the host.
            os.makedirs(os.path.join(d, "bin"))
            with open(os.path.join(d, "bin", "nvidia-smi"), "w") as f:
                f.write("#!/bin/sh\nh=$(hostname)\n" + "".join(
                    f'echo "{g}, GPU-$h-{g}, Fake GPU, 16384"\n' for g in range(self.gpus)))
            os.chmod(os.path.join(d, "bin", "nvidia-smi"), 0o755)
            with open(os.path.join(d, "gres.conf"), "w") as f:
                f.write("AutoDetect=off\n")
                for i in range(1, self.hosts + 1):
                    devices = os.path.join(d, "dev", self.host_name(i))
                    os.makedirs(devices)
                    for g in range(self.gpus):
                        open(os.path.join(devices, f"nvidia{g}"), "w").close()
                    f.write(f"NodeName={self.host_name(i)} Name=gpu File={devices}/nvidia[0-{self.gpus - 1}]\n")
        names = ",".join(self.host_name(i) for i in range(1, self.hosts + 1))
        with open(os.path.join(d, "slurm.conf"), "w") as f:
            f.write(f"""ClusterName=baitest
SlurmctldHost=ctl({self.bridge_address})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.%n.log
SlurmctldPort={port}
SlurmdPort={port + 1}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=5
SchedulerType=sched/backfill
{"GresTypes=gpu" if self.gpus else ""}
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
{nodes}
PartitionName=main Nodes={names} Default=YES MaxTime=INFINITE State=UP PriorityTier=2
PartitionName=lowpri Nodes={names} MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=CANCEL
""")

    def _daemon(self, name, argv):
        with open(os.path.join(self.dir, f"{name}.out"), "w") as log:  # the daemon keeps its own descriptor
            self.daemons.append((name, subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                        env=dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf")),
                                                        start_new_session=True)))

    def _wait_idle(self, timeout=60):
        deadline = time.time() + timeout
        states = ""
        while time.time() < deadline:
            for name, process in self.daemons:
                if process.poll() is not None:
                    raise RuntimeError(f"{name} exited ({process.returncode}): " + self._log(f"{name}.out") +
                                       self._log("log/slurmctld.log"))
            done = run(["sinfo", "-N", "-h", "-o", "%N %T"], check=False, env=self.env())
            states = done.stdout.strip()
            lines = set(states.splitlines())
            if len(lines) >= self.hosts and all(line.split()[-1] == "idle" for line in lines):
                return
            time.sleep(0.2)
        raise RuntimeError("the hosts did not become idle: " + states + self._log("log/slurmctld.log"))

    def _log(self, name):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return "\n" + f.read()[-2000:]
        except OSError:
            return ""

    # ---- use ----

    def squeue(self, job):
        """The job's state (all states: finished jobs stay listed for MinJobAge) and its host."""
        done = run(["squeue", "-t", "all", "-h", "-j", str(job), "-o", "%T %N"], check=False, env=self.env())
        return tuple(done.stdout.split()) if done.stdout.strip() else (None, None)

    def mounts_on(self, i):
        """What host i's processes see mounted (its slurmd's mount namespace): [(point, type)]."""
        for name, process in self.daemons:
            if name == f"slurmd-{i}" and process.poll() is None:
                with open(f"/proc/{process.pid}/mounts") as f:
                    return [tuple(line.split()[1:3]) for line in f]
        return []

    def hide_on_hosts(self, path):
        """Every host sees an empty directory at `path` (a tmpfs mounted there in its mount
        namespace), as a host that does not share that directory would; show_on_hosts undoes it."""
        for name, process in self.daemons:
            if name.startswith("slurmd-") and process.poll() is None:
                run(["nsenter", f"--mount=/proc/{process.pid}/ns/mnt", "mount", "-t", "tmpfs", "-o", "size=256m",
                     "bai-hidden", path])

    def exists_on(self, i, path):
        """Whether host i sees `path` (in its slurmd's mount namespace)."""
        for name, process in self.daemons:
            if name == f"slurmd-{i}" and process.poll() is None:
                return run(["nsenter", f"--mount=/proc/{process.pid}/ns/mnt", "test", "-e", path], check=False).returncode == 0
        return False

    def show_on_hosts(self, path):
        for name, process in self.daemons:
            if name.startswith("slurmd-") and process.poll() is None:
                run(["nsenter", f"--mount=/proc/{process.pid}/ns/mnt", "umount", "-l", path], check=False)

    # ---- a docker engine on each host ----

    DOCKER_DIR = "/run/bai-docker"
    DOCKER_HOST = "unix://" + DOCKER_DIR + "/docker.sock"

    def _slurmd_pid(self, i):
        for name, process in self.daemons:
            if name == f"slurmd-{i}" and process.poll() is None:
                return process.pid
        raise RuntimeError(f"host {i}'s slurmd is not running")

    def _in_host(self, i, *namespaces):
        pid = self._slurmd_pid(i)
        option = {"mnt": "mount", "net": "net", "uts": "uts"}
        return ["nsenter"] + [f"--{option[ns]}=/proc/{pid}/ns/{ns}" for ns in namespaces]

    def start_docker(self):
        """A docker engine on each host (Debian's dockerd in the host's network, mount and UTS
        namespaces: no iptables, no bridge, containers on the host's network), answering there at
        DOCKER_HOST: a tmpfs at DOCKER_DIR in each host's mount namespace holds its socket and exec
        root, so every host's clients reach their own engine by one path, as on a real cluster.
        Stopped with the cluster. Raises unittest.SkipTest where dockerd is missing or does not
        come up."""
        if not shutil.which("dockerd") or not shutil.which("docker"):
            raise unittest.SkipTest("no docker engine for the hosts: docker.io is not installed")
        os.makedirs(self.DOCKER_DIR, exist_ok=True)  # the mount point, in every namespace
        for i in range(1, self.hosts + 1):
            run(self._in_host(i, "mnt") + ["mount", "-t", "tmpfs", "-o", "size=64m,mode=0711", "bai-docker", self.DOCKER_DIR])
            root = os.path.join(self.dir, f"docker-{i}")
            self._daemon(f"dockerd-{i}", self._in_host(i, "net", "mnt", "uts") + [
                "dockerd", "--iptables=false", "--ip6tables=false", "--bridge=none", "--data-root", root,
                "--exec-root", self.DOCKER_DIR + "/exec", "--pidfile", self.DOCKER_DIR + "/dockerd.pid",
                "--host", self.DOCKER_HOST])
        deadline = time.time() + 60
        for i in range(1, self.hosts + 1):
            while self.docker_on(i, "version", "--format", "{{.Server.Version}}").returncode != 0:
                if time.time() > deadline:
                    raise unittest.SkipTest(f"dockerd did not start on host {i}: " + self._log(f"dockerd-{i}.out"))
                time.sleep(0.2)

    def docker_on(self, i, *args, input=None):
        """The docker client on host i, against that host's engine."""
        return subprocess.run(self._in_host(i, "net", "mnt") + ["docker", "--host", self.DOCKER_HOST] + list(args),
                              capture_output=True, input=input, timeout=120)

    def kill_slurmd(self, i):
        """Kills host i's slurmd (SIGKILL) as a host's crash would; what runs there keeps running."""
        for name, process in self.daemons:
            if name == f"slurmd-{i}" and process.poll() is None:
                process.kill()
                process.wait(timeout=10)

    # ---- stop ----

    def stop(self):
        if self.dir and any(p.poll() is None for n, p in self.daemons if n == "slurmctld"):
            run(["scancel", "--user=root", "--full"], check=False, env=self.env())
        # Daemons last started first; then whatever is left in the hosts' namespaces (slurmstepd and
        # the jobs' processes outlive a slurmd that was killed).
        for name, process in reversed(self.daemons):
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for name, process in reversed(self.daemons):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.daemons = []
        for ns in self.namespaces:
            pids = run(["ip", "netns", "pids", ns], check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            run(["ip", "netns", "del", ns], check=False)
        self.namespaces = []
        if self.bridge:
            run(["ip", "link", "del", self.bridge], check=False)
            self.bridge = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
