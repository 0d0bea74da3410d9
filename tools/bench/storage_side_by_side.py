#!/usr/bin/python3
"""Side-by-side storage benchmark: batchai-emulator against Azurite (npm) and the native disk, in
one run on this machine, with ratios against the targets of the fake_storage issue.

  /usr/bin/python3 tools/bench/storage_side_by_side.py [--repeats 3] [--blobs 100000] [--markdown OUT]

Uses ../shared/bench/storage_bench.py (or $STORAGE_BENCH) with its raw client (http.client and
its own SharedKey: the server's cost shows) and build/tools/storage_load (a C++ client of the same
requests with less cost of its own), installs azurite@3.37.0 with npm into
~/.cache/bai-bench/azurite when missing, starts both servers on free loopback ports with fresh
data directories and stops them by PID. Each round measures the disk and then both servers, in
alternating order; the table has the median of the rounds. build/tools/memory_blob_server (bodies
in memory, nothing else) is measured with the same small requests: its ratio to Azurite is the
most that a client can show of any server. Not part of the tests.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from bench_tools import tool
from process_stats import status_mib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.environ.get("STORAGE_BENCH", os.path.join(ROOT, "..", "shared", "bench", "storage_bench.py"))
EMULATOR = os.path.join(ROOT, "build", "emulator", "batchai-emulator")
STORAGE_LOAD = os.path.join(ROOT, "build", "tools", "storage_load")
MEMORY_SERVER = os.path.join(ROOT, "build", "tools", "memory_blob_server")
AZURITE_VERSION = "3.37.0"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def conn(blob=None, file=None):
    s = f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={KEY};"
    if blob:
        s += f"BlobEndpoint={blob}/devstoreaccount1;"
    if file:
        s += f"FileEndpoint={file}/devstoreaccount1;"
    return s


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {port}")


class Server:
    def __init__(self, argv, cwd=None):
        self.log = tempfile.NamedTemporaryFile(prefix="bai-bench-", suffix=".log", delete=False)
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=cwd)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.unlink(self.log.name)


def start_emulator(workdir, emulator=None, name="emulator"):
    location = os.path.join(workdir, name)
    server = Server([emulator or EMULATOR, "--location", location, "--arm-port", "0", "--blob-port", "0",
                     "--file-port", "0", "--batch-port", "0", "--proxy-port", "0"])
    path = os.path.join(location, "endpoints.json")
    deadline = time.monotonic() + 30
    while not os.path.exists(path):
        if time.monotonic() > deadline or server.process.poll() is not None:
            raise RuntimeError("the emulator did not start")
        time.sleep(0.05)
    with open(path) as f:
        return server, json.load(f)


def azurite_binary(prefix):
    binary = os.path.join(prefix, "node_modules", ".bin", "azurite-blob")
    if not os.path.exists(binary):
        print(f"installing azurite@{AZURITE_VERSION} into {prefix}", file=sys.stderr)
        subprocess.run(["npm", "install", "--silent", "--prefix", prefix, f"azurite@{AZURITE_VERSION}"],
                       check=True)
    return binary


def start_azurite(workdir, prefix):
    port = free_port()
    server = Server([azurite_binary(prefix), "--blobHost", "127.0.0.1", "--blobPort", str(port),
                     "--silent", "--location", os.path.join(workdir, "azurite"), "--disableTelemetry",
                     "--skipApiVersionCheck"])
    wait_port(port)
    return server, f"http://127.0.0.1:{port}"


def start_memory_server():
    port = free_port()
    server = Server([MEMORY_SERVER, str(port)])
    wait_port(port)
    return server, f"http://127.0.0.1:{port}"


def run_bench(args, connection, pid, phases, repeats, extra=()):
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    argv = ["/usr/bin/python3", BENCH, "--conn", connection, "--repeats", str(repeats), "--json", out,
            *[x for ph in phases for x in ("--only", ph)], *extra]
    if pid:
        argv += ["--server-pid", str(pid)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        samples = json.load(f)["samples"]
    os.unlink(out)
    return {k: statistics.median(v) for k, v in samples.items()}


def raw_client(endpoint):
    """The shared bench's raw Blob client (http.client, its own SharedKey) for `endpoint`."""
    sys.path.insert(0, os.path.dirname(BENCH))
    import storage_bench
    return storage_bench.RawBlobClient(conn(blob=endpoint))


def disk_kept(directory, repeats, mib=256):
    """Write+fsync of `mib` MiB into a new file per repeat, keeping every file until the end, as a
    store keeps what it was sent. The shared bench removes its file after each repeat, so its
    later repeats write into memory just freed; on VMs that hand freed memory back to the host
    (free page reporting) new page-cache pages cost far more than recycled ones."""
    os.makedirs(directory, exist_ok=True)
    data = os.urandom(mib * 1024 * 1024)
    rates = []
    for rep in range(repeats):
        started = time.perf_counter()
        with open(os.path.join(directory, f"kept-{rep}.bin"), "wb") as f:
            for offset in range(0, len(data), 4 * 1024 * 1024):
                f.write(data[offset:offset + 4 * 1024 * 1024])
            f.flush()
            os.fsync(f.fileno())
        rates.append(mib / (time.perf_counter() - started))
    return statistics.median(rates)


class LeanDownload:
    """256 MiB downloads with the raw client discarding what it reads: the shared bench keeps the
    bytes in a BytesIO, whose growth into new memory is most of what it measures on this VM."""

    def __init__(self, endpoint, mib=256, in_one_put=False):
        self.client = raw_client(endpoint)
        self.client.create_container("lean")
        data = os.urandom(mib * 1024 * 1024)
        if in_one_put:  # the in-memory server has no blocks
            self.client.put_blob("lean", "b00000", data)
        else:
            self.client.put_large("lean", "b00000", data, 4 * 1024 * 1024, 4)

    def measure(self):
        started = time.perf_counter()
        _, received = self.client.request("GET", "/lean/b00000", sink=lambda chunk: None)
        return received / (1024 * 1024) / (time.perf_counter() - started)


def storage_load(endpoint, *argv):
    out = subprocess.run([STORAGE_LOAD, "--port", endpoint.rsplit(":", 1)[1], "--key", KEY, *argv],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def cpp_client_ops(endpoint, round_number, count=3000, reads=6000):
    """4 KiB Put Blob and Get Blob from build/tools/storage_load (C++, one keep-alive connection on
    a plain socket, SharedKey): it spends a few microseconds of its own per request, the Python
    client about 110, so the servers' difference shows."""
    container = f"load{round_number}"
    raw_client(endpoint).create_container(container)
    rates = {}
    for op, n in (("put", count), ("get", reads)):
        result = storage_load(endpoint, "--container", container, "--op", op, "--count", str(n),
                              "--blobs", str(count))
        rates[f"cpp.{op}_ops_s"] = result["per_second"]
    return rates


def cpp_download(endpoint, mib=256, count=3):
    """The median rate of `count` downloads of LeanDownload's blob by storage_load, into memory the
    client has already touched (the Python client's BytesIO grows into new memory each time)."""
    result = storage_load(endpoint, "--container", "lean", "--op", "download", "--count", str(count),
                          "--size", str(mib * 1024 * 1024))
    return mib / (result["p50_ms"] / 1000)


def fill_blobs(endpoint, count, threads=8):
    """Stores `count` 1 KiB blobs with the raw client, in parallel."""
    client = raw_client(endpoint)
    client.create_container("many")
    payload = b"m" * 1024
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda i: client.put_blob("many", f"dir{i % 100}/blob{i:07d}", payload), range(count)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--blobs", type=int, default=100_000, help="blobs stored for the memory figure")
    p.add_argument("--azurite-prefix", default=os.path.expanduser("~/.cache/bai-bench/azurite"))
    p.add_argument("--markdown", help="also write the table here")
    p.add_argument("--json", help="also write every round's figures here")
    p.add_argument("--emulator", help="another build's batchai-emulator (default: build/emulator/batchai-emulator)")
    a = p.parse_args()
    if a.emulator:
        global EMULATOR
        EMULATOR = os.path.abspath(a.emulator)
    if not os.path.exists(EMULATOR):
        sys.exit(f"build first (tools/build): {EMULATOR} is missing")
    for name in ("storage_load", "memory_blob_server"):
        tool(os.path.join(ROOT, "build"), name)
    workdir = tempfile.mkdtemp(prefix="bai-bench-")
    results = {}
    rounds = {"disk": [], "azurite": [], "emulator": [], "memory": []}
    try:
        azurite, azurite_endpoint = start_azurite(workdir, a.azurite_prefix)
        memory, memory_endpoint = start_memory_server()
        emulator, e = start_emulator(workdir)
        try:
            # The in-memory server: no process CPU to read, and no blocks (nor an upload phase).
            servers = {"azurite": (azurite_endpoint, azurite.process.pid),
                       "emulator": (e["blob"], e["pid"]), "memory": (memory_endpoint, 0)}
            lean = {name: LeanDownload(endpoint, in_one_put=name == "memory")
                    for name, (endpoint, _) in servers.items()}
            # Rounds alternate the servers' order, so that the machine's drift (this VM's disk and
            # memory move by several times within minutes) falls on both alike.
            for rep in range(a.repeats):
                print(f"round {rep + 1} of {a.repeats} ...", file=sys.stderr)
                # Kept files first: the shared bench's disk phase removes its file at the end, and
                # a write right after that reuses the memory just freed, several times faster.
                kept = disk_kept(os.path.join(workdir, f"kept{rep}"), 1)
                disk = run_bench(a, conn(blob="http://127.0.0.1:1"), 0, ["disk"], 1,
                                 ["--disk-dir", os.path.join(workdir, "disk")])
                disk["kept"] = kept
                rounds["disk"].append(disk)
                # The in-memory server writes nothing to disk: it goes first, and the two servers
                # that store take turns after it.
                for name in ["memory"] + (["azurite", "emulator"] if rep % 2 == 0 else ["emulator", "azurite"]):
                    endpoint, pid = servers[name]
                    phases = ["small"] if name == "memory" else ["small", "large"]
                    sample = run_bench(a, conn(blob=endpoint), pid, phases, 1, ["--client", "raw"])
                    sample["lean_download"] = lean[name].measure()
                    sample["cpp_download"] = cpp_download(endpoint)
                    sample.update(cpp_client_ops(endpoint, rep))
                    rounds[name].append(sample)
        finally:
            azurite.stop()
            memory.stop()
        for name, samples in rounds.items():
            results[name] = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
        if a.json:
            with open(a.json, "w") as out:
                json.dump(rounds, out, indent=1)
        try:
            results["emulator_file"] = run_bench(a, conn(file=e["file"]), e["pid"], ["small", "large"],
                                                 1, ["--client", "sdk", "--service", "file"])
            print(f"storing {a.blobs} blobs ...", file=sys.stderr)
            started = time.monotonic()
            fill_blobs(e["blob"], a.blobs)
            results["fill_seconds"] = time.monotonic() - started
            results["rss_mib"] = status_mib(e["pid"])
        finally:
            emulator.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    em, az, disk = results["emulator"], results["azurite"], results["disk"]

    def per_round(key, against, mine="emulator"):
        """The geometric mean of the rounds' ratios of `mine`'s `key` to `against` (a (source, key)
        pair): the servers take turns to go first, and this cancels what going first or second is
        worth (on this VM, writing into memory just freed)."""
        source, other = against
        return statistics.geometric_mean(
            ours[key] / theirs[other] for ours, theirs in zip(rounds[mine], rounds[source]))

    rows = [
        ("4 KiB PUT, ops/s (raw, 1 thread)", "small.put_ops_s", "5x Azurite"),
        ("4 KiB GET, ops/s (raw, 1 thread)", "small.get_ops_s", "5x Azurite"),
        ("4 KiB PUT, ops/s (C++ client, 1 connection)", "cpp.put_ops_s", "5x Azurite"),
        ("4 KiB GET, ops/s (C++ client, 1 connection)", "cpp.get_ops_s", "5x Azurite"),
        ("256 MiB upload, MiB/s (raw, 4 x 4 MiB blocks)", "large.upload_MiB_s", "4x Azurite, 60% of disk"),
        ("256 MiB download, MiB/s (raw, one GET, into a BytesIO)", "large.download_MiB_s", "3x Azurite"),
        ("256 MiB download, MiB/s (raw, one GET, bytes discarded)", "lean_download", "3x Azurite"),
        ("256 MiB download, MiB/s (C++ client, one GET, into its memory)", "cpp_download", "3x Azurite"),
        ("server CPU per 4 KiB PUT, ms", "small.server_cpu_ms_per_put", ""),
        ("server CPU per 4 KiB GET, ms", "small.server_cpu_ms_per_get", ""),
    ]
    lines = ["| metric | emulator | Azurite 3.37.0 | ratio | in-memory server: ratio | disk | target |",
             "|---|---|---|---|---|---|---|"]
    for name, key, target in rows:
        native_text = ""
        memory_text = ""
        if key in rounds["memory"][0]:
            memory_text = f"{per_round(key, ('azurite', key), 'memory'):.2f}x"
        if key == "large.upload_MiB_s":
            native_text = (f"{disk['disk.write_fsync_MiB_s']:.0f} "
                           f"({100 * per_round(key, ('disk', 'disk.write_fsync_MiB_s')):.0f}% of it); files kept "
                           f"{disk['kept']:.0f} ({100 * per_round(key, ('disk', 'kept')):.0f}% of it)")
        lines.append(f"| {name} | {em[key]:.2f} | {az[key]:.2f} | {per_round(key, ('azurite', key)):.2f}x | "
                     f"{memory_text} | {native_text} | {target} |")
    f = results["emulator_file"]
    lines.append(f"| File service (SDK): 4 KiB PUT / GET ops/s | {f['small.put_ops_s']:.0f} / "
                 f"{f['small.get_ops_s']:.0f} | no File service | | | | |")
    lines.append(f"| File service (SDK): 256 MiB up / down MiB/s | {f['large.upload_MiB_s']:.0f} / "
                 f"{f['large.download_MiB_s']:.0f} | no File service | | | | |")
    lines.append(f"| server memory with {a.blobs} blobs stored, MiB RSS | {results['rss_mib']:.0f} | | | | | under 100 |")
    table = "\n".join(lines)
    print(table)
    print(f"\n(disk: write+fsync {disk.get('disk.write_fsync_MiB_s', float('nan')):.0f} MiB/s, "
          f"{disk['kept']:.0f} MiB/s into files kept; "
          f"{a.blobs} blobs stored in {results['fill_seconds']:.0f} s with 8 threads; figures: medians of "
          f"{a.repeats} rounds; ratios: geometric means of the rounds' ratios)")
    if a.markdown:
        with open(a.markdown, "w") as out:
            out.write(table + "\n")


if __name__ == "__main__":
    main()
