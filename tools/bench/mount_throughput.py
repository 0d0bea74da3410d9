#!/usr/bin/python3
"""A file share or a blob container through its FUSE mount on an emulated node, against the same
disk without FUSE, side by side in one run (the mounts' benchmark):

1. sequential write of SIZE MiB in 1 MiB writes (then fsync), and sequential read of it back in
   1 MiB reads, the page cache dropped before each read (echo 3 > /proc/sys/vm/drop_caches; as
   root), then the same read again from the page cache (an epoch's second pass over its data);
2. create + stat of N small files (one `open(O_CREAT)`/`close`/`stat` each) in one directory;
3. `ls -l` of that N-entry directory (the time of the command);
4. stat of N names that do not exist (through the mount: one FUSE round trip each);
5. create + write + close of N files of 1 KiB each in another directory;
6. (shares) the same interleaved in one directory: file by file, through the mount and straight
   into the share's directory, so that both meet the same file system state.

The mount is a node's cluster-level mount of a running emulator (found through GET
/emulator/nodes): `--volume share` (azureFileShares, fuse.bai-share) or `--volume container`
(azureBlobFileSystems, fuse.bai-blob: writes are staged and committed as a blob at close, so the
write figure includes that commit); or, with `--volume container-rest`, the same container mounted
by bai-blobfuse over the Blob REST API (as on a Slurm host that does not share the emulator's
mounts), with the same cache timeouts; or, with `--volume share-rest`, the share mounted by
bai-sharefuse over the File REST API (a Slurm host of --slurm-storage rest); "native" is a directory beside the emulator's data directory on
the same disk. Share targets: write and read at least 70% of native, creates at least 40%.

Small files are never removed between rounds (each round has its own directories; all go at the
end): this machine's ext4 has no journal, and there a create within about 30 s of many unlinks
scans past every recently freed inode (ext4's recently_deleted()), which made whichever side came
after a removal 5-20x slower and the ratios meaningless.

Rounds alternate which of mount and native goes first, and the ratios are geometric means of the
rounds' ratios: on this VM a write into memory that the previous measure has just freed runs
several times faster than one into memory the VM has handed back to its host, so whoever goes
second wins each round by about as much as the other wins the next.

With --inside-job, the measure is a job's instead: a shell loop in a job on the node writes the
small files on the share's mount and in the job's local temporary directory, alternating.

Usage: tools/bench/mount_throughput.py [--volume share|container|container-rest|share-rest] [--build DIR] [--size-mib 1024]
       [--files 10000] [--repeat 4] [--no-passthrough] [--share-mounts fuse|bind] [--inside-job]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402

SUB = harness.SUBSCRIPTION
WS = f"/subscriptions/{SUB}/resourceGroups/bench/providers/Microsoft.BatchAI/workspaces/ws"
MIB = 1 << 20
SMALL_FILE = 1024


def drop_caches():
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def quiet_disk():
    """Each measure starts with nothing left to write back (the previous one's files, the
    emulator's index and its WAL checkpoint), so that it does not pay for what came before."""
    os.sync()
    time.sleep(1)


def sequential(directory, size_mib):
    quiet_disk()
    path = os.path.join(directory, "seq.bin")
    block = os.urandom(MIB)
    started = time.perf_counter()
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    for _ in range(size_mib):
        os.write(fd, block)
    os.fsync(fd)
    os.close(fd)
    write_s = time.perf_counter() - started
    dropped = drop_caches()
    read_s = read_through(path)
    cached_s = read_through(path)  # again: from the page cache now
    os.unlink(path)
    return size_mib / write_s, size_mib / read_s, size_mib / cached_s, dropped


def read_through(path):
    started = time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    while os.read(fd, MIB):
        pass
    os.close(fd)
    return time.perf_counter() - started


def small_files(directory, count, round_number):
    d = os.path.join(directory, f"many{round_number}")
    os.makedirs(d)
    quiet_disk()
    started = time.perf_counter()
    for i in range(count):
        p = os.path.join(d, f"f{i:05d}.txt")
        os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
        os.stat(p)
    create_s = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run(["ls", "-l", d], stdout=subprocess.DEVNULL, check=True)
    ls_s = time.perf_counter() - started
    return count / create_s, ls_s * 1000


def missing_lookups(directory, count, round_number):
    """stat(2) of `count` names that do not exist: through the mount each is one FUSE round trip
    (a LOOKUP answered with a negative entry), the floor under every other small-file figure."""
    d = os.path.join(directory, f"many{round_number}")
    started = time.perf_counter()
    for i in range(count):
        try:
            os.stat(os.path.join(d, f"missing{i:05d}"))
        except FileNotFoundError:
            pass
    return (time.perf_counter() - started) / count * 1e6


def interleaved_writes(mount_dir, backing_dir, count):
    """Create + write 1 KiB + close of 2 x `count` files in ONE directory, alternating file by file
    between the mount's path and the same directory reached directly (the share's directory in
    the store): both sides meet the same file system state, so ext4's cost for a new inode (which
    on this machine's journal-less ext4 swings 10x with recently unlinked inodes nearby) cancels,
    and what is left is the mount's own cost. Returns (mount us per file, direct us per file)."""
    os.makedirs(os.path.join(backing_dir, "interleaved"))
    quiet_disk()
    body = b"x" * SMALL_FILE
    spent = [0.0, 0.0]
    for i in range(2 * count):
        side = i % 2
        path = os.path.join(mount_dir if side == 0 else backing_dir, "interleaved", f"f{i:06d}.bin")
        started = time.perf_counter()
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, body)
        os.close(fd)
        spent[side] += time.perf_counter() - started
    return spent[0] / count * 1e6, spent[1] / count * 1e6


def small_writes(directory, count, round_number):
    """Create, write SMALL_FILE bytes and close each of `count` new files (checkpoint shards, an
    unpacked dataset): files per second."""
    d = os.path.join(directory, f"written{round_number}")
    os.makedirs(d)
    quiet_disk()
    body = b"x" * SMALL_FILE
    started = time.perf_counter()
    for i in range(count):
        fd = os.open(os.path.join(d, f"f{i:05d}.bin"), os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, body)
        os.close(fd)
    return count / (time.perf_counter() - started)


# The in-job loop: a shell writing FILES small files (echo x > f$i, a builtin: no process per
# file) and an `ls -l` of them, on the share's mount and in the job's local temporary directory,
# ROUNDS times, alternating which goes first; then the same files written file by file into both,
# alternating; one line per round: share create us, share ls us, local create us, local ls us,
# interleaved share us, interleaved local us.
JOB_LOOP = r"""
share=$1; local=$2; files=$3; rounds=$4
now() { date +%s%N; }
measure() {  # measure DIR: "create-ms ls-ms"
  mkdir -p "$1"; sync; sleep 1
  t0=$(now); for i in $(seq "$files"); do echo x > "$1/f$i"; done; t1=$(now)
  ls -l "$1" > /dev/null; t2=$(now)
  echo "$(( (t1 - t0) / 1000 )) $(( (t2 - t1) / 1000 ))"
}
us() { local t=${EPOCHREALTIME/./}; echo $((10#$t)); }
# File by file, alternating which side goes first: both directories meet the same disk state, so
# ext4's cost for a new inode (which swings 10x on this machine's journal-less ext4) cancels.
# $EPOCHREALTIME is a builtin (no process per timestamp); its cost is the same on both sides.
interleaved() {  # interleaved SHARE-DIR LOCAL-DIR: "share-us local-us"
  mkdir -p "$1" "$2"; sync; sleep 1
  local s=0 l=0 a b c
  for i in $(seq "$files"); do
    if [ $((i % 2)) = 1 ]; then
      a=${EPOCHREALTIME/./}; echo x > "$1/f$i"; b=${EPOCHREALTIME/./}; echo x > "$2/f$i"; c=${EPOCHREALTIME/./}
      s=$((s + 10#$b - 10#$a)); l=$((l + 10#$c - 10#$b))
    else
      a=${EPOCHREALTIME/./}; echo x > "$2/f$i"; b=${EPOCHREALTIME/./}; echo x > "$1/f$i"; c=${EPOCHREALTIME/./}
      l=$((l + 10#$b - 10#$a)); s=$((s + 10#$c - 10#$b))
    fi
  done
  echo "$s $l"
}
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then s=$(measure "$share/r$r"); l=$(measure "$local/r$r")
  else l=$(measure "$local/r$r"); s=$(measure "$share/r$r"); fi
  echo "$s $l $(interleaved "$share/i$r" "$local/i$r")"
done
"""


def inside_job(call, mount, files, rounds):
    """The loop above in a job on the cluster's node: its share mount against its local temporary
    directory (the node's disk). Returns [(share create us, share ls us, local create us, local ls
    us, interleaved share us, interleaved local us)] per round."""
    with open(os.path.join(mount, "job_loop.sh"), "w") as f:
        f.write(JOB_LOOP)
    vol = "$AZ_BATCHAI_MOUNT_ROOT/vol"
    call("PUT", f"{WS}/experiments/e", {})
    call("PUT", f"{WS}/experiments/e/jobs/loop", {"properties": {
        "cluster": {"id": f"{WS}/clusters/c"}, "nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_TEMP",
        "customToolkitSettings": {"commandLine": f"bash {vol}/job_loop.sh {vol}/jobloop $AZ_BATCHAI_JOB_TEMP/jobloop "
                                                 f"{files} {rounds} > {vol}/job_loop.txt"}}})
    job = harness.wait_for(lambda: (lambda p: p if p.get("executionState") in ("succeeded", "failed") else None)(
        call("GET", f"{WS}/experiments/e/jobs/loop").json()["properties"]), timeout=1800, what="the in-job loop")
    if job["executionState"] != "succeeded":
        sys.exit(f"the in-job loop failed: {job.get('executionInfo')}")
    with open(os.path.join(mount, "job_loop.txt")) as f:
        return [tuple(int(x) for x in line.split()) for line in f if line.strip()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--volume", choices=["share", "container", "container-rest", "share-rest"], default="share")
    parser.add_argument("--no-passthrough", action="store_true",
                        help="start the emulator with --no-passthrough (every read and write served by it)")
    parser.add_argument("--share-mounts", choices=["fuse", "bind"], default="fuse",
                        help="the emulator's --share-mounts: FUSE mounts, or bind mounts of the shares' directories")
    parser.add_argument("--inside-job", action="store_true",
                        help="measure from inside a job instead: a shell loop writing --files small files and an "
                             "ls -l, on the share's mount and in the job's local temporary directory")
    args = parser.parse_args()
    if args.repeat % 2:
        parser.error("--repeat must be even: the rounds alternate which of mount and native goes first")
    harness.EMULATOR = os.path.join(args.build, "emulator", "batchai-emulator")
    extra = (["--no-passthrough"] if args.no_passthrough else []) + ["--share-mounts", args.share_mounts]
    with harness.Emulator(args=["--lro-delay", "0", "--gpus", "none"] + extra) as emu:
        from azure.storage.blob import BlobServiceClient
        from azure.storage.fileshare import ShareServiceClient
        ep = emu.endpoints

        def call(method, path, body=None, api_version="2018-05-01"):
            r = harness.arm_call(ep, method, path, body, api_version=api_version)
            if r.status_code >= 400:
                raise RuntimeError(f"{method} {path}: {r.status_code} {r.text}")
            return r

        if args.volume in ("share", "share-rest"):
            with ShareServiceClient.from_connection_string(harness.connection_string(ep)) as shares:
                shares.create_share("bench")
            volumes = {"azureFileShares": [{
                "accountName": harness.DEV_ACCOUNT,
                "azureFileUrl": f"https://{harness.DEV_ACCOUNT}.file.core.windows.net/bench",
                "relativeMountPath": "vol", "credentials": {"accountKey": harness.DEV_KEY}}]}
        else:
            with BlobServiceClient.from_connection_string(harness.connection_string(ep)) as blobs:
                blobs.create_container("bench")
            volumes = {"azureBlobFileSystems": [{
                "accountName": harness.DEV_ACCOUNT, "containerName": "bench",
                "relativeMountPath": "vol", "credentials": {"accountKey": harness.DEV_KEY}}]}
        if args.volume in ("container-rest", "share-rest"):
            return over_rest(args, emu)
        call("PUT", f"/subscriptions/{SUB}/resourcegroups/bench", {"location": "eastus"}, api_version="2021-04-01")
        call("PUT", WS, {"location": "eastus"})
        call("PUT", f"{WS}/clusters/c", {"properties": {
            "vmSize": "STANDARD_D1", "scaleSettings": {"manual": {"targetNodeCount": 1}},
            "userAccountSettings": {"adminUserName": "u", "adminUserPassword": "Pw-123456"},
            "nodeSetup": {"mountVolumes": volumes}}})
        harness.wait_for(lambda: call("GET", f"{WS}/clusters/c").json()["properties"]
                         .get("nodeStateCounts", {}).get("idleNodeCount") == 1, timeout=60, what="the node")
        node = call("GET", "/emulator/nodes", api_version=None).json()["value"][0]
        mount = os.path.join(node["root"], "mounts", "vol")
        kind = "fuse.bai-share" if args.volume == "share" else "fuse.bai-blob"
        if args.volume == "share" and args.share_mounts == "bind":
            kind = ""  # the disk's own file system type
        with open("/proc/self/mounts") as f:
            if f" {mount} {kind}" not in f.read():
                sys.exit(f"{mount} is not mounted as {kind or 'a bind mount'} (root and /dev/fuse are needed)")
        if args.inside_job:
            rounds = inside_job(call, mount, args.files, args.repeat)
            print(f"machine: {os.cpu_count()} cores; emulator {harness.EMULATOR}; --share-mounts {args.share_mounts}; "
                  f"a job's shell loop (echo x > f$i) over {args.files} files, then ls -l; {args.repeat} rounds, "
                  "share and local temp taking turns to go first\n")
            # Each line: share create us, share ls us, local create us, local ls us (one directory
            # after the other), then interleaved share us, interleaved local us.
            print("| round | share: create us/file | local: create us/file | share / local speed | share ls -l ms | "
                  "local ls -l ms | interleaved: share us/file | interleaved: local us/file | interleaved share / local |")
            print("|---|---|---|---|---|---|---|---|---|")
            for n, (sc, sl, lc, ll, si, li) in enumerate(rounds, 1):
                print(f"| {n} | {sc / args.files:.1f} | {lc / args.files:.1f} | {lc / sc * 100:.0f}% | {sl / 1000:.1f} | "
                      f"{ll / 1000:.1f} | {si / args.files:.1f} | {li / args.files:.1f} | {li / si * 100:.0f}% |")
            speed = statistics.geometric_mean([r[2] / r[0] for r in rounds])
            listing = statistics.geometric_mean([r[3] / r[1] for r in rounds])
            interleaved_speed = statistics.geometric_mean([r[5] / r[4] for r in rounds])
            print(f"\nshare / local: creates {speed * 100:.0f}% (one directory after the other), "
                  f"{interleaved_speed * 100:.0f}% (file by file, alternating), ls -l {listing * 100:.0f}% "
                  "(geometric means of the rounds)")
            return
        if args.volume == "share":
            backing = os.path.join(emu.location, "storage", harness.DEV_ACCOUNT, "shares", "bench")
            interleaved = interleaved_writes(mount, backing, args.files)
        measure(args, emu, mount, interleaved if args.volume == "share" else None)


def over_rest(args, emu):
    """The container mounted by bai-blobfuse, or the share by bai-sharefuse (their configs as the
    engine writes one for a host)."""
    share = args.volume == "share-rest"
    name = "bai-sharefuse" if share else "bai-blobfuse"
    work = tempfile.mkdtemp(prefix="bai-bench-rest-", dir=os.path.dirname(emu.location))
    mount = os.path.join(work, "mnt")
    os.mkdir(mount)
    config = os.path.join(work, "remote.cfg")
    with open(config, "w") as f:
        f.write(f"accountName {harness.DEV_ACCOUNT}\naccountKey {harness.DEV_KEY}\n" +
                (f"shareName bench\nfileEndpoint {emu.endpoints['file']}/{harness.DEV_ACCOUNT}\n" if share else
                 f"containerName bench\nblobEndpoint {emu.endpoints['blob']}/{harness.DEV_ACCOUNT}\n"))
    program = subprocess.Popen([os.path.join(os.path.dirname(os.path.dirname(harness.EMULATOR)), "fuse_mounts", name),
                                mount, f"--config-file={config}", f"--tmp-path={os.path.join(work, 'tmp')}"])
    try:
        harness.wait_for(lambda: os.path.ismount(mount) or program.poll() is not None, what=f"the {name} mount")
        if program.poll() is not None:
            sys.exit(f"{name} did not mount (root and /dev/fuse are needed)")
        measure(args, emu, mount, None)
    finally:
        program.terminate()
        program.wait(30)
        shutil.rmtree(work, ignore_errors=True)


def measure(args, emu, mount, interleaved):
    native = tempfile.mkdtemp(prefix="bai-bench-native-", dir=os.path.dirname(emu.location))
    try:
        # This VM's disk and memory are noisy (the native figures move by up to 5x between
        # runs, and a write into memory just freed by the previous measure's file runs several
        # times faster than one into memory the VM handed back): each measure runs --repeat
        # times, mount and native alternating which goes first, and the medians are compared.
        samples = {"fw": [], "fr": [], "fk": [], "nw": [], "nr": [], "nk": [], "fc": [], "fl": [], "nc": [], "nl": [],
                   "fs": [], "ns": [], "fm": [], "nm": []}
        dropped = True
        for round_number in range(args.repeat):
            order = [("f", mount), ("n", native)]
            if round_number % 2:
                order.reverse()
            for key, directory in order:
                w, r, k, dropped_now = sequential(directory, args.size_mib)
                dropped = dropped and dropped_now
                samples[key + "w"].append(w)
                samples[key + "r"].append(r)
                samples[key + "k"].append(k)
            for key, directory in order:
                c, ls = small_files(directory, args.files, round_number)
                samples[key + "c"].append(c)
                samples[key + "l"].append(ls)
            for key, directory in order:
                samples[key + "m"].append(missing_lookups(directory, args.files, round_number))
            for key, directory in order:
                samples[key + "s"].append(small_writes(directory, args.files, round_number))
        med = {k: statistics.median(v) for k, v in samples.items()}
        def round_ratios(measure, higher_better=True):
            pairs = zip(samples["f" + measure], samples["n" + measure])
            return [f / n if higher_better else n / f for f, n in pairs]

        rows = [
            (f"sequential write {args.size_mib} MiB, 1 MiB writes + fsync, MiB/s", "w", True),
            (f"sequential read {args.size_mib} MiB, 1 MiB reads" +
             ("" if dropped else " (page cache NOT dropped: not root)") + ", MiB/s", "r", True),
            ("the same read again (page cache warm), MiB/s", "k", True),
            (f"create + stat of {args.files} files, files/s", "c", True),
            (f"ls -l of {args.files} entries, ms", "l", False),
            (f"create + write {SMALL_FILE} B + close of {args.files} files, files/s", "s", True),
            (f"stat of {args.files} missing names (one round trip each through the mount), us each", "m", False),
        ]
        # Whoever goes second in a round writes into memory the first has just freed, several
        # times faster on this VM; rounds alternate, so the geometric mean of the rounds'
        # ratios cancels that advantage (a median of alternating values would not).
        rows = [(label, med["f" + m], med["n" + m], statistics.geometric_mean(round_ratios(m, better)),
                 round_ratios(m, better)) for label, m, better in rows]
        spread = {k: (min(v), max(v)) for k, v in samples.items()}
    finally:
        shutil.rmtree(native, ignore_errors=True)
    print(f"machine: {os.cpu_count()} cores; emulator {harness.EMULATOR}; mount {mount}")
    print(f"medians of {args.repeat} rounds, mount and native taking turns to go first; ranges: " +
          ", ".join(f"{k} {lo:.0f}-{hi:.0f}" for k, (lo, hi) in spread.items()) + "\n")
    mount_kind = ("bind" if args.volume == "share" and args.share_mounts == "bind" else
                  {"container-rest": "bai-blobfuse (REST)", "share-rest": "bai-sharefuse (REST)"}.get(args.volume, "FUSE"))
    print(f"| measure | {mount_kind} {args.volume} mount (median) | native disk (median) | mount / native: geometric mean "
          "of the rounds' ratios (each round's, mount first in the 1st, 3rd...) |")
    print("|---|---|---|---|")
    for label, fuse, nat, ratio, ratios in rows:
        each = ", ".join(f"{r * 100:.0f}" for r in ratios)
        print(f"| {label} | {fuse:.1f} | {nat:.1f} | {ratio * 100:.0f}% ({each}) |")
    print("\n(ls -l and the stat of missing names: the ratio is native time / mount time)")
    if interleaved:
        through, direct = interleaved
        print(f"\ninterleaved in one directory (create + write {SMALL_FILE} B + close, {args.files} files each way, "
              f"alternating): through the mount {through:.1f} us per file, straight into the share's directory "
              f"{direct:.1f} us: mount / direct speed {direct / through * 100:.0f}%")


if __name__ == "__main__":
    main()
