"""Replays every ARM recording of the real service under ../shared/reference/recordings/ against a
fresh emulator and compares each answer with the cloud's (tests/integration/replay/).

The test fails on any difference that is not on the list "Differences from the cloud" in
emulator/arm/README.md, and on a folder below 95% of answers as the cloud's. It skips, visibly,
where the recordings are absent.

    /usr/bin/python3 tests/integration/test_arm_replay.py --report [FOLDER/FILE-GLOB]

prints every difference (listed ones marked) and the per-folder figures.
"""
import concurrent.futures
import fnmatch
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import Emulator  # noqa: E402
from replay import cassette, known  # noqa: E402
from replay.player import Player  # noqa: E402
from replay.report import Pending, report as report_replay  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RECORDINGS = os.environ.get("BAI_RECORDINGS",
                            os.path.normpath(os.path.join(ROOT, "..", "shared", "reference", "recordings")))
README = os.path.join(ROOT, "emulator", "arm", "README.md")
THRESHOLD = 0.95
# Recordings whose differences are work not done yet, each with what is missing (replay/report.py).
# An entry goes when its work lands; a difference that must stay goes to the README's list instead.
PENDING = Pending({
})
# Each recording gets an emulator of its own; operations and wait loops are quick.
EMULATOR_ARGS = ["--lro-delay", "50", "--autoscale-idle", "500", "--gpus", "none"]


def replay_one(path, name):
    # A pending recording's wait loops mostly wait for a state the emulator does not reach yet:
    # they give up sooner, so that the whole replay stays quick.
    timeout = 2.0 if PENDING.why(name) else 15.0
    with Emulator(args=EMULATOR_ARGS) as emu:
        return Player(emu.endpoints, path, name, wait_loop_timeout=timeout).run()


def replay(selection="*"):
    """{folder: [Step]} for the recordings whose folder/file matches selection."""
    jobs = []
    for folder, files in cassette.recordings(RECORDINGS).items():
        for path in files:
            name = f"{folder}/{os.path.basename(path)}"
            if fnmatch.fnmatchcase(name, selection):
                jobs.append((folder, path, name))
    out = {}
    workers = int(os.environ.get("BAI_REPLAY_WORKERS", "4"))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [(folder, pool.submit(replay_one, path, name)) for folder, path, name in jobs]
        for folder, future in futures:
            out.setdefault(folder, []).extend(future.result())
    return out


def report(results, rows, out=sys.stdout):
    return report_replay(results, rows, PENDING, THRESHOLD, out)


@unittest.skipUnless(os.path.isdir(RECORDINGS), f"SKIPPED: no recordings at {RECORDINGS}")
class RecordedExchanges(unittest.TestCase):
    def test_every_recording_answers_as_the_cloud_did(self):
        rows = known.load(README)
        results = replay()
        self.assertTrue(results, "no recordings found")
        figures, unlisted = report(results, rows)
        lines = [f"{s.where()} {s.method} {s.path}: {d}" for s, d in unlisted]
        self.assertEqual(lines, [], f"{len(lines)} differences from the cloud are not on the list")
        for folder, (answers, exact, listed, held) in figures.items():
            self.assertGreater(answers, 0, folder)
            if held:
                self.assertGreaterEqual((exact + listed) / answers, THRESHOLD, folder)


if __name__ == "__main__":
    if "--report" in sys.argv:
        selection = sys.argv[sys.argv.index("--report") + 1] if len(sys.argv) > sys.argv.index("--report") + 1 else "*"
        report(replay(selection), known.load(README))
    else:
        if not os.path.isdir(RECORDINGS):
            print(f"SKIPPED: no recordings at {RECORDINGS}")
        unittest.main()
