"""The checksums of the kept raw results: ``bench/results/MANIFEST.sha256``.

Every file under ``bench/results/`` (``archive/`` included; not the folder's README.md nor the
manifest itself) has one line, ``<sha256>  <path under bench/results>``, in the format of
``sha256sum``. A kept file never changes (bench/results/README.md), so this script only ever
*adds* lines: a new result file gets its hash, a file moved into ``archive/`` keeps its hash
under its new path, and an existing hash is never rewritten. A file whose bytes no longer match
its line, or that disappeared, is reported and left as it is: restore it from git.

    python bench/manifest.py            # add the new files' lines (and moved files' paths)
    python bench/manifest.py --check    # change nothing; exit 1 when anything differs

``tests/docs/test_manifest.py`` fails when a kept file changed or disappeared, or a new one has
no line yet."""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
MANIFEST_NAME = "MANIFEST.sha256"
NOT_RESULTS = {"README.md", MANIFEST_NAME}
REGENERATE = "python bench/manifest.py"


@dataclass
class Drift:
    """What differs between the manifest and the files; empty lists: nothing."""

    changed: list[str] = field(default_factory=list)  # a kept file's bytes differ
    missing: list[str] = field(default_factory=list)  # a kept file is gone
    new: list[str] = field(default_factory=list)  # a file with no line yet
    moved: dict[str, str] = field(default_factory=dict)  # a line's path -> where the file is now

    def __bool__(self) -> bool:
        return bool(self.changed or self.missing or self.new or self.moved)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kept_files(results: Path) -> dict[str, Path]:
    """Every result file by its path under ``results`` (POSIX separators)."""
    return {p.relative_to(results).as_posix(): p for p in sorted(results.rglob("*"))
            if p.is_file() and p.name not in NOT_RESULTS and "__pycache__" not in p.parts}


def read(results: Path) -> dict[str, str]:
    """The manifest's lines: path -> hash (empty when there is no manifest)."""
    path = results / MANIFEST_NAME
    if not path.exists():
        return {}
    entries: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ValueError(f"{path}:{number}: not '<sha256>  <path>': {line!r}")
        entries[name] = digest
    return entries


def drift(results: Path) -> Drift:
    """Compare the files with the manifest. A file counts as the same kept file when it has
    the same name, here or in ``archive/`` (a file moved there is not gone)."""
    entries = read(results)
    files = kept_files(results)
    out = Drift()
    by_name: dict[str, list[str]] = {}
    for rel in files:
        by_name.setdefault(Path(rel).name, []).append(rel)
    claimed: set[str] = set()
    for rel, digest in entries.items():
        where = rel if rel in files else _moved(rel, by_name)
        if where is None:
            out.missing.append(rel)
            continue
        claimed.add(where)
        if where != rel:
            out.moved[rel] = where
        if sha256(files[where]) != digest:
            out.changed.append(where)
    out.new = [rel for rel in files if rel not in claimed]
    return out


def _moved(rel: str, by_name: dict[str, list[str]]) -> str | None:
    """Where a manifest line's file is now, if it only moved into or out of ``archive/``."""
    name = Path(rel).name
    candidates = [c for c in by_name.get(name, []) if c != rel]
    return candidates[0] if len(candidates) == 1 else None


def update(results: Path) -> Drift:
    """Add the lines of new files and the new paths of moved ones; never rewrite a hash, never
    drop a line. Returns the drift found before the update (its changed and missing files are
    left as they are)."""
    found = drift(results)
    entries = read(results)
    for old, new in found.moved.items():
        entries[new] = entries.pop(old)
    files = kept_files(results)
    for rel in found.new:
        entries[rel] = sha256(files[rel])
    text = "".join(f"{entries[rel]}  {rel}\n" for rel in sorted(entries))
    (results / MANIFEST_NAME).write_text(text, encoding="utf-8")
    return found


def describe(found: Drift) -> list[str]:
    lines = [f"changed (restore it from git; a kept file is never rewritten): {rel}"
             for rel in found.changed]
    lines += [f"missing (restore it from git, or move it to archive/): {rel}"
              for rel in found.missing]
    lines += [f"new, not in {MANIFEST_NAME} yet (run `{REGENERATE}`): {rel}" for rel in found.new]
    lines += [f"moved, its line still names the old path (run `{REGENERATE}`): {old} -> {new}"
              for old, new in found.moved.items()]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 on drift")
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results folder")
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        print(f"manifest: no folder {args.results}", file=sys.stderr)
        return 2
    try:
        found = drift(args.results) if args.check else update(args.results)
    except ValueError as e:
        print(f"manifest: {e}", file=sys.stderr)
        return 2
    for line in describe(found) if args.check else describe(Drift(found.changed, found.missing)):
        print(line)
    if args.check:
        return 1 if found else 0
    added = len(found.new) + len(found.moved)
    print(f"{MANIFEST_NAME}: {added} line(s) added or moved; {len(read(args.results))} in all")
    return 1 if found.changed or found.missing else 0


if __name__ == "__main__":
    sys.exit(main())
