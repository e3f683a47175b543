"""The store's contract, run against every backend (SQLite file; PostgreSQL when configured)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from advisor.config import CompileConfig
from advisor.db import ResultStore, head_revision
from advisor.db.models import Base
from advisor.errors import StoreError
from advisor.records import empty_record

EAGER = CompileConfig(mode="eager", dtype="fp32")
FAST = CompileConfig(mode="reduce-overhead", dtype="bf16")


def _sweep(
    store: ResultStore, make: SimpleNamespace, workload: dict | None = None, fp: dict | None = None
) -> int:
    workload, fp = workload or make.workload(), fp or make.fingerprint()
    return store.create_sweep(workload, fp, {"trials": 5, "seed": 0}, "st", 5)


def test_a_new_database_is_created_at_head(db_url: str) -> None:
    with ResultStore.from_url(db_url) as store:
        assert store.revision() == head_revision()
    tables = set(inspect(create_engine(db_url)).get_table_names())
    assert {"advisor_trials", "advisor_sweeps", "advisor_alembic_version"} <= tables
    assert not tables & {"trials", "studies", "alembic_version"}, "Optuna's names stay free"


def test_migrated_schema_matches_the_models(store: ResultStore) -> None:
    engine = create_engine(store.url)
    with engine.connect() as connection:
        context = MigrationContext.configure(
            connection,
            opts={
                "compare_type": True,
                "include_name": lambda name, kind, _: (
                    kind != "table"
                    or (name.startswith("advisor_") and name != "advisor_alembic_version")
                ),
            },
        )
        assert compare_metadata(context, Base.metadata) == []
    engine.dispose()


def test_a_trial_round_trips_every_field(store: ResultStore, make: SimpleNamespace) -> None:
    sweep_id = _sweep(store, make)
    sweep_uuid = store.get_sweep(sweep_id)["uuid"]
    ok = make.record(1)
    failed = make.record(2, status="failed")
    odd = make.record(3, max_rel_err=math.inf, telemetry={}, graph_breaks=[], note="kept")
    for record in (ok, failed, odd):
        assert store.add_trial(record, sweep_id) == record["trial_uuid"]
    standalone = make.record(4)
    store.add_trial(standalone)
    stored = store.trials()
    assert stored == [
        make.stored(ok, sweep_id, sweep_uuid),
        make.stored(failed, sweep_id, sweep_uuid),
        make.stored(odd, sweep_id, sweep_uuid),
        make.stored(standalone, None, None),
    ]
    assert list(stored[0]) == [*empty_record(), "sweep_id", "sweep_uuid"]
    assert list(stored[2])[-3:] == ["note", "sweep_id", "sweep_uuid"]


def test_adding_a_trial_again_is_a_no_op(store: ResultStore, make: SimpleNamespace) -> None:
    record = make.record(1)
    assert store.add_trial(record) == store.add_trial(record) == record["trial_uuid"]
    assert store.add_trials([record, make.record(2), make.record(2)]) == [
        record["trial_uuid"],
        make.record(2)["trial_uuid"],
        make.record(2)["trial_uuid"],
    ]
    assert len(store.trials()) == 2


def test_a_warm_start_is_recorded_on_a_stored_trial(
    store: ResultStore, make: SimpleNamespace
) -> None:
    first, second = make.record(1, warm_compile_s=None), make.record(2, warm_compile_s=None)
    store.add_trials([first, second])
    store.set_warm_start(second["trial_uuid"], 4.25)
    warm = {r["trial_uuid"]: r["warm_compile_s"] for r in store.trials()}
    assert warm == {first["trial_uuid"]: None, second["trial_uuid"]: 4.25}
    with pytest.raises(StoreError, match="no trial nope"):
        store.set_warm_start("nope", 1.0)
    with pytest.raises(StoreError, match="not a duration"):
        store.set_warm_start(first["trial_uuid"], float("nan"))
    assert store.trials()[0]["warm_compile_s"] is None  # nothing written by the refusals


def test_a_serving_process_alone_is_recorded_on_its_replay(
    store: ResultStore, make: SimpleNamespace
) -> None:
    stream = {"startup_s": 9.0, "per_request_ms": [5.0, 1.0, 1.0], "new_shape": [0],
              "mean_ms": 7 / 3}
    replayed = make.record(1, replay={"mean_ms": 1.0, "stream": stream})
    plain = make.record(2)
    store.add_trials([replayed, plain])
    alone = {"startup_s": 4.0, "per_request_ms": [3.0, 1.0, 1.0], "new_shape": [0]}
    store.set_serving_alone(replayed["trial_uuid"], alone)
    (got,) = [r for r in store.trials() if r["trial_uuid"] == replayed["trial_uuid"]]
    assert got["replay"]["stream"]["alone"] == alone
    assert got["replay"]["stream"]["startup_s"] == 9.0  # the trial's own, kept beside
    refusals = [(plain["trial_uuid"], alone, "no replay trial"),
                (replayed["trial_uuid"], {**alone, "startup_s": None}, "no start-up"),
                (replayed["trial_uuid"], {**alone, "startup_s": float("nan")}, "no start-up"),
                (replayed["trial_uuid"], {**alone, "per_request_ms": [1.0]}, "not its stream"),
                ("nope", alone, "no replay trial nope")]
    for uuid, bad, match in refusals:
        with pytest.raises(StoreError, match=match):
            store.set_serving_alone(uuid, bad)
    (again,) = [r for r in store.trials() if r["trial_uuid"] == replayed["trial_uuid"]]
    assert again["replay"]["stream"]["alone"] == alone  # nothing written by the refusals


def test_a_record_without_uuid_gets_one(store: ResultStore, make: SimpleNamespace) -> None:
    trial_uuid = store.add_trial(make.record(1, trial_uuid=None))
    assert [r["trial_uuid"] for r in store.trials()] == [trial_uuid]


def test_a_record_without_fingerprint_or_workload_takes_its_sweeps(
    store: ResultStore, make: SimpleNamespace
) -> None:
    sweep_id = _sweep(store, make, make.workload("pointwise"), make.fingerprint(7))
    record = make.record(1, status="failed")
    store.add_trial({**record, "fingerprint": None, "workload": None}, sweep_id)
    whole = {**record, "fingerprint": make.fingerprint(7), "workload": make.workload("pointwise")}
    assert store.trials(device_hash=make.fingerprint(7)["device_hash"], workload="pointwise") == [
        make.stored(whole, sweep_id, store.get_sweep(sweep_id)["uuid"])
    ]
    with pytest.raises(StoreError, match="fingerprint"):
        store.add_trial({**make.record(2), "fingerprint": None})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "maybe"}, "status"),
        ({"trial_uuid": 12}, "trial_uuid"),
        ({"median_ms": "fast"}, "median_ms"),
        ({"started_at": "yesterday"}, "started_at"),
        ({"workload": {"path": "x.py"}}, "workload"),
        ({"shapes": [1, 2]}, "shapes"),
    ],
)
def test_invalid_records_are_refused_whole(
    store: ResultStore, change: dict, message: str, make: SimpleNamespace
) -> None:
    with pytest.raises(StoreError, match=message):
        store.add_trials([make.record(1), {**make.record(2), **change}])
    assert store.trials() == []


def test_a_pruned_trial_round_trips_with_its_bound_and_no_figure(
    store: ResultStore, make: SimpleNamespace
) -> None:
    """A replay stopped once proven worse (advisor.records.Pruned): its bound kept (the JSON
    column), no measured figure, counted apart from failures."""
    sweep_id = _sweep(store, make)
    sweep_uuid = store.get_sweep(sweep_id)["uuid"]
    stopped = {**make.record(2, status="failed"), "status": "pruned", "failure_reason": None,
               "error_tail": None, "cold_compile_s": 17.25, "method": "cuda_events",
               "pruned": {"lower_bound_ms": 9.875, "above_ms": 1.1, "requests_served": 12,
                          "requests_total": 300, "calls_per_process": 10_000,
                          "reason": "after 12 of 300 requests ... above 1.1 ms"}}
    store.add_trials([make.record(1), stopped], sweep_id)
    assert store.trials(status="pruned") == [make.stored(stopped, sweep_id, sweep_uuid)]
    sweep = store.get_sweep(sweep_id)
    assert (sweep["n_trials"], sweep["n_ok"], sweep["n_failed"], sweep["n_pruned"]) == (2, 1, 0, 1)
    (group,) = store.group_summaries()
    assert (group["n_failed"], group["n_pruned"]) == (0, 1)
    assert stopped["config_key"] in store.config_keys_done(sweep_id)
    fresh = "00000000-0000-4000-8000-000000000099"
    for change, message in (({"median_ms": 1.5}, "no median_ms"),
                            ({"pruned": None}, "pruned.lower_bound_ms")):
        with pytest.raises(StoreError, match=message):
            store.add_trial({**stopped, "trial_uuid": fresh, **change}, sweep_id)
    assert len(store.trials()) == 2  # nothing written by the refusals


def test_sweeps_open_count_and_finish(store: ResultStore, make: SimpleNamespace) -> None:
    fp = make.fingerprint(1)
    sweep_id = _sweep(store, make, make.workload("reranker"), fp)
    store.add_trials(
        [
            make.record(1, fingerprint=fp, config=EAGER, median_ms=6.2),
            make.record(2, fingerprint=fp, config=FAST, median_ms=0.96),
            make.record(3, fingerprint=fp, median_ms=0.5, passed=False),
            make.record(4, fingerprint=fp, status="failed"),
        ],
        sweep_id,
    )
    sweep = store.get_sweep(sweep_id)
    assert sweep["status"] == "running" and sweep["finished_at"] is None
    assert (sweep["n_trials"], sweep["n_ok"], sweep["n_failed"]) == (4, 3, 1)
    assert sweep["best_median_ms"] == 0.96
    assert sweep["workload"] == make.workload("reranker") and sweep["fingerprint"] == fp
    assert sweep["settings"] == {"trials": 5, "seed": 0} and sweep["planned_trials"] == 5
    assert (sweep["study_name"], sweep["host"], sweep["device_hash"]) == (
        "st",
        "gpu-node-1",
        fp["device_hash"],
    )
    store.finish_sweep(sweep_id, "interrupted")
    assert store.get_sweep(sweep["uuid"])["status"] == "interrupted"
    assert store.get_sweep(sweep_id)["finished_at"] is not None
    store.finish_sweep(sweep_id, "running")
    assert store.get_sweep(sweep_id)["finished_at"] is None


def test_sweeps_are_listed_newest_first_and_filtered(
    store: ResultStore, make: SimpleNamespace
) -> None:
    first = _sweep(store, make, make.workload("a"))
    second = _sweep(store, make, make.workload("b"), make.fingerprint(2))
    store.finish_sweep(first)
    assert [s["id"] for s in store.sweeps()] == [second, first]
    assert [s["id"] for s in store.sweeps(workload="a")] == [first]
    assert [s["id"] for s in store.sweeps(status="running")] == [second]
    assert [s["id"] for s in store.sweeps(device_hash=make.fingerprint(2)["device_hash"])] == [
        second
    ]
    assert [s["id"] for s in store.sweeps(limit=1)] == [second]
    assert store.sweeps()[0]["n_trials"] == 0 and store.sweeps()[0]["best_median_ms"] is None


def test_unknown_sweeps_and_statuses_are_store_errors(
    store: ResultStore, make: SimpleNamespace
) -> None:
    with pytest.raises(StoreError, match="no sweep 99"):
        store.get_sweep(99)
    with pytest.raises(StoreError, match="no sweep with id 99"):
        store.finish_sweep(99)
    with pytest.raises(StoreError, match="no sweep with id 99"):
        store.add_trial(make.record(1), 99)
    with pytest.raises(StoreError, match="sweep status"):
        store.finish_sweep(_sweep(store, make), "done")
    with pytest.raises(StoreError, match="trial status"):
        store.trials(status="passed")


def test_trials_are_filtered(store: ResultStore, make: SimpleNamespace) -> None:
    a, b = make.fingerprint(1), make.fingerprint(2)
    sweep_id = _sweep(store, make, fp=a)
    in_sweep = [make.record(i, fingerprint=a) for i in range(3)]
    store.add_trials(in_sweep, sweep_id)
    other = make.record(5, fingerprint=b, workload=make.workload("other"), status="failed")
    store.add_trial(other)

    def uuids(**filters: object) -> list[str]:
        return [r["trial_uuid"] for r in store.trials(**filters)]  # type: ignore[arg-type]

    everything = [r["trial_uuid"] for r in [*in_sweep, other]]
    assert uuids() == everything
    assert uuids(sweep_id=sweep_id) == everything[:3]
    assert uuids(workload="other") == uuids(device_hash=b["device_hash"]) == everything[3:]
    assert uuids(status="failed") == everything[3:]
    assert uuids(fingerprint_hash=a["fingerprint_hash"]) == everything[:3]
    assert uuids(limit=2) == everything[2:]
    assert uuids(workload="nothing") == []


def test_config_keys_done_leave_out_interrupted_trials(
    store: ResultStore, make: SimpleNamespace
) -> None:
    sweep_id = _sweep(store, make)
    store.add_trials(
        [
            make.record(0, config=make.configs[0]),
            make.record(1, config=make.configs[1], status="failed"),
            make.record(2, config=make.configs[2], status="failed", failure_reason="interrupted"),
        ],
        sweep_id,
    )
    store.add_trial(make.record(3, config=make.configs[3]))
    assert store.config_keys_done(sweep_id) == {make.configs[0].key, make.configs[1].key}


def test_workloads_and_devices(store: ResultStore, make: SimpleNamespace) -> None:
    store.add_trial(make.record(1, workload=make.workload("b"), fingerprint=make.fingerprint(1)))
    store.add_trial(make.record(2, workload=make.workload("a"), fingerprint=make.fingerprint(1)))
    store.add_trial(make.record(3, workload=make.workload("a"), fingerprint=make.fingerprint(2)))
    assert store.workloads() == ["a", "b"]
    devices = {d["device_hash"]: d for d in store.devices()}
    one = make.fingerprint(1)
    assert devices[one["device_hash"]] == {
        "device_hash": one["device_hash"],
        **{k: one[k] for k in ("device_kind", "device_name", "compute_capability")},
        **{k: one[k] for k in ("device_memory_bytes", "sm_count", "cpu_model", "cpu_cores")},
        "host_memory_bytes": one["host_memory_bytes"],
        "cpu_isa": None, "cpu_flags": None,  # a GPU fingerprint of before they were probed
        "n_trials": 2,
    }
    assert devices[make.fingerprint(2)["device_hash"]]["n_trials"] == 1


def test_a_devices_cpu_isa_and_flags_are_columns(store: ResultStore, make: SimpleNamespace) -> None:
    cpu = make.fingerprint(7, device_kind="cpu", device_name="Intel Xeon Processor",
                           cpu_isa="AVX512", cpu_flags="amx_tile avx2 avx512f")
    store.add_trial(make.record(1, fingerprint=cpu))
    (device,) = store.devices()
    assert (device["cpu_isa"], device["cpu_flags"]) == ("AVX512", "amx_tile avx2 avx512f")
    (record,) = store.trials()
    assert record["fingerprint"]["cpu_isa"] == "AVX512"


def test_best_config_per_workload_and_device(store: ResultStore, make: SimpleNamespace) -> None:
    h200, l4 = make.fingerprint(0), make.fingerprint(2)
    trials = [
        make.record(1, fingerprint=h200, config=EAGER, median_ms=6.2),
        make.record(2, fingerprint=h200, config=FAST, median_ms=0.96),
        make.record(3, fingerprint=h200, median_ms=0.5, passed=False),  # fast but wrong
        make.record(4, fingerprint=h200, status="failed"),
        make.record(5, fingerprint=l4, config=make.configs[1], median_ms=9.0),
        make.record(6, fingerprint=h200, workload=make.workload("other"), median_ms=3.0),
    ]
    store.add_trials(trials)
    best = {(b["workload"], b["device_hash"]): b for b in store.best_per_workload_device()}
    assert len(best) == 3
    h = best[("reranker", h200["device_hash"])]
    assert (h["trial_uuid"], h["config_key"], h["median_ms"]) == (
        trials[1]["trial_uuid"],
        FAST.key,
        0.96,
    )
    assert h["eager_median_ms"] == 6.2 and h["speedup"] == pytest.approx(6.2 / 0.96)
    assert (h["env_hash"], h["torch_version"], h["device_name"]) == (
        h200["env_hash"],
        "2.11.0+cu128",
        "NVIDIA H200",
    )
    assert h["config"] == FAST.to_dict() and h["started_at"] == trials[1]["started_at"]
    no_eager = best[("reranker", l4["device_hash"])]
    assert no_eager["eager_median_ms"] is None and no_eager["speedup"] is None
    assert [b["workload"] for b in store.best_per_workload_device("other")] == ["other"]


def test_device_comparison(store: ResultStore, make: SimpleNamespace) -> None:
    a, b = make.fingerprint(0), make.fingerprint(1)
    store.add_trials(
        [
            make.record(1, fingerprint=a, config=EAGER, median_ms=6.0),
            make.record(2, fingerprint=a, config=EAGER, median_ms=5.0),
            make.record(3, fingerprint=a, config=FAST, status="failed"),
            make.record(4, fingerprint=b, config=FAST, median_ms=1.0),
        ]
    )
    rows = {(r["device_hash"], r["config_key"]): r for r in store.device_comparison("reranker")}
    assert set(rows) == {(a["device_hash"], EAGER.key), (a["device_hash"], FAST.key),
                         (b["device_hash"], FAST.key)}  # fmt: skip
    eager_a = rows[(a["device_hash"], EAGER.key)]
    assert (eager_a["n_trials"], eager_a["n_passed"], eager_a["best_median_ms"]) == (2, 2, 5.0)
    failed = rows[(a["device_hash"], FAST.key)]
    assert (failed["n_trials"], failed["n_passed"], failed["best_median_ms"]) == (1, 0, None)


def _fill_for_transfer(store: ResultStore, make: SimpleNamespace) -> None:
    sweep_id = _sweep(store, make)
    store.add_trials([make.record(i) for i in range(4)], sweep_id)
    store.add_trial(make.record(4, status="failed", fingerprint=make.fingerprint(1)))
    store.finish_sweep(sweep_id, "finished")
    other = _sweep(store, make, make.workload("other"), make.fingerprint(2))
    store.add_trial(make.record(5, workload=make.workload("other"), extra_key=[1, 2]), other)


def test_export_then_import_into_an_empty_database_round_trips(
    store: ResultStore, new_db_url: Callable[[], str], make: SimpleNamespace
) -> None:
    _fill_for_transfer(store, make)
    exported = store.export()
    assert len(exported) == 6 and all("sweep_id" not in r for r in exported)
    with ResultStore.from_url(new_db_url()) as other:
        assert other.import_records(exported) == (6, 0)
        assert other.export() == exported
        assert _without(other.trials(), "sweep_id") == _without(store.trials(), "sweep_id")
        # the owner (this host's process that ran a sweep) stays behind: an import has none
        assert _without(other.sweeps(), "id", "owner") == _without(store.sweeps(), "id", "owner")
        assert {s["owner"]["pid"] for s in store.sweeps()} == {os.getpid()}
        assert [s["owner"] for s in other.sweeps()] == [None, None]
        assert _without(other.best_per_workload_device(), "sweep_id") == _without(
            store.best_per_workload_device(), "sweep_id"
        )
        assert other.devices() == store.devices()
        assert other.import_records(exported) == (0, 6)
        assert len(other.trials()) == 6


def _without(rows: list[dict], *keys: str) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in keys} for row in rows]


def test_export_of_one_workload(store: ResultStore, make: SimpleNamespace) -> None:
    _fill_for_transfer(store, make)
    assert {r["workload"]["name"] for r in store.export("other")} == {"other"}
    assert len(store.export("reranker")) == 5


def test_import_merges_into_a_database_with_results(
    store: ResultStore, new_db_url: Callable[[], str], make: SimpleNamespace
) -> None:
    _fill_for_transfer(store, make)
    exported = store.export()
    with ResultStore.from_url(new_db_url()) as other:
        other.add_trial(make.record(0))  # the same trial, measured here
        other.add_trial(make.record(99))  # one the exporter does not have
        assert other.import_records(exported) == (5, 1)
        assert len(other.trials()) == 7
        assert len(other.sweeps()) == 2


def test_a_bad_import_writes_nothing(store: ResultStore, make: SimpleNamespace) -> None:
    good = make.record(1)
    bad_sweep = {**make.record(2), "sweep": {"uuid": "s-1", "status": "running"}}
    with pytest.raises(StoreError, match="record 1: its sweep lacks"):
        store.import_records([good, bad_sweep])
    with pytest.raises(StoreError, match="status"):
        store.import_records([good, make.record(3, status="unknown")])
    with pytest.raises(StoreError, match="not a dict"):
        store.import_records([good, ["not", "a", "record"]])  # type: ignore[list-item]
    assert store.trials() == [] and store.sweeps() == []


def test_optuna_shares_the_database(store: ResultStore, make: SimpleNamespace) -> None:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(storage=store.url, study_name="shared")
    study.optimize(lambda trial: trial.suggest_float("x", 0, 1), n_trials=2)
    store.add_trial(make.record(1))
    with ResultStore.from_url(store.url) as again:
        assert again.revision() == head_revision()
        assert len(again.trials()) == 1
    loaded = optuna.load_study(study_name="shared", storage=store.url)
    assert len(loaded.trials) == 2


def test_values_that_are_not_plain_data_are_one_line_store_errors(
    store: ResultStore, make: SimpleNamespace
) -> None:
    with pytest.raises(StoreError, match=r"creating a sweep failed on .*: Object of type set") as e:
        store.create_sweep(make.workload(), make.fingerprint(), {"modes": {"a"}}, "s", None)
    assert "\n" not in str(e.value) and "INSERT" not in str(e.value)
    assert store.sweeps() == []


def test_analyze_refreshes_statistics_and_changes_no_results(
    store: ResultStore, make: SimpleNamespace
) -> None:
    store.add_trials([make.record(i) for i in range(5)])
    before = store.best_per_workload_device()
    store.analyze()
    assert store.best_per_workload_device() == before
