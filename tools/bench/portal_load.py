#!/usr/bin/python3
"""The portal under load (not in CI): N Batch AI jobs stored (default 10,000, queued on a cluster
without nodes), then, in a headless chromium, the time to the first paint and to the complete
first page of the job list ("1-100 of N" drawn) from a fresh navigation, each of --rounds; the
portal API's answer times for that page and the overview; and the emulator's CPU while 5 browsers
follow a job's live log (a line every 0.2 s onto a share) against the same interval with none,
alternating.

Usage: tools/bench/portal_load.py [--build DIR] [--jobs N] [--rounds R] [--browsers B] [--seconds S]
"""
import argparse
import concurrent.futures
import os
import shutil
import statistics
import sys
import time
import urllib.parse

import requests
import urllib3

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402
from arm_latency import WS, create_workspace, job_body  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

urllib3.disable_warnings()


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--ignore-certificate-errors", "--window-size=1280,900", "--disable-extensions"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def create_jobs(ep, count):
    session = requests.Session()
    url = ep["arm"] + WS + "/experiments/e/jobs/j{n}?api-version=2018-05-01"
    headers = {"Authorization": "Bearer bench"}

    def one(n):
        r = session.put(url.format(n=n), json=job_body(), headers=headers, timeout=60, verify=ep["ca_cert"])
        assert r.status_code in (200, 201, 202), r.text
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(count)))


def page_times(driver, url, expected, rounds):
    rows = []
    for _ in range(rounds):
        driver.get("about:blank")
        driver.get(url)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = driver.execute_script(
                "const e = document.querySelector('#shown'); return e && e.innerText === arguments[0] ? performance.now() : null;",
                expected)
            if done is not None:
                break
            time.sleep(0.005)
        else:
            raise TimeoutError("the job list never showed " + expected)
        paint = driver.execute_script(
            "const p = performance.getEntriesByName('first-contentful-paint')[0]; return p ? p.startTime : null;")
        rows.append((paint, done))
    return rows


def api_ms(ep, path, times=10):
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        r = requests.get(ep["arm"] + path, verify=ep["ca_cert"], timeout=60)
        spent.append((time.perf_counter() - started) * 1000)
        assert r.status_code == 200, r.text
    return statistics.median(spent), min(spent), max(spent)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--browsers", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()
    harness.EMULATOR = os.path.join(args.build, "emulator", "batchai-emulator")
    with harness.Emulator(args=["--lro-delay", "0", "--gpus", "none"]) as emu:
        ep = emu.endpoints
        create_workspace(ep)
        started = time.monotonic()
        create_jobs(ep, args.jobs)
        print(f"{args.jobs} jobs created in {time.monotonic() - started:.1f} s; {os.cpu_count()} cores; "
              f"emulator {harness.EMULATOR}\n")

        driver = browser()
        try:
            rows = page_times(driver, ep["arm"] + "/portal/#/resources?type=job", f"1-100 of {args.jobs}", args.rounds)
        finally:
            driver.quit()
        print("| round | first contentful paint, ms | job list's first page drawn, ms |")
        print("|---|---|---|")
        for n, (paint, done) in enumerate(rows, 1):
            print(f"| {n} | {paint:.0f} | {done:.0f} |")
        for name, path in (("the job list's first page", "/portal/api/resources?type=job"),
                           ("the overview", "/portal/api/overview")):
            med, lo, hi = api_ms(ep, path)
            print(f"\n/portal/api for {name}: median {med:.1f} ms ({lo:.1f}-{hi:.1f}, 10 requests)", end="")
        print()

        # A job writing a line every 0.2 s onto a share, followed by 0 or B browsers.
        from azure.storage.fileshare import ShareServiceClient
        ShareServiceClient.from_connection_string(harness.connection_string(ep)).create_share("logs")
        live = {"properties": {"vmSize": "STANDARD_D1", "scaleSettings": {"manual": {"targetNodeCount": 1}},
                               "nodeSetup": {"mountVolumes": {"azureFileShares": [{
                                   "accountName": harness.DEV_ACCOUNT, "relativeMountPath": "afs",
                                   "azureFileUrl": f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/logs",
                                   "credentials": {"accountKey": harness.DEV_KEY}}]}},
                               "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "Pw-123456"}}}
        harness.wait_for_operation(ep, harness.arm_call(ep, "PUT", f"{WS}/clusters/live", live), timeout=60)
        duration = args.seconds * 4 + 60
        body = {"properties": {"cluster": {"id": f"{WS}/clusters/live"}, "nodeCount": 1,
                               "stdOutErrPathPrefix": "$AZ_BATCHAI_MOUNT_ROOT/afs",
                               "customToolkitSettings": {"commandLine": f"for i in $(seq {duration * 5}); do echo line $i; sleep 0.2; done"}}}
        harness.arm_call(ep, "PUT", f"{WS}/experiments/e/jobs/talker", body)
        job_id = WS + "/experiments/e/jobs/talker"
        harness.wait_for(lambda: harness.arm_call(ep, "GET", f"{WS}/experiments/e/jobs/talker").json()["properties"]
                         .get("executionState") == "running", timeout=60, what="the talking job")
        time.sleep(3)
        url = ep["arm"] + "/portal/#/output?" + urllib.parse.urlencode({"id": job_id, "dir": "stdouterr", "path": "stdout.txt"})
        followers = []
        samples = {0: [], args.browsers: []}
        try:
            for n in range(args.browsers):
                followers.append(browser())
            for rnd in range(4):
                count = 0 if rnd % 2 == 0 else args.browsers
                for i, d in enumerate(followers):
                    d.get(url if i < count else "about:blank")
                time.sleep(2)
                before = cpu_seconds(emu.process.pid)
                time.sleep(args.seconds)
                samples[count].append((cpu_seconds(emu.process.pid) - before) / args.seconds * 100)
        finally:
            for d in followers:
                d.quit()
        print(f"\nthe emulator's CPU while a job writes a line every 0.2 s, {args.seconds} s a round "
              "(alternating; % of one core):")
        for count, values in samples.items():
            print(f"- {count} browsers following its log: " + ", ".join(f"{v:.1f}%" for v in values))


if __name__ == "__main__":
    main()
