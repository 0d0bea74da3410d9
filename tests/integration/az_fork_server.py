"""The real az CLI, each command in a process of its own, forked from a server that has already
imported the libraries az loads on every command.

Each command runs Debian's `/usr/bin/az` script itself (runpy, as the interpreter would run it) with
the command's arguments, environment, directory and standard input, in a fresh child of the server;
its exit status, standard output and standard error come back as subprocess.run's would. The server
imports only third-party libraries (knack, the Azure SDKs, requests, msal, paramiko...): none of
them reads the environment when imported. Nothing of `azure.cli` is imported before the fork,
because az's own modules read AZURE_CONFIG_DIR and the rest of the environment when they are
imported: each command imports them afresh under its own environment, as `az` does. What the fork
saves is the interpreter's start and those imports, a third to a half of a short command's time,
and most of the az suites' time. This is how azure-cli's own scenario tests run az, in process;
here each command still gets a process of its own.

BAI_AZ_PROCESS=1 makes harness.az run `az` as its own program instead, as a user's shell does.

Run as a program, this file is the server: `az_fork_server.py SOCKET`; it prints "ready" when it
listens and ends when its standard input closes.
"""
import atexit
import importlib
import json
import locale
import os
import runpy
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import traceback

AZ_SCRIPT = "/usr/bin/az"

# What az imports on nearly every command, and the SDKs of the command groups the tests use. A name
# this machine lacks is skipped.
PRELOAD = [
    "knack", "knack.cli", "knack.commands", "knack.parser", "knack.output", "knack.log", "argcomplete",
    "jmespath", "colorama", "pygments", "yaml", "psutil", "packaging.version", "distro", "humanfriendly",
    "requests", "urllib3", "certifi", "cryptography.hazmat.primitives.serialization", "jwt", "msal",
    "msal_extensions", "azure.core", "azure.core.pipeline", "azure.core.pipeline.policies",
    "azure.core.polling", "azure.mgmt.core", "azure.identity", "msrest", "msrestazure",
    "msrestazure.azure_exceptions", "msrestazure.tools", "adal", "paramiko", "sshtunnel",
    "azure.mgmt.resource", "azure.mgmt.resource.resources", "azure.mgmt.resource.subscriptions",
    "azure.mgmt.storage", "azure.mgmt.batch", "azure.mgmt.batchai", "azure.batch",
    "azure.multiapi.storage.v2018_11_09.blob", "azure.multiapi.storage.v2018_11_09.file",
    "azure.multiapi.storagev2.blob.v2021_06_08", "azure.multiapi.storagev2.fileshare.v2021_06_08",
    "azure.multiapi.storagev2.filedatalake.v2021_08_06", "azure.multiapi.storagev2.queue.v2018_03_28",
    "azure.multiapi.cosmosdb.v2017_04_17.table", "azure.mgmt.resource.resources.v2022_09_01",
    "azure.mgmt.resource.resources.v2021_04_01", "azure.mgmt.resource.locks.v2016_09_01",
    "azure.mgmt.resource.policy.v2021_06_01", "azure.mgmt.storage.v2022_09_01", "applicationinsights",
    "multiprocessing", "logging.handlers", "tarfile", "pkginfo", "semver", "timeit",
]


# ---- framing: a 4-byte length, then JSON ----

def _send(conn, value):
    data = json.dumps(value).encode()
    conn.sendall(struct.pack("!I", len(data)) + data)


def _recv_exact(conn, n):
    chunks = []
    while n:
        chunk = conn.recv(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv(conn):
    head = _recv_exact(conn, 4)
    if head is None:
        return None
    body = _recv_exact(conn, struct.unpack("!I", head)[0])
    return None if body is None else json.loads(body)


# ---- the server ----

def _preload():
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # a module this az version lacks; az imports what it needs itself
            pass


def _exit_code(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # as the interpreter does with sys.exit("message")
    return 1


def _run_command(conn, request):
    """In the forked child: runs one az command and answers its outcome. Never returns."""
    code = 1
    try:
        os.setpgid(0, 0)  # its own group: a timeout kills what the command started too
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # az's own subprocesses are waited for
        _send(conn, {"pid": os.getpid()})
        stdin = tempfile.TemporaryFile()
        stdin.write(request.get("input", "").encode())
        stdin.seek(0)
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        os.dup2(stdin.fileno(), 0)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [AZ_SCRIPT, *request["args"]]
        sys.path[0] = os.path.dirname(AZ_SCRIPT)  # a script's directory leads sys.path
        try:
            runpy.run_path(AZ_SCRIPT, run_name="__main__")
            code = 0
        except SystemExit as e:
            code = _exit_code(e.code)
        except BaseException:  # the interpreter prints an uncaught exception and exits 1
            traceback.print_exc()
            code = 1
        try:
            atexit._run_exitfuncs()
        except Exception:
            traceback.print_exc()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        out.seek(0)
        err.seek(0)
        _send(conn, {"code": code, "stdout": out.read().decode("latin-1"),
                     "stderr": err.read().decode("latin-1")})
    finally:
        os._exit(code)


def serve(path):
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ)
    events.register(sys.stdin, selectors.EVENT_READ)
    while True:
        for key, _ in events.select():
            if key.fileobj is sys.stdin:
                return  # the test process is gone or done
            conn, _ = listener.accept()
            request = _recv(conn)
            if request is None:
                conn.close()
                continue
            if os.fork() == 0:
                events.close()
                listener.close()
                _run_command(conn, request)
            conn.close()


# ---- the client ----

class AzForkServer:
    """One server per test process, started on first use, stopped when the process exits."""

    _lock = threading.Lock()
    _server = None

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="bai-az-fork-")
        self.path = os.path.join(self.dir, "socket")
        self.process = subprocess.Popen([sys.executable, os.path.abspath(__file__), self.path],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.process.stdout.readline()
        if line.strip() != b"ready":
            raise RuntimeError(f"the az fork server did not start (exit {self.process.poll()})")
        atexit.register(self.stop)

    @classmethod
    def shared(cls):
        with cls._lock:
            if cls._server is None or cls._server.process.poll() is not None:
                cls._server = cls()
            return cls._server

    def stop(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        try:
            os.unlink(self.path)
            os.rmdir(self.dir)
        except OSError:
            pass

    def run(self, args, env, cwd=None, input=None, timeout=300):
        """As subprocess.run(["az", *args], capture_output=True, text=True, ...) answers."""
        argv = ["az", *args]
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self.path)
            conn.settimeout(timeout)
            _send(conn, {"args": list(args), "env": dict(env), "cwd": os.path.abspath(cwd or os.getcwd()),
                         "input": input or ""})
            pid = None
            try:
                started = _recv(conn)
                pid = started["pid"]
                done = _recv(conn)
            except socket.timeout:
                if pid is not None:
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                raise subprocess.TimeoutExpired(argv, timeout)
        if done is None:
            raise RuntimeError(f"az {' '.join(args)}: the forked command ended without an answer")
        return subprocess.CompletedProcess(argv, done["code"], _text(done["stdout"]), _text(done["stderr"]))


def _text(latin1):
    """Bytes carried as latin-1, decoded as subprocess.run(text=True) decodes (locale, newlines)."""
    data = latin1.encode("latin-1").decode(locale.getpreferredencoding(False), errors="strict")
    return data.replace("\r\n", "\n").replace("\r", "\n")


def run_az(args, env, cwd=None, input=None, timeout=300):
    """`az ARGS` under `env` in `cwd`: subprocess.CompletedProcess with text stdout and stderr."""
    if os.environ.get("BAI_AZ_PROCESS") == "1":
        return subprocess.run(["az", *args], capture_output=True, text=True, env=env, cwd=cwd,
                              input=input, timeout=timeout)
    return AzForkServer.shared().run(args, env, cwd=cwd, input=input, timeout=timeout)


if __name__ == "__main__":
    serve(sys.argv[1])
