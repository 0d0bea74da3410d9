#!/usr/bin/python3
"""Small Blob calls with a neutral load generator: the emulator against Azurite (npm), side by side
in one run, with wrk (a C client that is not the bottleneck) and one connection per wrk thread.

  /usr/bin/python3 tools/bench/blob_wrk.py [--rounds 3] [--seconds 3] [--connections 1 8] [--markdown OUT]
                                          [--baseline OTHER_EMULATOR]

Calls, each on both servers: 4 KiB GET of a blob in a public container (anonymous); 4 KiB Put Blob
through a container SAS URL; 4 KiB Append Block (SAS; spread over 64 append blobs, each far from
the 50,000 blocks a blob takes); 4 KiB Put Page (SAS; over the 256 pages of a 1 MiB page blob);
Lease Blob acquire then release (SAS; one blob per connection; a pair counts as one operation).
Each round runs every call on both servers, the one that goes first alternating between rounds;
the table has every round's figure, the medians and the ratio of the medians. Installs wrk with
apt-get and azurite@3.37.0 with npm (into ~/.cache/bai-bench/azurite) when missing; starts both
servers on free loopback ports with fresh data directories and stops them by PID. With
--baseline, another build's batchai-emulator is a third server in every round (its order
alternating with the others'), and the table compares this build with it too. Not part of the
tests.
"""
import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from storage_side_by_side import KEY, conn, start_azurite, start_emulator  # noqa: E402

ACCOUNT = "devstoreaccount1"
LEASE_ID = "5b1b3a0e-0000-4000-8000-00000000beef"

# wrk scripts: every thread has one connection and its own id (set in setup).
COMMON = """
local counter = 0
local id = 0
function setup(thread)
  thread:set("id", _G.next_id or 0)
  _G.next_id = (_G.next_id or 0) + 1
end
function init(args) id = tonumber(wrk.thread:get("id")) or 0 end
"""
SCRIPTS = {
    "put": """
wrk.method = "PUT"
wrk.body = string.rep("x", 4096)
wrk.headers["x-ms-blob-type"] = "BlockBlob"
wrk.headers["x-ms-version"] = "2021-06-08"
""",
    "append": COMMON + """
local body = string.rep("a", 4096)
function request()
  counter = counter + 1
  local path = wrk.path:gsub("/log%?", "/log" .. ((counter * 7 + id) % 64) .. "?")
  return wrk.format("PUT", path .. "&comp=appendblock",
                    {["x-ms-version"] = "2021-06-08", ["Content-Length"] = "4096"}, body)
end
""",
    "page": COMMON + """
local body = string.rep("p", 4096)
function request()
  counter = counter + 1
  local first = ((counter + id * 31) % 256) * 4096
  return wrk.format("PUT", wrk.path .. "&comp=page",
                    {["x-ms-version"] = "2021-06-08", ["x-ms-page-write"] = "update",
                     ["x-ms-range"] = "bytes=" .. first .. "-" .. (first + 4095), ["Content-Length"] = "4096"}, body)
end
""",
    # The next action follows the last answer (wrk calls request() once more at start, unsent).
    "lease": COMMON + """
local held = false
function response(status, headers, body)
  if status == 201 then held = true elseif status == 200 then held = false end
end
function request()
  local path = wrk.path:gsub("/lease%?", "/lease" .. id .. "?") .. "&comp=lease"
  local headers = {["x-ms-version"] = "2021-06-08", ["Content-Length"] = "0"}
  if not held then
    headers["x-ms-lease-action"] = "acquire"
    headers["x-ms-lease-duration"] = "15"
    headers["x-ms-proposed-lease-id"] = "LEASE_ID"
  else
    headers["x-ms-lease-action"] = "release"
    headers["x-ms-lease-id"] = "LEASE_ID"
  end
  return wrk.format("PUT", path, headers, "")
end
""".replace("LEASE_ID", LEASE_ID),
}
CALLS = ["get", "put", "append", "page", "lease"]


def ensure_wrk():
    if shutil.which("wrk") is None:
        print("installing wrk", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=True, stdout=subprocess.DEVNULL)


def prepare(endpoint, connections):
    """Containers and blobs the calls use; the URL of each call on this server."""
    from azure.storage.blob import BlobServiceClient, ContainerSasPermissions, generate_container_sas
    service = BlobServiceClient.from_connection_string(conn(blob=endpoint))
    public = service.create_container("pub", public_access="blob")
    public.get_blob_client("4k").upload_blob(b"g" * 4096)
    work = service.create_container("work")
    for i in range(64):
        work.get_blob_client(f"log{i}").create_append_blob()
    work.get_blob_client("disk").create_page_blob(1 << 20)
    for i in range(max(connections)):
        work.get_blob_client(f"lease{i}").upload_blob(b"l")
    sas = generate_container_sas(ACCOUNT, "work", account_key=KEY, permission=ContainerSasPermissions(
        read=True, add=True, create=True, write=True), expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=4))
    base = f"{endpoint}/{ACCOUNT}"
    return {"get": f"{base}/pub/4k", "put": f"{base}/work/put?{sas}", "append": f"{base}/work/log?{sas}",
            "page": f"{base}/work/disk?{sas}", "lease": f"{base}/work/lease?{sas}"}


def run_wrk(url, script, connections, seconds):
    argv = ["wrk", "-t", str(connections), "-c", str(connections), "-d", f"{seconds}s", "--latency"]
    if script:
        argv += ["-s", script]
    out = subprocess.run(argv + [url], check=True, capture_output=True, text=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    if errors or socket_errors:
        raise RuntimeError(f"wrk saw failures on {url.split('?')[0]}:\n{out}")
    return rate


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=int, default=3)
    p.add_argument("--connections", type=int, nargs="+", default=[1, 8])
    p.add_argument("--azurite-prefix", default=os.path.expanduser("~/.cache/bai-bench/azurite"))
    p.add_argument("--markdown", help="also write the table here")
    p.add_argument("--baseline", help="another build's batchai-emulator, measured beside this one")
    args = p.parse_args()
    ensure_wrk()
    workdir = tempfile.mkdtemp(prefix="bai-blob-wrk-")
    servers = []
    try:
        emulator, endpoints = start_emulator(workdir)
        servers.append(emulator)
        azurite, azurite_url = start_azurite(workdir, args.azurite_prefix)
        servers.append(azurite)
        urls = {"emulator": prepare(endpoints["blob"], args.connections), "azurite": prepare(azurite_url, args.connections)}
        if args.baseline:
            baseline, baseline_endpoints = start_emulator(workdir, os.path.abspath(args.baseline), "baseline")
            servers.append(baseline)
            urls["baseline"] = prepare(baseline_endpoints["blob"], args.connections)
        scripts = {}
        for name, text in SCRIPTS.items():
            path = os.path.join(workdir, f"{name}.lua")
            with open(path, "w") as f:
                f.write(text)
            scripts[name] = path
        rates = {}  # (call, connections, server) -> [ops/s per round]
        for round_ in range(args.rounds):
            order = [name for name in ("emulator", "azurite", "baseline") if name in urls]
            if round_ % 2 == 1:
                order.reverse()
            for call in CALLS:
                for c in args.connections:
                    for server in order:
                        rate = run_wrk(urls[server][call], scripts.get(call), c, args.seconds)
                        if call == "lease":
                            rate /= 2  # acquire + release
                        rates.setdefault((call, c, server), []).append(rate)
                        print(f"round {round_ + 1} {call} c={c} {server}: {rate:.0f}/s", file=sys.stderr)
        with_baseline = "baseline" in urls
        lines = ["| call | connections | emulator ops/s (rounds) | Azurite ops/s (rounds) | emulator / Azurite |" +
                 (" baseline ops/s (rounds) | emulator / baseline |" if with_baseline else ""),
                 "|---|---|---|---|---|" + ("---|---|" if with_baseline else "")]
        fmt = lambda v: f"{statistics.median(v):.0f} ({', '.join(f'{x:.0f}' for x in v)})"  # noqa: E731
        for call in CALLS:
            for c in args.connections:
                e, a = rates[(call, c, "emulator")], rates[(call, c, "azurite")]
                line = f"| {call} | {c} | {fmt(e)} | {fmt(a)} | {statistics.median(e) / statistics.median(a):.1f}x |"
                if with_baseline:
                    b = rates[(call, c, "baseline")]
                    line += f" {fmt(b)} | {statistics.median(e) / statistics.median(b):.2f} |"
                lines.append(line)
        table = "\n".join(lines)
        print(table)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(table + "\n")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
