"""A workload file described by a child (advisor.search.launcher.describe), run for real in a
fresh interpreter: the facts are the workload's own, a bad file is the user's one line (its
import's error and line, a hang cut at the limit, a child that dies at import), no temporary
file is left, and the describing process never imports torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from advisor.workload import WorkloadFacts, load_workload, workload_sha256

TESTS = Path(__file__).resolve().parents[1]
TINY_SEQ = TESTS / "workloads" / "tiny_seq.py"
HANGS_AT_IMPORT = TESTS / "reliability" / "workloads" / "hangs_at_import.py"
WAIT_S = 300  # a generous bound for the whole script on a loaded 2-core host

SCRIPT = """
import json, sys
from advisor.errors import WorkloadError
from advisor.search.launcher import describe
out = {}
for name, path, limit in json.loads(sys.argv[1]):
    try:
        d = describe(path, limit)
        out[name] = {"facts": d.workload.to_dict(), "path": str(d.path), "sha": d.source_sha256}
    except WorkloadError as e:
        out[name] = {"error": str(e)}
out["torch"] = "torch" in sys.modules
print(json.dumps(out))
"""


def test_a_child_describes_each_file_and_this_process_never_imports_torch(tmp_path: Path) -> None:
    raises = tmp_path / "raises.py"
    raises.write_text("import torch\n\nx = 1\nraise ValueError('no weights here')\n")
    dies = tmp_path / "dies.py"
    dies.write_text("import os\nos._exit(3)\n")
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    cases = [("good", str(TINY_SEQ), WAIT_S), ("raises", str(raises), WAIT_S),
             ("dies", str(dies), WAIT_S), ("empty", str(empty), WAIT_S),
             ("hangs", str(HANGS_AT_IMPORT), 3.0), ("missing", str(tmp_path / "no.py"), WAIT_S)]
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(cases)], capture_output=True,
                          text=True, timeout=WAIT_S, env={**os.environ, "TMPDIR": str(tmp)},
                          check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["torch"] is False  # imported by the children alone

    loaded = load_workload(TINY_SEQ)  # here, in this process, for comparison
    assert out["good"] == {"facts": WorkloadFacts.of(loaded.workload).to_dict(),
                           "path": str(TINY_SEQ.resolve()), "sha": workload_sha256(TINY_SEQ)}
    facts = WorkloadFacts.from_dict(out["good"]["facts"])
    assert facts.bucketable and facts.shape == loaded.workload.shape
    assert facts.traffic == loaded.workload.traffic

    assert out["raises"] == {"error": f"{raises}: import failed: ValueError: no weights here "
                                      "(line 4)"}
    assert out["dies"]["error"].startswith(f"{dies}: import failed: the child exited with "
                                           "code 3 without writing a result")
    assert out["empty"]["error"].startswith(f"{empty}: defines no `workload`")
    assert out["hangs"]["error"].startswith(f"{HANGS_AT_IMPORT}: importing it took longer than "
                                            "3 s")
    assert out["missing"]["error"].startswith(f"{tmp_path / 'no.py'}: no such workload file")
    assert list(tmp.iterdir()) == []  # every child's directory removed
