"""Replays the real Storage service's recordings (storage-file-python, storage-blob-python under
../shared/reference/recordings/) against the emulator and compares each answer with the cloud's
(tests/integration/replay/storage_player.py).

    /usr/bin/python3 tests/integration/test_storage_replay.py [--folder NAME] [--only GLOB]
        [--json REPORT.json] [--diffs] [--check]

prints per folder the answers, the share identical to the cloud's, the share with the same status
and error code, and the differences by category with their counts (--diffs: every difference).
--check fails (exit 1) on any difference that is not a row of the table "Differences from the
cloud" in fake_storage/README.md (the recordings' table, read as emulator/arm/README.md's is).

As a unit test it runs the --check mode only where BAI_STORAGE_REPLAY=check is set: the
differences are not all served or documented yet.
"""
import argparse
import collections
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import Emulator  # noqa: E402
from replay import known  # noqa: E402
from replay.storage_player import replay_folder  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RECORDINGS = os.environ.get("BAI_RECORDINGS",
                            os.path.normpath(os.path.join(ROOT, "..", "shared", "reference", "recordings")))
FOLDERS = ("storage-file-python", "storage-blob-python")
README = os.path.join(ROOT, "fake_storage", "README.md")


def replay(folders=FOLDERS, only=None, workers=None):
    workers = workers or int(os.environ.get("BAI_REPLAY_WORKERS", "6"))
    out = {}
    for folder in folders:
        started = time.monotonic()
        answers = replay_folder(os.path.join(RECORDINGS, folder), lambda args: Emulator(args=args), only, workers)
        out[folder] = (answers, time.monotonic() - started)
    return out


def unlisted(answer, rows):
    return [d for d in answer.differences
            if not any(r.covers(answer.recording, answer.method, answer.path, d) for r in rows)]


def summary(results, rows=None, out=sys.stdout, every=False, top=40):
    doc = {}
    for folder, (answers, seconds) in results.items():
        n = len(answers)
        identical = sum(a.identical for a in answers)
        same = sum(a.same_status for a in answers)
        listed = sum(1 for a in answers if a.differences and rows is not None and not unlisted(a, rows))
        categories = collections.Counter(c for a in answers for c in a.categories)
        pct = lambda k: 100.0 * k / n if n else 0.0  # noqa: E731
        print(f"\n{folder}: {n} answers in {seconds:.1f}s; identical {identical} ({pct(identical):.1f}%); "
              f"same status and code {same} ({pct(same):.1f}%)"
              + (f"; only documented differences {listed}" if rows is not None else ""), file=out)
        for category, count in categories.most_common(top):
            print(f"  {count:5d}  {category}", file=out)
        if len(categories) > top:
            print(f"  ... {len(categories) - top} more categories", file=out)
        if every:
            for a in answers:
                for d in a.differences:
                    print(f"    {a.where()} {a.method} {a.path}: {d}", file=out)
        doc[folder] = {
            "answers": n, "identical": identical, "same_status_and_code": same, "documented": listed,
            "seconds": round(seconds, 1),
            "categories": dict(categories.most_common()),
            "differences": [{"answer": a.where(), "operation": a.operation, "method": a.method, "path": a.path,
                             "categories": a.categories, "differences": [str(d) for d in a.differences]}
                            for a in answers if a.differences],
        }
    documented = rows is not None
    print("\n| folder | answers | identical to the cloud's | same status and error code |"
          + (" identical or only documented differences |" if documented else ""), file=out)
    print("|---|---|---|---|" + ("---|" if documented else ""), file=out)
    for folder, figures in doc.items():
        n = figures["answers"] or 1
        print(f"| {folder} | {figures['answers']} | {100.0 * figures['identical'] / n:.1f}% | "
              f"{100.0 * figures['same_status_and_code'] / n:.1f}% |"
              + (f" {100.0 * (figures['identical'] + figures['documented']) / n:.1f}% |" if documented else ""), file=out)
    return doc


def check(results, rows):
    """The differences not in the table, as lines."""
    return [f"{a.where()} {a.method} {a.path}: {d}"
            for answers, _ in results.values() for a in answers for d in unlisted(a, rows)]


def load_rows():
    return known.load(README)


@unittest.skipUnless(os.environ.get("BAI_STORAGE_REPLAY") == "check" and os.path.isdir(RECORDINGS),
                     "SKIPPED: set BAI_STORAGE_REPLAY=check (and have the recordings) to hold the emulator to "
                     "the Storage recordings")
class StorageRecordings(unittest.TestCase):
    def test_every_answer_is_the_clouds_or_documented(self):
        rows = load_rows()
        results = replay()
        summary(results, rows)
        for folder, (answers, _) in results.items():
            self.assertGreater(len(answers), 0, folder)
        lines = check(results, rows)
        self.assertEqual(lines, [], f"{len(lines)} differences from the cloud are not documented")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", action="append", choices=FOLDERS)
    parser.add_argument("--only", help="glob over FOLDER/FILE of the recordings to replay")
    parser.add_argument("--json", help="write the figures, categories and every difference here")
    parser.add_argument("--diffs", action="store_true", help="print every difference")
    parser.add_argument("--check", action="store_true", help="fail on a difference not in the README's table")
    parser.add_argument("--workers", type=int)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    results = replay(tuple(args.folder or FOLDERS), args.only, args.workers)
    rows = load_rows() if args.check else None
    doc = summary(results, rows, every=args.diffs, top=args.top)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    if args.check:
        lines = check(results, rows)
        for line in lines:
            print("UNDOCUMENTED " + line)
        print(f"{len(lines)} differences not in the table")
        return 1 if lines else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
