#!/usr/bin/python3
"""What the proxy front door costs: the same requests to the direct endpoints and through the proxy
(a CONNECT tunnel to Azure's host name, TLS with a certificate of the proxy's CA), side by side in
one run.

  /usr/bin/python3 tools/bench/proxy_overhead.py [--build DIR] [--rounds 5] [--requests 1000]
      [--handshakes 100] [--names 1000] [--concurrent 1000] [--null-server]

1. Per request on one kept-alive connection per path (Python's http.client, one request at a
   time); in each round the paths take turns in blocks of 10 requests (so that the shared
   machine's slow moments fall on all of them alike), the turn order reversed every other round:
   - Blob: anonymous GET of a 4 KiB blob in a public container, direct (plain HTTP, path-style),
     through the proxy as plain HTTP (absolute-form target: the proxy's routing without TLS) and
     through a tunnel to ACCOUNT.blob.core.windows.net (HTTPS, host-style);
   - Batch: GET pools of devbatchaccount1 direct in plain HTTP, direct in HTTPS (the Batch port
     serves both: the TLS baseline for the same handler) and through a tunnel to
     ACCOUNT.eastus.batch.azure.com;
   - ARM: GET /subscriptions with a Bearer token, direct HTTPS and through a tunnel to
     management.azure.com (both TLS: the fair pair).
   Each: median and p90 latency, requests/s (1 / mean latency), the client's and the server's
   CPU per request (the server's from its CPU clock, in ns); then each pair's difference of
   medians, round by round.
2. A new CONNECT and TLS handshake for a name never served (a fresh account name: the CA signs a
   certificate) against one already served (its context cached): CONNECT-to-200 and handshake
   times, medians per round, the order alternating.
3. Memory: a fresh emulator's resident memory (VmRSS) before and after each of --batches (2)
   batches of --names tunnels to distinct account names (one request each); the CA keeps 512 contexts.
4. --concurrent tunnels open at once (a thread each, distinct new names): each CONNECTs, shakes
   hands, sends one request and holds its connection until all have answered; counts of answers,
   refusals and errors (a 30 s timeout each shows a hang), the time, and the emulator's memory,
   threads and open files before, at the peak and after; --waves times, to show whether what it
   keeps afterwards grows. 0 skips it.
--null-server adds a path to part 1: plain HTTP to tools/bench/http_stack_null (the project's
listener with a handler that does nothing), the most this client can show (built on first use).

The emulators start on free loopback ports with fresh data directories and are stopped by PID.
No assertions on the figures; a request that fails stops the bench. Not part of the tests.
"""
import argparse
import http.client
import os
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from bench_tools import tool  # noqa: E402
from process_stats import status_mib  # noqa: E402

ACCOUNT = harness.DEV_ACCOUNT
BATCH_ACCOUNT = "devbatchaccount1"
CONTAINER, BLOB = "bench", "b4k"
BEARER = {"Authorization": "Bearer emulator-token"}
ARM_PATH = "/subscriptions?api-version=2020-01-01"
BATCH_PATH = "/pools?api-version=2023-05-01.17.0"


def host_port(url):
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port


class Paths:
    """The connections and requests of part 1, from one emulator's endpoints.json."""

    def __init__(self, ep):
        self.ep = ep
        self.proxy = host_port(ep["proxy"])
        self.proxy_tls = ssl.create_default_context(cafile=ep["proxy_ca"])
        self.arm_tls = ssl.create_default_context(cafile=ep["ca_cert"])

    def direct(self, service):
        return http.client.HTTPConnection(*host_port(self.ep[service]))

    def direct_tls(self, service):
        # ARM's certificate also serves the Batch port's TLS.
        return http.client.HTTPSConnection(*host_port(self.ep[service]), context=self.arm_tls)

    def tunnel(self, host):
        connection = http.client.HTTPSConnection(*self.proxy, context=self.proxy_tls)
        connection.set_tunnel(host, 443)
        return connection

    def table(self):
        """name -> (open a connection, target, headers); pairs compare a name with its baseline."""
        blob_host = f"{ACCOUNT}.blob.core.windows.net"
        batch_host = f"{BATCH_ACCOUNT}.eastus.batch.azure.com"
        return {
            "blob direct http": (lambda: self.direct("blob"), f"/{ACCOUNT}/{CONTAINER}/{BLOB}", {}),
            "blob proxy http": (lambda: http.client.HTTPConnection(*self.proxy),
                                f"http://{blob_host}/{CONTAINER}/{BLOB}", {}),
            "blob tunnel https": (lambda: self.tunnel(blob_host), f"/{CONTAINER}/{BLOB}", {}),
            "batch direct http": (lambda: self.direct("batch"), f"/{BATCH_ACCOUNT}{BATCH_PATH}", BEARER),
            "batch direct https": (lambda: self.direct_tls("batch"), f"/{BATCH_ACCOUNT}{BATCH_PATH}", BEARER),
            "batch tunnel https": (lambda: self.tunnel(batch_host), BATCH_PATH, BEARER),
            "arm direct https": (lambda: self.direct_tls("arm"), ARM_PATH, BEARER),
            "arm tunnel https": (lambda: self.tunnel("management.azure.com"), ARM_PATH, BEARER),
        }


PAIRS = [  # (through the proxy, its baseline, what the difference is)
    ("blob proxy http", "blob direct http", "proxy routing, no TLS either side"),
    ("blob tunnel https", "blob direct http", "routing + TLS (the direct side has none)"),
    ("batch direct https", "batch direct http", "TLS alone, same port and handler"),
    ("batch tunnel https", "batch direct https", "tunnel, both TLS"),
    ("arm tunnel https", "arm direct https", "tunnel, both TLS"),
]


def get(connection, target, headers):
    connection.request("GET", target, headers=headers)
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"GET {target}: {response.status} {body[:300]!r}")
    return body


def process_cpu_clock(pid):
    """The clock of another process's CPU time (Linux: CPUCLOCK_SCHED of the whole process), read
    with time.clock_gettime in nanoseconds where /proc's figures move in 10 ms ticks."""
    return ((~pid) << 3) | 2


def timed_block(connection, target, headers, count, server_clock):
    """Per-request seconds of COUNT GETs on CONNECTION, and the client's and server's CPU seconds."""
    latencies = []
    client_cpu, server_cpu = time.process_time(), time.clock_gettime(server_clock)
    clock = time.perf_counter
    for _ in range(count):
        started = clock()
        get(connection, target, headers)
        latencies.append(clock() - started)
    return latencies, time.process_time() - client_cpu, time.clock_gettime(server_clock) - server_cpu


def summary(latencies, client_cpu=None, server_cpu=None):
    ordered = sorted(latencies)
    n = len(ordered)
    row = {"p50_ms": statistics.median(ordered) * 1e3, "p90_ms": ordered[min(n - 1, int(n * 0.9))] * 1e3,
           "per_s": n / sum(ordered)}
    if client_cpu is not None:
        row["client_cpu_us"] = client_cpu / n * 1e6
        row["server_cpu_us"] = server_cpu / n * 1e6
    return row


def setup_blob(ep):
    from azure.storage.blob import BlobServiceClient
    service = BlobServiceClient.from_connection_string(harness.connection_string(ep))
    container = service.create_container(CONTAINER, public_access="blob")
    container.upload_blob(BLOB, os.urandom(4096))


def interleaved_rounds(table, connections, clocks, rounds, requests, block=10):
    """Each round: every path's REQUESTS in blocks of BLOCK, the paths taking turns block by block
    (the machine's slow moments then fall on all of them alike), the turn order reversed every
    other round. CLOCKS: name -> the CPU clock of the server it asks. Returns name -> one summary
    per round."""
    names = list(table)
    results = {name: [] for name in names}
    for index in range(rounds):
        order = names if index % 2 == 0 else names[::-1]
        gathered = {name: ([], 0.0, 0.0) for name in names}
        for _ in range(max(1, requests // block)):
            for name in order:
                _, target, headers = table[name]
                latencies, client, server = timed_block(connections[name], target, headers, block, clocks[name])
                have = gathered[name]
                have[0].extend(latencies)
                gathered[name] = (have[0], have[1] + client, have[2] + server)
        for name in names:
            results[name].append(summary(*gathered[name]))
    return results


def per_request(ep, pid, rounds, requests, null_server=None):
    table = Paths(ep).table()
    clocks = {name: process_cpu_clock(pid) for name in table}
    if null_server:
        server, port = null_server
        table["null server http"] = (lambda: http.client.HTTPConnection("127.0.0.1", port), f"/{ACCOUNT}/{CONTAINER}/{BLOB}", {})
        clocks["null server http"] = process_cpu_clock(server.pid)
    connections = {}
    for name, (opener, target, headers) in table.items():
        connections[name] = opener()
        for _ in range(50):  # the connection, the tunnel, the handshake and the caches warm
            get(connections[name], target, headers)
    try:
        return interleaved_rounds(table, connections, clocks, rounds, requests)
    finally:
        for connection in connections.values():
            connection.close()


def start_null_server(build):
    """tools/bench/http_stack_null: the project's listener with a handler that does nothing but
    answer a GET with 4 KiB (built when it is not there yet). Returns (process, port)."""
    binary = os.path.join(build, "tools", "http_stack_null")
    if not os.path.exists(binary):
        tool(build, "http_stack_null")
    server = subprocess.Popen([binary, "lean"], stdout=subprocess.PIPE, text=True)
    return server, int(server.stdout.readline())


def connect_tunnel(proxy, host, timeout=30):
    """A socket to PROXY with a CONNECT HOST:443 answered 200; returns it and the answer's status line."""
    sock = socket.create_connection(proxy, timeout=timeout)
    sock.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    status = answer.split(b"\r\n", 1)[0].decode(errors="replace")
    return sock, status


def open_tls_tunnel(proxy, context, host, timeout=30):
    """(TLS socket, seconds to the CONNECT's 200, seconds of the handshake) for a tunnel to HOST."""
    started = time.perf_counter()
    sock, status = connect_tunnel(proxy, host, timeout)
    connected = time.perf_counter()
    if " 200 " not in status + " ":
        sock.close()
        raise RuntimeError(f"CONNECT {host}: {status}")
    tls = context.wrap_socket(sock, server_hostname=host)
    return tls, connected - started, time.perf_counter() - connected


def one_request(tls, host, target):
    """One GET on an open tunnel; returns the status code."""
    tls.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n".encode())
    response = http.client.HTTPResponse(tls)
    response.begin()
    response.read()
    return response.status


class FreshNames:
    """Account names (3-24 lower-case letters and digits) that no run has served."""

    def __init__(self, prefix):
        self.prefix, self.next = prefix, 0

    def __call__(self):
        self.next += 1
        return f"{self.prefix}{self.next:06d}"


def handshakes(ep, rounds, count, fresh):
    proxy = host_port(ep["proxy"])
    context = ssl.create_default_context(cafile=ep["proxy_ca"])
    cached = f"{ACCOUNT}.blob.core.windows.net"
    open_tls_tunnel(proxy, context, cached)[0].close()
    out = {"new": [], "cached": []}
    for index in range(rounds):
        kinds = ["new", "cached"] if index % 2 == 0 else ["cached", "new"]
        for kind in kinds:
            connects, shakes = [], []
            for _ in range(count):
                host = f"{fresh()}.blob.core.windows.net" if kind == "new" else cached
                tls, connect_s, shake_s = open_tls_tunnel(proxy, context, host)
                tls.close()
                connects.append(connect_s)
                shakes.append(shake_s)
            out[kind].append({"connect_ms": statistics.median(connects) * 1e3,
                              "handshake_ms": statistics.median(shakes) * 1e3,
                              "total_ms": statistics.median(c + s for c, s in zip(connects, shakes)) * 1e3})
    return out


def process_counts(pid):
    with open(f"/proc/{pid}/status") as f:
        threads = next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
    return {"rss_mib": status_mib(pid), "hwm_mib": status_mib(pid, "VmHWM"), "threads": threads,
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def memory_levels(ep, pid, names, batches, fresh):
    """The emulator's memory after each batch of NAMES tunnels to distinct account names."""
    proxy = host_port(ep["proxy"])
    context = ssl.create_default_context(cafile=ep["proxy_ca"])
    levels = [("start", 0, process_counts(pid), 0.0)]
    served = 0
    for batch in range(batches):
        started = time.perf_counter()
        for _ in range(names):
            host = f"{fresh()}.blob.core.windows.net"
            tls = open_tls_tunnel(proxy, context, host)[0]
            one_request(tls, host, "/")  # the account does not exist: a 404, answered
            tls.close()
            served += 1
        levels.append((f"after batch {batch + 1}", served, process_counts(pid), time.perf_counter() - started))
    return levels


def concurrent_tunnels(ep, pid, count, fresh):
    """COUNT tunnels at once, each held open until every one has its answer (or failed)."""
    proxy = host_port(ep["proxy"])
    context = ssl.create_default_context(cafile=ep["proxy_ca"])
    hosts = [f"{fresh()}.blob.core.windows.net" for _ in range(count)]
    outcomes = [None] * count
    done = threading.Semaphore(0)
    release = threading.Event()

    def client(i):
        tls = None
        try:
            tls = open_tls_tunnel(proxy, context, hosts[i])[0]
            outcomes[i] = f"HTTP {one_request(tls, hosts[i], '/')}"
        except RuntimeError as e:  # the CONNECT's refusal
            outcomes[i] = f"refused: {str(e).split(': ', 1)[-1]}"
        except Exception as e:  # noqa: BLE001 - a timeout (a hang), a reset, a broken answer: all counted
            outcomes[i] = f"error: {type(e).__name__}: {e}"
        done.release()
        release.wait()
        if tls:
            tls.close()

    # The most the emulator held while they were open (connections idle for 5 s are closed).
    peak = {}
    sampling = threading.Event()

    def sample():
        while not sampling.wait(0.05):
            for key, value in process_counts(pid).items():
                peak[key] = max(peak.get(key, 0), value)

    threading.stack_size(256 * 1024)
    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(count)]
    sampler = threading.Thread(target=sample, daemon=True)
    before = process_counts(pid)
    sampler.start()
    started = time.perf_counter()
    for t in threads:
        t.start()
    for _ in range(count):
        done.acquire()
    elapsed = time.perf_counter() - started
    sampling.set()
    sampler.join()
    release.set()
    for t in threads:
        t.join(timeout=30)
    # The emulator's connection threads end when their sockets close: look until they are gone.
    deadline = time.monotonic() + 10
    while process_counts(pid)["threads"] > before["threads"] + 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    after = process_counts(pid)
    tally = {}
    for outcome in outcomes:
        tally[outcome] = tally.get(outcome, 0) + 1
    return {"elapsed_s": elapsed, "before": before, "peak": peak, "after": after, "outcomes": tally,
            "alive": os.path.exists(f"/proc/{pid}") and still_answers(ep)}


def still_answers(ep):
    try:
        connection = Paths(ep).direct("blob")
        get(connection, f"/{ACCOUNT}/{CONTAINER}/{BLOB}", {})
        return True
    except Exception:  # noqa: BLE001 - any failure means it no longer answers
        return False


def fmt_rounds(values, digits=3):
    return ", ".join(f"{v:.{digits}f}" for v in values)


def report_per_request(results, requests):
    print(f"\n## 1. Per request on a kept-alive connection ({requests} GETs a round, one at a time)\n")
    print("| path | p50 ms, every round | p90 ms, every round | requests/s, every round | "
          "client CPU us/req | server CPU us/req |")
    print("|---|---|---|---|---|---|")
    for name, rounds in results.items():
        per_s = ", ".join(f"{r['per_s']:.0f}" for r in rounds)
        print(f"| {name} | {fmt_rounds([r['p50_ms'] for r in rounds])} | {fmt_rounds([r['p90_ms'] for r in rounds])} | "
              f"{per_s} | "
              f"{statistics.median(r['client_cpu_us'] for r in rounds):.0f} | "
              f"{statistics.median(r['server_cpu_us'] for r in rounds):.0f} |")
    print("\n| through | baseline | what differs | p50 difference ms, every round | median | "
          "p90 difference ms, median | requests/s ratio, median |")
    print("|---|---|---|---|---|---|---|")
    for through, base, what in PAIRS:
        diffs = [a["p50_ms"] - b["p50_ms"] for a, b in zip(results[through], results[base])]
        p90 = statistics.median(a["p90_ms"] - b["p90_ms"] for a, b in zip(results[through], results[base]))
        ratio = statistics.median(a["per_s"] / b["per_s"] for a, b in zip(results[through], results[base]))
        print(f"| {through} | {base} | {what} | {fmt_rounds(diffs)} | {statistics.median(diffs):.3f} | {p90:.3f} | {ratio:.2f} |")


def report_handshakes(result, count):
    print(f"\n## 2. A new CONNECT + TLS handshake: a name never served against a cached one ({count} a round, medians)\n")
    print("| name | CONNECT to 200 ms, every round | handshake ms, every round | total ms, every round |")
    print("|---|---|---|---|")
    for kind in ("new", "cached"):
        rounds = result[kind]
        print(f"| {kind} | {fmt_rounds([r['connect_ms'] for r in rounds])} | "
              f"{fmt_rounds([r['handshake_ms'] for r in rounds])} | {fmt_rounds([r['total_ms'] for r in rounds])} |")
    new = statistics.median(r["total_ms"] for r in result["new"])
    cached = statistics.median(r["total_ms"] for r in result["cached"])
    print(f"\nmedian of the rounds: new {new:.2f} ms, cached {cached:.2f} ms, a new name costs {new - cached:.2f} ms more")


def report_memory(levels):
    print("\n## 3. Memory with distinct account names (a new tunnel and one request each, a fresh emulator)\n")
    print("| point | names served | VmRSS MiB | VmHWM MiB | threads | open files | batch s |")
    print("|---|---|---|---|---|---|---|")
    for label, served, counts, seconds in levels:
        print(f"| {label} | {served} | {counts['rss_mib']:.1f} | {counts['hwm_mib']:.1f} | {counts['threads']} | "
              f"{counts['fds']} | {seconds:.1f} |")


def report_concurrent(waves, count):
    print(f"\n## 4. {count} tunnels open at once (distinct new names, one request each, held until all answered), "
          f"{len(waves)} waves\n")
    print("| wave | seconds to the last answer | outcomes | VmRSS MiB before, peak, after | threads before, peak, after | "
          "open files before, peak, after | still answers |")
    print("|---|---|---|---|---|---|---|")
    for number, r in enumerate(waves, 1):
        outcomes = "; ".join(f"{k}: {v}" for k, v in sorted(r["outcomes"].items(), key=lambda kv: -kv[1]))
        rss = ", ".join(f"{r[point]['rss_mib']:.1f}" for point in ("before", "peak", "after"))
        threads = ", ".join(str(r[point]["threads"]) for point in ("before", "peak", "after"))
        fds = ", ".join(str(r[point]["fds"]) for point in ("before", "peak", "after"))
        print(f"| {number} | {r['elapsed_s']:.1f} | {outcomes} | {rss} | {threads} | {fds} | {r['alive']} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--handshakes", type=int, default=100, help="per kind and round")
    parser.add_argument("--names", type=int, default=1000, help="distinct names per memory batch")
    parser.add_argument("--batches", type=int, default=2)
    parser.add_argument("--concurrent", type=int, default=1000)
    parser.add_argument("--waves", type=int, default=2, help="of --concurrent tunnels, one after the other")
    parser.add_argument("--null-server", action="store_true")
    args = parser.parse_args()
    harness.EMULATOR = os.path.join(args.build, "emulator", "batchai-emulator")
    fresh = FreshNames(f"pb{os.getpid() % 10000:04d}")
    started = time.monotonic()
    print(f"proxy_overhead.py on {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}; "
          f"client: Python {sys.version.split()[0]} http.client, one connection; "
          f"load average {os.getloadavg()[0]:.1f}")
    with harness.Emulator() as emu:
        setup_blob(emu.endpoints)
        null_server = start_null_server(args.build) if args.null_server else None
        try:
            results = per_request(emu.endpoints, emu.process.pid, args.rounds, args.requests, null_server)
        finally:
            if null_server:
                os.kill(null_server[0].pid, signal.SIGTERM)
                null_server[0].wait()
        report_per_request(results, args.requests)
        report_handshakes(handshakes(emu.endpoints, args.rounds, args.handshakes, fresh), args.handshakes)
    with harness.Emulator() as emu:
        setup_blob(emu.endpoints)
        report_memory(memory_levels(emu.endpoints, emu.process.pid, args.names, args.batches, fresh))
        if args.concurrent:
            waves = [concurrent_tunnels(emu.endpoints, emu.process.pid, args.concurrent, fresh) for _ in range(args.waves)]
            report_concurrent(waves, args.concurrent)
    print(f"\n(whole run {time.monotonic() - started:.0f} s; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
