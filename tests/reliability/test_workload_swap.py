"""A child imports only the workload bytes its parent checked. The parent checks the file (a
sweep imports it; `recommend --confirm` and `advisor worker` compare it with the stored source
hash) and hands that hash to every child in its spec; the child reads the file once, hashes
those bytes and imports them only when the hash is the same. A file swapped in between is
refused in a clear line, and nothing of it runs (the swapped file would leave a mark)."""

from __future__ import annotations

from pathlib import Path

from reliability_support import sweep_support

from advisor.config import EAGER_FP32
from advisor.search.launcher import Launcher
from advisor.stats import Rounds
from advisor.workload import load_workload, trusted_path, workload_sha256

REFUSED = "changed after advisor checked it"


def _swap(path: Path, mark: Path) -> None:
    """Put another workload at ``path``: the same one, plus code that leaves ``mark``."""
    source = sweep_support.FOUR_DTYPES.read_text()
    path.write_text(f"{source}\nimport pathlib\npathlib.Path({str(mark)!r}).write_text('ran')\n")


def test_a_trial_child_refuses_a_file_swapped_after_its_sweep_loaded_it(tmp_path: Path) -> None:
    path, mark = tmp_path / "w.py", tmp_path / "swapped-code-ran"
    path.write_text(sweep_support.FOUR_DTYPES.read_text())
    load_workload(path)  # the sweep's import: its bytes are the ones measured
    _swap(path, mark)
    record = Launcher(timeout_s=300).run(path, EAGER_FP32, "cpu")
    assert record["status"] == "failed" and record["failure_reason"] == "workload_error"
    assert REFUSED in record["error_tail"]
    assert not mark.exists()


def test_the_confirmation_child_refuses_a_file_swapped_after_the_hash_check(
        tmp_path: Path) -> None:
    """`recommend --confirm`: the parent compares the file with the stored hash
    (`trusted_path`), then starts the confirmation child, which imports the file again."""
    path, mark = tmp_path / "w.py", tmp_path / "swapped-code-ran"
    path.write_text(sweep_support.FOUR_DTYPES.read_text())
    trusted_path(path, workload_sha256(path), "four-dtypes")
    _swap(path, mark)
    spec = {"kind": "confirm", "workload_path": str(path), "device": "cpu",
            "configs": [EAGER_FP32.to_dict()], "rounds": Rounds.for_device("cpu").to_dict(),
            "shapes": [{"shape": "batch=8", "dims": {"batch": 8}, "weight": 1.0}]}
    result = Launcher(timeout_s=300).run_child(spec)
    assert result["status"] == "failed" and REFUSED in result["error_tail"]
    assert not mark.exists()
