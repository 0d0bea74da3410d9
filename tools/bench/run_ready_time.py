#!/usr/bin/python3
"""tools/run from a clean clone to "ready" on a fresh Debian 12 machine: a container of a bare
Debian 12 root (debootstrap's minbase through the package mirror: none of the build's or the
tests' packages) sharing this machine's network, so that tools/setup's apt reaches the mirror.

The clone (of this repository's COMMIT, default HEAD: committed work only) is made here and
bind-mounted into the container, which runs `tools/run` with the emulator on free ports and its
data directory beside the clone. From here the phases are seen as they end: tools/setup's when
tools/build makes build/, the build's when the emulator makes its data directory, ready when
every endpoint in its endpoints.json answers /health. Each phase's CPU seconds (user+sys, every
process of the container, from its cgroup) are printed beside its wall time, and the machine's
other CPU use over the run, since a shared machine slows the wall times.

Needs root, dockerd (Debian's docker.io), a docker client and debootstrap. The root is cached in
$BAI_IMAGE_BASE_CACHE (default ~/.cache/batchai-emulator). The engine is private (its own socket
and data root, no iptables, no bridge) and is stopped by PID at the end, the container removed.

    /usr/bin/python3 tools/bench/run_ready_time.py [--commit REV] [--keep]
"""
import argparse
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MIRROR = "http://deb.debian.org/debian"
BASE = "bai-bench/debian:12-minbase"
TICK = os.sysconf("SC_CLK_TCK")


def base_tar():
    """A tar of a bare Debian 12 root (minbase), made once through the mirror."""
    cache = os.environ.get("BAI_IMAGE_BASE_CACHE") or os.path.expanduser("~/.cache/batchai-emulator")
    tar = os.path.join(cache, "debian-12-minbase.tar")
    if os.path.exists(tar):
        return tar
    work = tempfile.mkdtemp(prefix="bai-minbase-")
    try:
        print("making a Debian 12 minbase root with debootstrap (once)", file=sys.stderr)
        subprocess.run(["debootstrap", "--variant=minbase", "bookworm", work + "/root", MIRROR], check=True,
                       stdout=subprocess.DEVNULL)
        os.makedirs(cache, exist_ok=True)
        subprocess.run(["tar", "-C", work + "/root", "-cf", tar + ".partial", "."], check=True)
        os.replace(tar + ".partial", tar)
    finally:
        subprocess.run(["rm", "-rf", work])
    return tar


class Engine:
    """A private dockerd, stopped by PID."""

    def __init__(self, work):
        self.dir = os.path.join(work, "docker")
        os.makedirs(self.dir)
        self.env = dict(os.environ, DOCKER_HOST="unix://" + self.dir + "/docker.sock", DOCKER_BUILDKIT="0")
        self.log = open(self.dir + "/dockerd.log", "w")
        self.process = subprocess.Popen(
            ["dockerd", "--iptables=false", "--ip6tables=false", "--bridge=none", "--data-root", self.dir + "/root",
             "--exec-root", self.dir + "/exec", "--pidfile", self.dir + "/dockerd.pid", "--host", self.env["DOCKER_HOST"]],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while self.docker("version", check=False).returncode != 0:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit("dockerd did not start: see " + self.dir + "/dockerd.log")
            time.sleep(0.2)

    def docker(self, *args, check=True, stdin=None):
        return subprocess.run(["docker", *args], env=self.env, capture_output=True, text=stdin is None, check=check,
                              stdin=stdin)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()
        with open("/proc/self/mountinfo") as f:
            points = [line.split()[4] for line in f if line.split()[4].startswith(self.dir + "/")]
        for point in sorted(points, key=len, reverse=True):
            subprocess.run(["umount", "--lazy", point], stderr=subprocess.DEVNULL)


def cgroup_cpu(cid):
    """user and system seconds of every process the container has run (cgroup v1 or v2)."""
    for path, parse in ((f"/sys/fs/cgroup/cpuacct/docker/{cid}/cpuacct.stat", "v1"),
                        (f"/sys/fs/cgroup/docker/{cid}/cpu.stat", "v2"),
                        (f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/cpu.stat", "v2")):
        try:
            with open(path) as f:
                fields = dict(line.split() for line in f)
        except OSError:
            continue
        if parse == "v1":
            return int(fields["user"]) / TICK, int(fields["system"]) / TICK
        return int(fields["user_usec"]) / 1e6, int(fields["system_usec"]) / 1e6
    return None


def machine_busy():
    """Seconds that every CPU of this machine has spent busy since boot, and the CPU count."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICK, os.cpu_count()


def answers(endpoints):
    context = ssl._create_unverified_context()
    for name in ("arm", "blob", "file", "batch"):
        url = urllib.parse.urlsplit(endpoints[name])
        try:
            with urllib.request.urlopen(f"{url.scheme}://127.0.0.1:{url.port}/health", timeout=2,
                                        context=context if url.scheme == "https" else None) as r:
                if r.status != 200:
                    return False
        except OSError:
            return False
    return True


def measure(engine, work, timeout):
    data = "/work/data"
    run = engine.docker("run", "--detach", "--network", "host", "--volume", work + ":/work", "--workdir", "/work/src",
                        "--env", "DEBIAN_FRONTEND=noninteractive", BASE, "tools/run", "--location", data,
                        "--arm-port", "0", "--blob-port", "0", "--file-port", "0", "--batch-port", "0",
                        "--proxy-port", "0")
    cid = run.stdout.strip()
    started = time.monotonic()
    busy0, cpus = machine_busy()
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[:3]
    marks = {}
    build_dir, data_dir, endpoints_file = work + "/src/build", work + "/data", work + "/data/endpoints.json"
    cpu = (0.0, 0.0)
    while True:
        now = time.monotonic() - started
        cpu = cgroup_cpu(cid) or cpu
        if "setup" not in marks and os.path.isdir(build_dir):
            marks["setup"] = (now, cpu)
        if "build" not in marks and os.path.isdir(data_dir):
            marks.setdefault("setup", (now, cpu))
            marks["build"] = (now, cpu)
        if "build" in marks and os.path.exists(endpoints_file):
            try:
                with open(endpoints_file) as f:
                    endpoints = json.load(f)
            except ValueError:
                endpoints = None
            if endpoints and answers(endpoints):
                marks["ready"] = (time.monotonic() - started, cgroup_cpu(cid) or cpu)
                break
        state = engine.docker("inspect", "--format", "{{.State.Running}}", cid, check=False).stdout.strip()
        if state != "true" or now > timeout:
            logs = engine.docker("logs", "--tail", "40", cid, check=False)
            sys.exit(f"not ready after {now:.0f} s (running: {state}):\n{logs.stdout}{logs.stderr}")
        time.sleep(0.2)
    busy1, _ = machine_busy()
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[:3]
    engine.docker("rm", "--force", cid, check=False)
    return marks, busy1 - busy0, cpus, load0, load1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commit", default="HEAD", help="what to clone (default HEAD)")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--keep", action="store_true", help="keep the work directory (the clone and its build)")
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", args.commit], capture_output=True, text=True,
                            check=True).stdout.strip()
    tar = base_tar()
    work = tempfile.mkdtemp(prefix="bai-run-ready-")
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", ROOT, work + "/src"], check=True)
    subprocess.run(["git", "-C", work + "/src", "checkout", "--quiet", commit], check=True)
    engine = Engine(work)
    try:
        with open(tar, "rb") as f:
            engine.docker("import", "-", BASE, stdin=f)
        marks, busy, cpus, load0, load1 = measure(engine, work, args.timeout)
    finally:
        engine.stop()
        if not args.keep:
            subprocess.run(["rm", "-rf", work])
    print(f"tools/run of {commit[:10]} on Debian 12 (minbase), {cpus} CPUs")
    print(f"{'phase':<22}{'wall s':>8}{'CPU s':>8}{'user':>8}{'sys':>8}")
    previous = (0.0, (0.0, 0.0))
    for name, label in (("setup", "tools/setup"), ("build", "tools/build"), ("ready", "start to /health")):
        wall, (user, system) = marks[name]
        du, ds = user - previous[1][0], system - previous[1][1]
        print(f"{label:<22}{wall - previous[0]:>8.1f}{du + ds:>8.1f}{du:>8.1f}{ds:>8.1f}")
        previous = marks[name]
    wall, (user, system) = marks["ready"]
    print(f"{'total':<22}{wall:>8.1f}{user + system:>8.1f}{user:>8.1f}{system:>8.1f}")
    other = busy - (user + system)
    print(f"the machine's other work meanwhile: {other:.0f} CPU s ({other / wall:.2f} of {cpus} CPUs busy on "
          f"average); load average {' '.join(load0)} at the start, {' '.join(load1)} at the end")


if __name__ == "__main__":
    main()
