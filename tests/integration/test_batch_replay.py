"""Replays the azure-batch SDK's recordings of the real Batch service
(../shared/reference/recordings/batch-dataplane-python/) against a fresh emulator each, and
compares every answer with the cloud's (tests/integration/replay/batch_player.py).

The test fails on any difference that is not on the list "Differences from the cloud" in
emulator/batch/README.md, in a recording that is not pending, and on the folder below 95% of
answers as the cloud's once nothing in it is pending. It skips, visibly, where the recordings are
absent.

    /usr/bin/python3 tests/integration/test_batch_replay.py --report [FILE-GLOB]

prints every difference (listed ones marked) and the figures.
"""
import concurrent.futures
import fnmatch
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import Emulator  # noqa: E402
from replay import known  # noqa: E402
from replay.batch_player import BatchPlayer  # noqa: E402
from replay.report import Pending, report as report_replay  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RECORDINGS = os.environ.get("BAI_RECORDINGS",
                            os.path.normpath(os.path.join(ROOT, "..", "shared", "reference", "recordings")))
FOLDER = "batch-dataplane-python"
README = os.path.join(ROOT, "emulator", "batch", "README.md")
THRESHOLD = 0.95
# What the emulator's Batch endpoint does not serve yet, per recording (replay/report.py): an
# entry goes when its work lands.
PENDING = Pending({})
EMULATOR_ARGS = ["--gpus", "none"]
# The application package the SDK tests' preparer made through the management API (application_id,
# version v1.0): here an emulator option.
PREPARED_APPLICATION = "application_id:v1.0"


def replay_one(path, name):
    timeout = 2.0 if PENDING.why(name) else 15.0
    with tempfile.TemporaryDirectory(prefix="bai-replay-app-") as package:
        with open(os.path.join(package, "hello.py"), "w") as f:
            f.write("print('hello from the package')\n")
        args = EMULATOR_ARGS + ["--batch-application", f"{PREPARED_APPLICATION}={package}"]
        with Emulator(args=args) as emu:
            return BatchPlayer(emu.endpoints, path, name, wait_loop_timeout=timeout).run()


def replay(selection="*"):
    """{folder: [Step]} for the recordings whose file name matches selection."""
    folder = os.path.join(RECORDINGS, FOLDER)
    paths = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".yaml")
                   and fnmatch.fnmatchcase(f, selection))
    workers = int(os.environ.get("BAI_REPLAY_WORKERS", "4"))
    steps = []
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for result in pool.map(lambda p: replay_one(p, f"{FOLDER}/{os.path.basename(p)}"), paths):
            steps.extend(result)
    return {FOLDER: steps}


def report(results, rows, out=sys.stdout):
    return report_replay(results, rows, PENDING, THRESHOLD, out)


@unittest.skipUnless(os.path.isdir(os.path.join(RECORDINGS, FOLDER)), f"SKIPPED: no recordings at {RECORDINGS}/{FOLDER}")
class RecordedBatchExchanges(unittest.TestCase):
    def test_every_recording_answers_as_the_cloud_did(self):
        rows = known.load(README)
        results = replay()
        figures, unlisted = report(results, rows)
        answers, exact, listed, held = figures[FOLDER]
        self.assertGreater(answers, 80, "the recordings hold 92 answers to compare")
        lines = [f"{s.where()} {s.method} {s.path}: {d}" for s, d in unlisted]
        self.assertEqual(lines, [], f"{len(lines)} differences from the cloud are not on the list")
        if held:
            self.assertGreaterEqual((exact + listed) / answers, THRESHOLD)


if __name__ == "__main__":
    if "--report" in sys.argv:
        at = sys.argv.index("--report")
        report(replay(sys.argv[at + 1] if len(sys.argv) > at + 1 else "*"), known.load(README))
    else:
        if not os.path.isdir(os.path.join(RECORDINGS, FOLDER)):
            print(f"SKIPPED: no recordings at {RECORDINGS}/{FOLDER}")
        unittest.main()
