"""Judging a replay and printing what differs, for the ARM and the Batch replay tests alike.

A step is as the cloud's when it has no difference, or only differences on the documented list
(known.py). A recording on the pending list (work not done yet, with what is missing) is replayed
and reported, PENDING, and its answers count in the figures, but its differences do not fail the
test; a whole folder pending is not held to the threshold.
"""
import fnmatch
import sys


class Pending:
    def __init__(self, entries):
        self.entries = entries   # {glob over folder/file: what is missing}

    def why(self, recording):
        return next((why for pattern, why in self.entries.items() if fnmatch.fnmatchcase(recording, pattern)), None)


def judge(results, rows, pending):
    """(figures per folder, differences not on the list)."""
    figures, unlisted = {}, []
    for folder, steps in results.items():
        counted = [s for s in steps if s.counted]
        exact = listed_only = 0
        held = f"{folder}/*" not in pending.entries
        for step in counted:
            open_ = [d for d in step.differences
                     if not any(r.covers(step.recording, step.method, step.path, d) for r in rows)]
            if not step.differences:
                exact += 1
            elif not open_:
                listed_only += 1
            if not pending.why(step.recording):
                unlisted += [(step, d) for d in open_]
        figures[folder] = (len(counted), exact, listed_only, held)
    return figures, unlisted


def report(results, rows, pending, threshold, out=sys.stdout):
    figures, unlisted = judge(results, rows, pending)
    for folder, steps in results.items():
        for step in steps:
            for d in step.differences:
                mark = "listed " if any(r.covers(step.recording, step.method, step.path, d) for r in rows) else (
                    "PENDING" if pending.why(step.recording) else "DIFF   ")
                print(f"{mark}{step.where()} {step.method} {step.path}: {d}", file=out)
            if step.note:
                print(f"skipped {step.where()} {step.method} {step.path}: {step.note}", file=out)
    slow = sorted((s for steps in results.values() for s in steps), key=lambda s: -s.seconds)[:10]
    print("\nslowest steps: " + ", ".join(f"{s.where()} {s.seconds:.1f}s" for s in slow), file=out)
    print(f"\n| recordings | answers | as the cloud's | only listed differences | % | held to {threshold:.0%} |", file=out)
    print("|---|---|---|---|---|---|", file=out)
    for folder, (answers, exact, listed, held) in figures.items():
        share = (exact + listed) / answers if answers else 0.0
        print(f"| {folder} | {answers} | {exact} | {listed} | {100 * share:.1f} | {'yes' if held else 'PENDING'} |", file=out)
    for pattern, why in pending.entries.items():
        print(f"PENDING {pattern}: {why}", file=out)
    return figures, unlisted
