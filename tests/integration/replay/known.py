"""The documented differences from the cloud: the table under "## Differences from the cloud" in
emulator/arm/README.md. Each row names where it applies and why it must stay:

| recordings | request | field | why |
|---|---|---|---|
| `sdk-python-2017-09-01-preview/*` | `GET */clusters/*` | `properties.allocationState` | ... |

`recordings` is a glob over `folder/file`, `request` one over `METHOD path` (the recorded path,
compared without regard to case), `field` one over the difference's JSON path, header name or
`status`; a field written `case:GLOB` covers only values that differ in case alone, and one
written `PATH=NAME` only the elements of a named list at PATH (`value[]`) whose name matches the
glob NAME (`value[]=process_*.log`: those files listed by one side only). A glob may hold
alternatives in braces (`{a,b}`, nested too), so that one row can name the recordings of one era
across folders. Backquotes are optional.
"""
import fnmatch
import re
from dataclasses import dataclass

HEADING = "## Differences from the cloud"


BRACES = re.compile(r"\{([^{}]*)\}")


def expand(glob):
    """The globs that `glob`'s brace alternatives stand for: `a{b,c}` -> [`ab`, `ac`]."""
    m = BRACES.search(glob)
    if not m:
        return [glob]
    return [out for choice in m.group(1).split(",")
            for out in expand(glob[:m.start()] + choice + glob[m.end():])]


def matches(text, glob):
    return any(fnmatch.fnmatchcase(text, g) for g in expand(glob))


@dataclass
class Known:
    recordings: str
    request: str
    field: str
    why: str

    def covers(self, recording, method, path, difference):
        field = self.field
        if "=" in field:
            field, name = field.split("=", 1)
            listed = difference.cloud if difference.cloud is not None else difference.emulator
            if difference.kind != "element" or not isinstance(listed, str) or not matches(listed, name):
                return False
        if field.startswith("case:"):
            field = field[len("case:"):]
            if not (difference.kind == "value" and isinstance(difference.cloud, str)
                    and isinstance(difference.emulator, str)
                    and difference.cloud.lower() == difference.emulator.lower()):
                return False
        return (matches(recording, self.recordings)
                and matches(f"{method} {path}".lower(), self.request.lower())
                and matches(difference.path, field))


def _cell(text):
    return text.strip().strip("`").strip()


def parse(readme_text):
    """The rows of the table under HEADING; a row without a reason is refused."""
    rows, inside = [], False
    for line in readme_text.splitlines():
        if line.startswith("## "):
            inside = line.strip() == HEADING
            continue
        if not inside or not line.startswith("|"):
            continue
        cells = [c for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 4 or set(cells[0].strip()) <= set("-: "):
            continue
        recordings, request, field, why = (_cell(c) for c in cells)
        if recordings.lower() == "recordings":
            continue
        if not why:
            raise ValueError(f"a documented difference without its reason: {line}")
        rows.append(Known(recordings, request, field.replace("\\|", "|"), why))
    return rows


def load(path):
    with open(path, encoding="utf-8") as f:
        return parse(f.read())
