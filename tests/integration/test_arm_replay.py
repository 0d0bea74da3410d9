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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RECORDINGS = os.environ.get("BAI_RECORDINGS",
                            os.path.normpath(os.path.join(ROOT, "..", "shared", "reference", "recordings")))
README = os.path.join(ROOT, "emulator", "arm", "README.md")
THRESHOLD = 0.95
# Recordings whose differences are work not done yet, each with what is missing. They are
# replayed and reported (PENDING lines, and their answers count in the figures) but their
# differences do not fail the test; a whole folder pending is not yet held to THRESHOLD. An entry
# goes when its work lands; a difference that must stay goes to the README's list instead.
PENDING = {
}


def pending(recording):
    return next((why for pattern, why in PENDING.items() if fnmatch.fnmatchcase(recording, pattern)), None)
# Each recording gets an emulator of its own; operations and wait loops are quick.
EMULATOR_ARGS = ["--lro-delay", "50", "--autoscale-idle", "500", "--gpus", "none"]


def replay_one(path, name):
    # A pending recording's wait loops mostly wait for a state the emulator does not reach yet:
    # they give up sooner, so that the whole replay stays quick.
    timeout = 2.0 if pending(name) else 15.0
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


def judge(results, rows):
    """(figures per folder, differences not on the list): a step is as the cloud's when it has
    no difference, or only listed ones."""
    figures, unlisted = {}, []
    for folder, steps in results.items():
        counted = [s for s in steps if s.counted]
        exact = listed_only = 0
        held = f"{folder}/*" not in PENDING
        for step in counted:
            open_ = [d for d in step.differences
                     if not any(r.covers(step.recording, step.method, step.path, d) for r in rows)]
            if not step.differences:
                exact += 1
            elif not open_:
                listed_only += 1
            if not pending(step.recording):
                unlisted += [(step, d) for d in open_]
        figures[folder] = (len(counted), exact, listed_only, held)
    return figures, unlisted


def report(results, rows, out=sys.stdout):
    figures, unlisted = judge(results, rows)
    for folder, steps in results.items():
        for step in steps:
            for d in step.differences:
                mark = "listed " if any(r.covers(step.recording, step.method, step.path, d) for r in rows) else (
                    "PENDING" if pending(step.recording) else "DIFF   ")
                print(f"{mark}{step.where()} {step.method} {step.path}: {d}", file=out)
            if step.note:
                print(f"skipped {step.where()} {step.method} {step.path}: {step.note}", file=out)
    slow = sorted((s for steps in results.values() for s in steps), key=lambda s: -s.seconds)[:10]
    print("\nslowest steps: " + ", ".join(f"{s.where()} {s.seconds:.1f}s" for s in slow), file=out)
    print(f"\n| recordings | answers | as the cloud's | only listed differences | % | held to {THRESHOLD:.0%} |", file=out)
    print("|---|---|---|---|---|---|", file=out)
    for folder, (answers, exact, listed, held) in figures.items():
        share = (exact + listed) / answers if answers else 0.0
        print(f"| {folder} | {answers} | {exact} | {listed} | {100 * share:.1f} | {'yes' if held else 'PENDING'} |", file=out)
    for pattern, why in PENDING.items():
        print(f"PENDING {pattern}: {why}", file=out)
    return figures, unlisted


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
