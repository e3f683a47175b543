"""The index of the kept raw results, written into bench/results/README.md.

One row per file under ``bench/results/`` (``archive/`` included): its date, machine, load,
command and commit as far as the file's own first lines (or, for JSON, its top-level fields)
say, and which page or source file cites it. What a file does not record is "not recorded";
nothing is guessed. The table goes between the two marker lines of the README; the rest of the
README is left as written.

    python bench/results_index.py           # rewrite the table
    python bench/results_index.py --check   # exit 1 when the table is not what it would write
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
README = RESULTS / "README.md"
START = "<!-- index: written by `python bench/results_index.py`; do not edit by hand -->"
END = "<!-- index end -->"
NOT_RESULTS = {"README.md", "MANIFEST.sha256"}
UNKNOWN = "not recorded"
HEAD_LINES = 12
# Where citations are looked for: the pages and the code (not the results themselves).
CITING = ("README.md", "docs/", "bench/", "advisor/", "tests/", "dashboard/", "workloads/")
NOT_CITING = ("bench/results/", "tests/docs/")  # the results themselves; the tests of this index

STAMP = re.compile(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z")
ISO = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(?::\d{2})?(?:\.\d+)?(?:Z|\+00:00)?")
LOAD = re.compile(r"load(?: average)?(?: at (?:the )?start)?[ :=]*[\[(]?\s*(\d+(?:\.\d+)?)[,/ ]+"
                  r"(\d+(?:\.\d+)?)[,/ ]+(\d+(?:\.\d+)?)")
COMMIT = re.compile(r"(?:commit|checkout at|the tree of)\s+([0-9a-f]{7,40})\b")
CORES = re.compile(r"(\d+) (?:usable )?(?:cores|vCPUs|CPUs)|^(?:cores|cpus): (\d+)$", re.MULTILINE)
CPU_MODEL = re.compile(r"(Intel\(R\) Xeon\(R\)|AMD EPYC)")
GPU = re.compile(r"(NVIDIA [A-Z]\w*(?: \w+)?|H200|H100)")
COMMAND = re.compile(r"^#?\s*(?:command|Command|Each sweep):\s*(.+)$")
EXTENSION = r"\.(?:json|md|txt|log|csv|\*|\{)"  # a run's name written with its file type
SPAN = re.compile(r"`([^`\n]*(?:python|advisor|bash)[^`\n]*)`")


def kept_files() -> list[Path]:
    return [p for p in sorted(RESULTS.rglob("*"))
            if p.is_file() and p.name not in NOT_RESULTS and "__pycache__" not in p.parts]


def head_text(path: Path) -> str:
    """The file's first lines, or for a JSON file its top-level scalar fields as ``k: v``."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return "\n".join(text.splitlines()[:HEAD_LINES])
        if isinstance(data, dict):
            return "\n".join(f"{k}: {_flat(v)}" for k, v in data.items()
                             if not isinstance(v, dict | list) or k in ("command", "argv",
                                                                         "load", "loadavg"))
        return ""
    # A log's own lines, not the data rows a meter wrote under them (one JSON object a line).
    return "\n".join(line for line in text.splitlines()[:HEAD_LINES]
                     if not line.lstrip().startswith("{"))


def _flat(value: object) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def fields(path: Path) -> dict[str, str]:
    """Date, machine, load, command and commit, from the file's name and header."""
    head = head_text(path)
    out = {"date": UNKNOWN, "machine": UNKNOWN, "load": UNKNOWN, "command": UNKNOWN,
           "commit": UNKNOWN}
    stamp = STAMP.search(path.name)
    iso = ISO.search(head)
    if stamp:
        y, mo, d, h, mi, _ = stamp.groups()
        out["date"] = f"{y}-{mo}-{d} {h}:{mi}"
    elif iso:
        out["date"] = f"{iso.group(1)} {iso.group(2)}"
    machine = []
    if re.search(r"\bhost vm\b|\(vm\)", head):
        machine.append("vm")
    cores = CORES.search(head)
    if cores:
        machine.append(f"{cores.group(1) or cores.group(2)} cores")
    gpu = GPU.search(head)
    cpu = CPU_MODEL.search(head)
    if gpu:
        machine.append(gpu.group(1))
    elif cpu:
        machine.append(cpu.group(1).replace("(R)", "") + ", no GPU")
    elif "no GPU" in head or re.search(r"\+cpu\b", head):
        machine.append("no GPU")
    if machine:
        out["machine"] = ", ".join(machine)
    load = LOAD.search(head)
    if load:
        out["load"] = " ".join(f"{float(x):.2f}" for x in load.groups())
    commit = COMMIT.search(head)
    if commit:
        out["commit"] = commit.group(1)[:7]
    out["command"] = _command(head, path)
    return out


def _command(head: str, path: Path) -> str:
    for line in head.splitlines():
        m = COMMAND.match(line.strip())
        if m:
            span = re.search(r"`([^`]+)`", m.group(1))
            return _short(span.group(1) if span else m.group(1).strip())
        if path.suffix == ".json" and line.startswith(("command: ", "argv: ")):
            return _short(line.split(": ", 1)[1])
    # what a header says ran beside the run (`... beside it: ...`) is not the run's command
    own = "\n".join(line.split("beside it", 1)[0] for line in head.splitlines())
    span = SPAN.search(own)
    return _short(span.group(1)) if span else UNKNOWN


def _short(command: str, width: int = 90) -> str:
    command = command.replace("`", "'").strip("' ")
    return command if len(command) <= width else command[: width - 3] + "..."


def citing_texts() -> dict[str, str]:
    """The tracked (and new, not ignored) files that may cite a result, by path."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    texts = {}
    for rel in sorted(set(listed.split())):
        path = ROOT / rel
        if (not rel.startswith(CITING) or rel.startswith(NOT_CITING) or not path.is_file()
                or path.suffix not in (".md", ".py", ".sh", ".txt", ".toml")):
            continue
        texts[rel] = path.read_text(encoding="utf-8", errors="replace")
    return texts


def _patterns(text: str) -> list[str]:
    """Globs and brace lists of result files a text names (``..._2026*.md``, ``run{8,9}.md``)."""
    out = []
    for raw in re.findall(r"(?:results/)?([\w.-]*(?:\*|\{[\w,.-]+\})[\w.*{},-]*)", text):
        out.extend(_expand(raw))
    return [p for p in out if "_" in p]


def _expand(name: str) -> list[str]:
    brace = re.search(r"\{([^{}]*)\}", name)
    if not brace:
        return [name]
    head, tail = name[: brace.start()], name[brace.end():]
    return [x for part in brace.group(1).split(",") for x in _expand(head + part + tail)]


def citations(files: list[Path], texts: dict[str, str]) -> dict[str, list[str]]:
    """For each file name, the paths that cite it: by name, by its name without the extension
    (a run's ``.md`` and ``.json``), by a glob or brace list, or by a short ``..._SUFFIX`` after
    a name that shares its start."""
    names = {p.name: p.parent.name == "archive" for p in files}
    cited: dict[str, set[str]] = {n: set() for n in names}
    for rel, text in texts.items():
        patterns = _patterns(text)
        shorts = re.findall(r"\.\.\._(\w[\w.-]*)", text)
        for name, archived in names.items():
            stem = name.rsplit(".", 1)[0]
            if (re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text)
                    or re.search(r"(?<![\w/-])" + re.escape(stem) + EXTENSION, text)
                    or (not archived and any(fnmatch.fnmatch(name, p) for p in patterns))
                    or (not archived and any(name.endswith(s) and name.split("_")[0] in text
                                             for s in shorts))):
                cited[name].add(rel)
    return {n: sorted(c) for n, c in cited.items()}


def group_of(name: str, cited: dict[str, list[str]]) -> str | None:
    """The cited file of the same run: the longest cited name whose stem starts this one's
    (a grid part of a cited report, a run's log or ``advisor show`` beside its ``.md``)."""
    stem = name.rsplit(".", 1)[0]
    best = None
    for other, by in cited.items():
        other_stem = other.rsplit(".", 1)[0]
        rest = stem[len(other_stem):]
        same_run = stem.startswith(other_stem) and (
            rest == "" or (rest.startswith("_") and not STAMP.match(rest[1:])))
        if by and other != name and same_run and (
                best is None or len(other_stem) > len(best.rsplit(".", 1)[0])):
            best = other
    return best


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def table() -> str:
    files = kept_files()
    cited = citations(files, citing_texts())
    rows = ["| file | date (UTC) | machine | load | command | commit | cited by |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    named = {p.name: [q.name for q in files if q != p and p.name in _text(q)] for p in files}
    for path in files:
        rel = path.relative_to(RESULTS).as_posix()
        f = fields(path)
        by = ", ".join(cited[path.name])
        group = group_of(path.name, cited)
        if not by and group:
            by = f"its run's `{group}`"
        elif not by and named[path.name]:
            by = "named by " + ", ".join(f"`{n}`" for n in named[path.name])
        elif not by:
            by = "none"
        cells = [f"`{rel}`", f["date"], f["machine"], f["load"], f"`{f['command']}`"
                 if f["command"] != UNKNOWN else UNKNOWN, f["commit"], by]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"


def render(readme: str) -> str:
    if START not in readme or END not in readme:
        raise ValueError(f"{README} lacks the marker lines {START!r} and {END!r}")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n\n{table()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the table is out of date")
    args = parser.parse_args(argv)
    try:
        current = README.read_text(encoding="utf-8")
        new = render(current)
    except (OSError, ValueError) as e:
        print(f"results_index: {e}", file=sys.stderr)
        return 2
    if args.check:
        if new != current:
            print("bench/results/README.md's index is out of date: run "
                  "`python bench/results_index.py`")
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    print(f"{README.relative_to(ROOT)}: {len(kept_files())} files indexed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
