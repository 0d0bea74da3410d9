"""kill -9 at an arbitrary moment during uploads, appends and page writes: after a restart on the
same data directory every acknowledged write is there, and no blob, append, page range or file
range is half written."""
import hashlib
import os
import shutil
import signal
import tempfile
import threading
import time
import unittest

from harness import DEV_ACCOUNT, Emulator
from raw_storage import RawClient

A = "/" + DEV_ACCOUNT
RANGE = 64 * 1024


def body(name, version):
    """Deterministic content; sizes cross the 64 KiB inline limit both ways."""
    seed = hashlib.sha256(f"{name}/{version}".encode()).digest()
    size = [100, 5000, 70_000, 700_000, 2_500_000][(seed[0] + version) % 5]
    return (seed * (size // len(seed) + 1))[:size]


def range_bytes(index, round_):
    return bytes([(index * 7 + round_ * 13) % 251 + 1]) * RANGE


def write_ranges_until_stopped(put, stop, acknowledged, in_flight):
    """Writes the 16 ranges of RANGE bytes in rounds, put(index, body, "bytes=A-B") returning the
    status, until `stop` is set or the emulator stops answering; records the last acknowledged
    round of each range and the round in flight when it died."""
    round_ = 0
    while not stop.is_set():
        for index in range(16):
            in_flight[index] = round_
            try:
                status = put(index, range_bytes(index, round_), f"bytes={index * RANGE}-{(index + 1) * RANGE - 1}")
            except OSError:
                return
            if status != 201:
                return
            acknowledged[index] = round_
            del in_flight[index]
        round_ += 1


def run_until_killed(emu, workers, seconds, stop):
    """Runs the writers, kills the emulator with SIGKILL after `seconds`, then stops them."""
    threads = [threading.Thread(target=w) for w in workers]
    for t in threads:
        t.start()
    time.sleep(seconds)
    emu.send(signal.SIGKILL)
    emu.process.wait()
    stop.set()
    for t in threads:
        t.join(timeout=30)


class CrashDuringUploads(unittest.TestCase):
    def setUp(self):
        self.location = tempfile.mkdtemp(prefix="bai-crash-")
        self.addCleanup(shutil.rmtree, self.location, True)

    def start(self):
        emu = Emulator(self.location).start()
        self.addCleanup(emu.close)
        return emu

    def upload_until_killed(self, emu, kill_after, where):
        client = RawClient(emu.endpoints["blob"])
        files = RawClient(emu.endpoints["file"])
        acknowledged = {}   # blob name -> last acknowledged version
        in_flight = {}      # blob name -> version being written when the emulator died
        ranges = {}         # range index -> last acknowledged round
        ranges_in_flight = {}
        stop = threading.Event()

        def blobs():
            i = 0
            while not stop.is_set():
                name = f"b{i % 40}"
                version = acknowledged.get(name, -1) + 1
                in_flight[name] = version
                try:
                    r = client.request("PUT", f"{A}/{where}/{name}", body=body(name, version),
                                       headers={"x-ms-blob-type": "BlockBlob"})
                except OSError:
                    return
                if r.status != 201:
                    return
                acknowledged[name] = version
                del in_flight[name]
                i += 1

        def file_ranges():
            write_ranges_until_stopped(
                lambda index, data, span: files.request("PUT", f"{A}/{where}/ranges.bin", [("comp", "range")],
                                                        body=data,
                                                        headers={"x-ms-write": "update", "x-ms-range": span}).status,
                stop, ranges, ranges_in_flight)

        run_until_killed(emu, [blobs, file_ranges], kill_after, stop)
        return acknowledged, in_flight, ranges, ranges_in_flight

    def check_ranges(self, content, acknowledged, in_flight, what):
        """Each of the 16 ranges holds its last acknowledged round, or the one in flight, or zeros
        if it was never written: never a half-written one."""
        for index in range(16):
            piece = content[index * RANGE:(index + 1) * RANGE]
            allowed = {range_bytes(index, acknowledged[index])} if index in acknowledged else {b"\0" * RANGE}
            if index in in_flight:
                allowed.add(range_bytes(index, in_flight[index]))
            self.assertIn(piece, allowed, f"{what} {index} is half written or lost")

    def check(self, emu, where, acknowledged, in_flight, ranges, ranges_in_flight):
        client = RawClient(emu.endpoints["blob"])
        for name, version in acknowledged.items():
            r = client.request("GET", f"{A}/{where}/{name}")
            self.assertEqual(r.status, 200, name)
            allowed = {body(name, version)}
            if name in in_flight:
                allowed.add(body(name, in_flight[name]))
            self.assertIn(r.body, allowed, f"{name}: neither the acknowledged nor the new version")
        for name, version in in_flight.items():
            if name not in acknowledged:
                r = client.request("GET", f"{A}/{where}/{name}")
                self.assertIn(r.status, (200, 404))
                if r.status == 200:
                    self.assertEqual(r.body, body(name, version), f"{name} is half written")
        content = RawClient(emu.endpoints["file"]).request("GET", f"{A}/{where}/ranges.bin").body
        self.check_ranges(content, ranges, ranges_in_flight, "range")

    def test_kill_9_during_uploads_loses_nothing_acknowledged(self):
        states = []
        # Each round writes its own container and file; the earlier rounds' data must survive too.
        for round_, kill_after in enumerate((0.7, 1.3, 0.4)):
            where = f"crash{round_}"
            emu = self.start()
            blob, files = RawClient(emu.endpoints["blob"]), RawClient(emu.endpoints["file"])
            self.assertEqual(blob.request("PUT", f"{A}/{where}", [("restype", "container")]).status, 201)
            self.assertEqual(files.request("PUT", f"{A}/{where}", [("restype", "share")]).status, 201)
            files.request("PUT", f"{A}/{where}/ranges.bin",
                          headers={"x-ms-type": "file", "x-ms-content-length": str(16 * RANGE)})
            state = self.upload_until_killed(emu, kill_after, where)
            self.assertGreater(len(state[0]), 0, "nothing was acknowledged before the kill")
            states.append((where, state))
            checker = self.start()
            for earlier_where, earlier_state in states:
                self.check(checker, earlier_where, *earlier_state)
            self.assertEqual(checker.stop()[0], 0)

    def test_kill_9_during_appends_and_page_writes_leaves_no_partial_one(self):
        emu = self.start()
        blob = RawClient(emu.endpoints["blob"])
        self.assertEqual(blob.request("PUT", f"{A}/kinds", [("restype", "container")]).status, 201)
        self.assertEqual(blob.request("PUT", f"{A}/kinds/log", headers={"x-ms-blob-type": "AppendBlob"}).status, 201)
        self.assertEqual(blob.request("PUT", f"{A}/kinds/disk", headers={
            "x-ms-blob-type": "PageBlob", "x-ms-blob-content-length": str(16 * RANGE)}).status, 201)
        appended = []          # the blocks acknowledged, in order
        in_flight = []         # the block being appended when the emulator died
        pages, pages_in_flight = {}, {}
        stop = threading.Event()

        def block(i):
            # Sizes cross the inline tail's 64 KiB both ways, so parts are made and merged.
            return bytes([i % 251 + 1]) * [100, 5000, 70_000, 300_000][i % 4]

        def appender():
            i = 0
            while not stop.is_set():
                in_flight[:] = [block(i)]
                try:
                    r = blob.request("PUT", f"{A}/kinds/log", [("comp", "appendblock")], body=block(i))
                except OSError:
                    return
                if r.status != 201:
                    return
                appended.append(block(i))
                in_flight.clear()
                i += 1

        def pager():
            client = RawClient(emu.endpoints["blob"])
            write_ranges_until_stopped(
                lambda index, data, span: client.request("PUT", f"{A}/kinds/disk", [("comp", "page")], body=data,
                                                         headers={"x-ms-page-write": "update", "x-ms-range": span}).status,
                stop, pages, pages_in_flight)

        run_until_killed(emu, [appender, pager], 1.0, stop)
        self.assertGreater(len(appended), 0, "nothing was appended before the kill")

        checker = self.start()
        client = RawClient(checker.endpoints["blob"])
        log = client.request("GET", f"{A}/kinds/log").body
        whole = b"".join(appended)
        self.assertIn(log, {whole, whole + b"".join(in_flight)}, "an append was lost or is half there")
        disk = client.request("GET", f"{A}/kinds/disk").body
        self.assertEqual(len(disk), 16 * RANGE)
        self.check_ranges(disk, pages, pages_in_flight, "page range")
        # Appends go on where they stopped.
        r = client.request("PUT", f"{A}/kinds/log", [("comp", "appendblock")], body=b"after")
        self.assertEqual((r.status, r.headers.get("x-ms-blob-append-offset")), (201, str(len(log))))
        self.assertEqual(checker.stop()[0], 0)


if __name__ == "__main__":
    unittest.main()
