"""*.scenario files collected as test items: each is replayed by `batchai-emulator replay`
(scenarios/README.md), which starts its own emulator on a virtual clock."""
import re
import subprocess

import pytest

from .emulator import find_binary


class ScenarioFailed(Exception):
    def __init__(self, output, line):
        super().__init__(output)
        self.output = output
        self.line = line


class ScenarioFile(pytest.File):
    def collect(self):
        yield ScenarioItem.from_parent(self, name=self.path.stem)


class ScenarioItem(pytest.Item):
    def runtest(self):
        args = [find_binary(), "replay", str(self.path)]
        seed = self.config.getoption("batchai_seed")
        if seed is not None:
            args += ["--seed", str(seed)]
        result = subprocess.run(args, capture_output=True, text=True)
        if result.returncode != 0:
            output = (result.stdout + result.stderr).strip()
            # "FAIL FILE:LINE: what was expected, what was found" (or, for a bad file, FILE:LINE: why).
            found = re.search(re.escape(str(self.path)) + r":(\d+):", output)
            raise ScenarioFailed(output, int(found.group(1)) if found else None)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ScenarioFailed):
            # The replay's own report: the failing step's file and line, what it expected and
            # found, the trace's last lines and the command that replays it.
            return excinfo.value.output
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, 0, f"scenario {self.path.name}"
