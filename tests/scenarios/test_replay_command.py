"""batchai-emulator replay's command line: what a bad file, a failing expectation, a step that
cannot run and a passing file print, their exit codes, --seed and --trace.
Usage: test_replay_command.py EMULATOR"""
import os
import subprocess
import sys
import tempfile
import unittest

EMULATOR = None

SETUP = """set ws = /subscriptions/${subscription}/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws
request PUT arm /subscriptions/${subscription}/resourceGroups/rg?api-version=2021-04-01
{"location": "eastus"}
request PUT arm ${ws}?api-version=2018-05-01
{"location": "eastus"}
"""


class ReplayCommand(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def replay(self, *args):
        return subprocess.run([EMULATOR, "replay", *args], capture_output=True, text=True, timeout=300)

    def test_a_bad_file_names_its_line_and_nothing_runs(self):
        path = self.write("bad.scenario", "name x\n\nadvance 5 minutes\n")
        r = self.replay(path)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(f"{path}:3: expected how far to advance the clock (a duration", r.stderr)
        self.assertIn("got '5 minutes'", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_a_failing_expectation_prints_the_step_the_tail_and_the_seed(self):
        path = self.write("fails.scenario", SETUP + "advance 90m\nrequest GET arm ${ws}?api-version=2018-05-01\n"
                          "expect json /properties/provisioningState == \"Failed\"\nadvance 1h\n")
        r = self.replay(path, "--seed", "9")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(f"FAIL {path}:8: expected /properties/provisioningState == \"Failed\", got \"succeeded\"", r.stdout)
        self.assertIn("the trace's last lines:", r.stdout)
        self.assertIn("0d01:30:00.000 replay answered 200", r.stdout)
        self.assertNotIn("0d02:30:00.000", r.stdout)  # nothing after the failing step ran
        self.assertIn(f"replay it with: batchai-emulator replay {path} --seed 9 --trace -", r.stdout)

    def test_a_step_that_cannot_run_fails_there(self):
        path = self.write("unknown.scenario", SETUP + "request GET arm ${nowhere}\n")
        r = self.replay(path)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"{path}:6: unknown variable ${{nowhere}}", r.stdout)
        path = self.write("nojob.scenario", SETUP + "fault preempt job ghost\n")
        r = self.replay(path)
        self.assertIn(f"{path}:6: there is no job ghost", r.stdout)
        # The virtual clock is this machine's engine's: a Slurm cluster is refused by name.
        path = self.write("slurm.scenario", "name on slurm\nemulator --compute slurm\nadvance 1m\n")
        r = self.replay(path)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("--compute slurm: scenarios run on this machine's engine", r.stdout)

    def test_a_passing_file_its_trace_and_the_seed_variable(self):
        path = self.write("passes.scenario", "seed 5\n" + SETUP + "set s = seed-${seed}\nrequest GET arm ${ws}?api-version=2018-05-01\n"
                          "expect json /name == \"ws\"\nexpect body contains \"${s}\"\n")
        r = self.replay(path)
        self.assertEqual(r.returncode, 1)  # the body does not contain seed-5
        self.assertIn("contains \"seed-5\"", r.stdout)
        path = self.write("passes2.scenario", SETUP + "request GET arm ${ws}?api-version=2018-05-01\nexpect json /name == \"ws\"\n")
        trace = os.path.join(self.dir.name, "trace.txt")
        r = self.replay(path, "--trace", trace)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"^PASS .*passes2.scenario: \d+ events, 0d00:00:00.000 of virtual time in [\d.]+ s")
        with open(trace) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], f"0d00:00:00.000 replay scenario {path}, seed 1")
        self.assertIn("0d00:00:00.000 replay PUT arm ${ws}?api-version=2018-05-01", lines)
        self.assertEqual(lines[-1], "0d00:00:00.000 replay done")

    def test_a_report_of_a_passing_and_a_failing_replay(self):
        library = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenarios", "library")
        passing = os.path.join(library, "preemption_requeue.scenario")
        failing = self.write("hostile.scenario", SETUP + "request GET arm ${ws}?api-version=2018-05-01\n"
                             "expect json /name == \"<b>bold</b>\"\n")
        report = os.path.join(self.dir.name, "report.html")
        r = self.replay(passing, failing, "--report", report)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn(f"report: {report}", r.stdout)
        with open(report) as f:
            html = f.read()
        self.assertIn("<title>Scenario replay: 1 failed</title>", html)
        self.assertIn("PASS</span> " + passing, html)
        self.assertIn("FAIL</span> " + failing, html)
        # The failing expectation, highlighted and escaped (never markup).
        self.assertIn('<div class="failure" id="failure-1">', html)
        self.assertIn("&quot;&lt;b&gt;bold&lt;/b&gt;&quot;", html)
        self.assertNotIn("<b>bold</b>", html)
        # The passing one's timeline: the job's states, its two nodes (pre-empted, replaced), the fault.
        self.assertIn('<svg id="jobs-0"', html)
        self.assertIn('<g class="row" data-name="mnist">', html)
        self.assertIn('data-label="succeeded"', html)
        self.assertIn('<svg id="nodes-0"', html)
        self.assertEqual(html.count('data-label="mnist"'), 2)  # each node's run of it
        self.assertIn("is pre-empted", html)
        self.assertIn('<line class="fault"', html)
        self.assertIn("fault preempt job mnist", html)
        # Self-contained: no script, nothing loaded from anywhere.
        self.assertNotIn("<script", html)
        self.assertNotIn("src=", html)
        self.assertNotIn("href=", html)
        r = self.replay(passing, "--report", os.path.join(self.dir.name, "no", "such", "dir.html"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot write", r.stderr)
        self.assertEqual(self.replay(passing, "--report").returncode, 2)

    def test_bad_command_lines(self):
        self.assertEqual(self.replay().returncode, 2)
        self.assertEqual(self.replay("x.scenario", "--seed", "minus").returncode, 2)
        r = self.replay(os.path.join(self.dir.name, "missing.scenario"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot read", r.stderr)
        self.assertEqual(self.replay("--help").returncode, 0)


if __name__ == "__main__":
    EMULATOR = sys.argv.pop(1)
    unittest.main()
