"""The results database is not trusted to name code: a workload path read from it is imported
only when the file holds the measured bytes (the stored source hash), checked before any
import, by `advisor.apply`, `advisor worker` and the confirmation; warm-start artifacts are
loaded only on the fingerprint they were saved on."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from advisor import settings
from advisor.config import EAGER_FP32
from advisor.db import ResultStore
from advisor.errors import ConfigError, WorkloadError
from advisor.search.request import SweepSettings
from advisor.workload import trusted_path, workload_sha256

HONEST = Path(__file__).resolve().parents[1] / "workloads" / "four_dtypes.py"


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    """A file that leaves a mark when anything imports it, and where the mark would be."""
    mark = tmp_path / "imported.mark"
    planted = tmp_path / "planted.py"
    planted.write_text(f"open({str(mark)!r}, 'w').write('ran')\n")
    return planted, mark


def test_trusted_path_checks_the_bytes_before_any_import(tmp_path: Path) -> None:
    planted, mark = _planted(tmp_path)
    assert trusted_path(HONEST, workload_sha256(HONEST), "w") == HONEST
    with pytest.raises(WorkloadError, match="differs from the workload file w was measured"):
        trusted_path(planted, workload_sha256(HONEST), "w")
    with pytest.raises(WorkloadError, match="no source hash"):
        trusted_path(planted, None, "w")
    with pytest.raises(WorkloadError, match="is not here"):
        trusted_path(tmp_path / "gone.py", workload_sha256(HONEST), "w")
    assert not mark.exists()


def test_a_worker_does_not_import_a_path_whose_hash_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from advisor.fingerprint import add_hashes, collect
    from advisor.search.fleet import Worker

    planted, mark = _planted(tmp_path)
    cpu = add_hashes(collect("cpu"))
    monkeypatch.setenv(settings.PROBED_FINGERPRINT.name, json.dumps(cpu))
    # a worker joining from elsewhere
    monkeypatch.delenv(settings.WORKLOAD_CHECKED.name, raising=False)
    workload = {"name": "four-dtypes", "path": str(planted),
                "source_sha256": workload_sha256(HONEST), "info": {}}
    with ResultStore.from_url(f"sqlite:///{tmp_path / 'a.db'}") as store:
        stored = {**SweepSettings(device="cpu").to_dict(), "space": [EAGER_FP32.to_dict()]}
        sweep_id = store.create_sweep(workload, cpu, stored, "t", 1)
        with pytest.raises(WorkloadError, match="differs from the file sweep"):
            Worker(store, sweep_id, "cpu").check()
    assert not mark.exists()


def test_apply_does_not_import_a_planted_path(tmp_path: Path, make: SimpleNamespace) -> None:
    import torch

    import advisor
    from advisor.fingerprint import collect
    from advisor.runtime import RecommendationWarning

    planted, mark = _planted(tmp_path)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    workload = {"name": "four-dtypes", "path": str(planted),
                "source_sha256": workload_sha256(HONEST), "info": {}}
    fp = collect("cpu")
    with ResultStore.from_url(url) as store:
        store.add_trial(make.record(0, config=EAGER_FP32, workload=workload, fingerprint=fp,
                                    device="cpu"))
    model = torch.nn.Linear(32, 32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        applied = advisor.apply(model, workload="four-dtypes", db=url, device="cpu")
    assert applied.config == EAGER_FP32
    said = [str(w.message) for w in caught if issubclass(w.category, RecommendationWarning)]
    assert any("differs from the workload file four-dtypes was measured" in m for m in said), said
    assert not mark.exists()


def test_the_confirmation_does_not_import_a_planted_path(tmp_path: Path) -> None:
    from advisor.search.confirm import _workload_of

    planted, mark = _planted(tmp_path)
    record = {"workload": {"name": "w", "path": str(planted),
                           "source_sha256": workload_sha256(HONEST)}}
    with pytest.raises(ConfigError, match="differs"):
        _workload_of([record], None)
    honest = {"workload": {"name": "w", "path": str(HONEST),
                           "source_sha256": workload_sha256(HONEST)}}
    assert _workload_of([honest], None)[1] == str(HONEST.resolve())
    assert not mark.exists()


def test_an_artifact_of_another_fingerprint_is_never_loaded() -> None:
    import hashlib

    import torch

    from advisor.runtime import _load_artifact

    data = b"not a cache"
    artifact = {"data": data, "sha256": hashlib.sha256(data).hexdigest(), "uuid": "u",
                "size_bytes": len(data), "torch_version": torch.__version__,
                "fingerprint_hash": "f" * 16}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _load_artifact(artifact, "w", {"fingerprint_hash": "0" * 16}) is None
    assert caught == []  # refused before torch was handed the bytes, not failed in it
