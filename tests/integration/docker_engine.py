"""A real docker engine and a real registry for the tests, on this machine only.

dockerd (Debian's docker.io) runs on a socket, data root and exec root of its own, with no
iptables and no bridge (containers use the host's network, as the emulator runs them);
docker-registry (Debian's package: the CNCF distribution) serves on a loopback port with
htpasswd credentials (plain HTTP: the engine trusts registries on 127.0.0.0/8). Test images are
made with `docker import` of a small root (busybox and bash with their libraries), pushed to the
registry, and removed from the engine, so that a job must pull them. Both servers are stopped by
PID and their directories removed at the end.

`start()` raises unittest.SkipTest (a visible SKIPPED line) when dockerd or the registry is not
installed or does not come up.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

OWNER_LABEL = "bai-emulator.owner"
USER = "trainer"
PASSWORD = "registry-Secret-1"


def mounts_under(directory):
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if line.split()[4].startswith(directory + "/")]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def elf_dependencies(paths):
    """The shared libraries the ELF files among `paths` load (ldd), to a fixed point."""
    found, todo = set(), list(paths)
    while todo:
        path = todo.pop()
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        for lib in (w for w in out.split() if w.startswith("/")):
            if lib not in found:
                found.add(lib)
                todo.append(lib)
    return found


def copy_into(root, path):
    """`path` at the same place under `root`: a link as a link, and what it points to."""
    target = os.path.join(root, path.lstrip("/"))
    if os.path.lexists(target):
        return
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if os.path.islink(path):
        link = os.readlink(path)
        os.symlink(link, target)
        copy_into(root, os.path.normpath(os.path.join(os.path.dirname(path), link)))
    elif os.path.isfile(path):
        shutil.copy2(path, target)


def image_root(root, marker, packages=()):
    """busybox (its applets as links) and bash with its libraries, /etc/bai-image holding `marker`,
    and the files of the Debian `packages` with the libraries they load (OpenMPI for the MPI
    jobs: an image must carry its MPI, as the service required)."""
    os.makedirs(os.path.join(root, "bin"))
    for d in ("tmp", "etc", "root", "proc", "sys", "dev"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    shutil.copy2(shutil.which("busybox"), os.path.join(root, "bin", "busybox"))
    applets = subprocess.run([shutil.which("busybox"), "--list"], capture_output=True, text=True, check=True).stdout.split()
    for applet in applets:
        if applet not in ("bash", "busybox"):
            os.symlink("busybox", os.path.join(root, "bin", applet))
    bash = os.path.realpath(shutil.which("bash"))
    shutil.copy2(bash, os.path.join(root, "bin", "bash"))
    libraries = subprocess.run(["ldd", bash], capture_output=True, text=True, check=True).stdout.split()
    for lib in (w for w in libraries if w.startswith("/")):
        target = os.path.join(root, lib.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.realpath(lib), target)
    files = []
    for package in packages:
        listed = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=True).stdout.split("\n")
        files += [f for f in listed if f.startswith("/") and os.path.isfile(f) and not f.startswith("/usr/share/doc")]
    for path in files:
        copy_into(root, path)
    for lib in elf_dependencies([f for f in files if os.access(f, os.X_OK) or ".so" in f]):
        copy_into(root, lib)
    with open(os.path.join(root, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/bash\n")
    with open(os.path.join(root, "etc", "bai-image"), "w") as f:
        f.write(marker + "\n")


class DockerEngine:
    def __init__(self):
        self.dir = None
        self.dockerd = None
        self.registry = None
        self.host = None            # DOCKER_HOST for the emulator and the client
        self.registry_address = None  # 127.0.0.1:PORT
        self.docker = shutil.which("docker")

    # ---- lifecycle ----

    def start(self):
        missing = [name for name in ("dockerd", "docker", "docker-registry", "busybox") if not shutil.which(name)]
        if missing:
            raise unittest.SkipTest("no real docker engine here: " + ", ".join(missing) + " not installed")
        self.dir = tempfile.mkdtemp(prefix="bai-docker-")
        self.host = "unix://" + os.path.join(self.dir, "docker.sock")
        self._log = open(os.path.join(self.dir, "dockerd.log"), "w")
        self.dockerd = subprocess.Popen(
            ["dockerd", "--iptables=false", "--ip6tables=false", "--bridge=none",
             "--data-root", os.path.join(self.dir, "root"), "--exec-root", os.path.join(self.dir, "exec"),
             "--pidfile", os.path.join(self.dir, "dockerd.pid"), "--host", self.host],
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while self.client("version", "--format", "{{.Server.Version}}", check=False).returncode != 0:
            if self.dockerd.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise unittest.SkipTest("dockerd did not start here (see its log in the test output)")
            time.sleep(0.2)
        self._start_registry()
        return self

    def _start_registry(self):
        import bcrypt
        reg = os.path.join(self.dir, "registry")
        os.makedirs(reg)
        with open(os.path.join(reg, "htpasswd"), "w") as f:
            f.write(f"{USER}:{bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode()}\n")
        self.registry_address = f"127.0.0.1:{free_port()}"
        with open(os.path.join(reg, "config.yml"), "w") as f:
            f.write(f"""version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: {reg}/data
http:
  addr: {self.registry_address}
auth:
  htpasswd:
    realm: bai-tests
    path: {reg}/htpasswd
""")
        self.registry = subprocess.Popen(["docker-registry", "serve", os.path.join(reg, "config.yml")],
                                         stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://{self.registry_address}/v2/", timeout=2)
            except urllib.error.HTTPError as e:
                if e.code == 401:  # up, and asking for the credentials
                    return
            except OSError:
                pass
            if self.registry.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise unittest.SkipTest("docker-registry did not start here")
            time.sleep(0.1)

    @classmethod
    def with_private_image(cls, repository, marker):
        """A started engine and the reference of `repository` pushed to its registry only (see
        push_private); the engine is stopped again when the push fails."""
        engine = cls().start()
        try:
            return engine, engine.push_private(repository, marker)
        except BaseException:
            engine.stop()
            raise

    def stop(self):
        for process in (self.registry, self.dockerd):
            if process and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        self.registry = self.dockerd = None
        if self.dir:
            self._log.close()
            # dockerd leaves its default network namespace mounted under its exec root.
            for point in sorted(mounts_under(self.dir), key=len, reverse=True):
                subprocess.run(["umount", "--lazy", point], stderr=subprocess.DEVNULL)
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    # ---- the client ----

    def env(self, **extra):
        """The environment of a docker client (and of an emulator) that talks to this engine."""
        return dict(os.environ, DOCKER_HOST=self.host, **extra)

    def client(self, *args, check=True, input=None, config=None):
        argv = [self.docker] + (["--config", config] if config else []) + list(args)
        return subprocess.run(argv, env=self.env(), capture_output=True, text=True, check=check, input=input, timeout=120)

    def import_image(self, name, marker, packages=()):
        """A local image `name` (not in any registry) made from image_root."""
        root = tempfile.mkdtemp(prefix="bai-image-", dir=self.dir)
        image_root(os.path.join(root, "rootfs"), marker, packages)
        tar = subprocess.run(["tar", "-C", os.path.join(root, "rootfs"), "-c", "."], capture_output=True, check=True).stdout
        subprocess.run([self.docker, "import", "-", name], env=self.env(), input=tar, capture_output=True, check=True)
        shutil.rmtree(root, ignore_errors=True)

    def push_private(self, repository, marker):
        """An image in the registry (behind its credentials) and not on the engine: its reference."""
        reference = f"{self.registry_address}/{repository}"
        self.import_image(reference, marker)
        config = tempfile.mkdtemp(prefix="bai-docker-config-", dir=self.dir)
        self.client("login", self.registry_address, "--username", USER, "--password-stdin", input=PASSWORD, config=config)
        self.client("push", reference, config=config)
        shutil.rmtree(config, ignore_errors=True)
        self.client("rmi", reference)
        return reference

    def has_image(self, reference):
        return self.client("image", "inspect", reference, check=False).returncode == 0

    def owned_containers(self):
        """Every container on the engine that an emulator labelled as its own (running or not)."""
        out = self.client("ps", "--all", "--filter", "label=" + OWNER_LABEL, "--format", "{{.Names}}").stdout
        return out.split()
