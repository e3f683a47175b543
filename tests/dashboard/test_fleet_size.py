"""The dashboard at fleet size (support.seed.seed_fleet: 2,880 trials, 12 devices of four
models, one A100 swept on the older stack after two on the newer one, one noisy host):
devices named by their short ids (model @host · fingerprint hash), heatmap labels that cannot
overlap into a block, formatted columns, tables that fit, the recommended point marked, noise
beside figures; every recommendation row shown, the noisy device kept and marked in the
heatmaps, staleness and upgrades ordered by versions (not by when measured), the two-device
axes from the data, and every page's choices in its address (read back from a link).
The label, format, staleness and unit helpers are checked without Streamlit (fast); the pages
run on the fleet database (slow); a link opened in Chromium: test_browser_fleet.py."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import altair as alt
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from support.seed import (
    FLEET_DEVICES,
    FLEET_NOISY_DEVICE,
    FLEET_TRIALS,
    GPU_STACK,
    GPU_STACK_OLD,
    fingerprint,
    seed_fleet,
)

from advisor import units
from advisor.db import ResultStore
from advisor.recommendation.staleness import (
    nearest_fingerprint,
    stack_direction,
    stack_order,
    version_key,
)
from dashboard import analysis, ui

Run = Callable[..., AppTest]


# -- without Streamlit's runtime -------------------------------------------------------------


def _groups(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    """Labelled groups from (model, device hash, env hash, torch version) rows."""
    frame = pd.DataFrame(rows, columns=["device_name", "device_hash", "env_hash",
                                        "torch_version"]).assign(workload="w")  # fmt: skip
    for field in ("cpu_model", "triton_version", "driver_version", "cuda_runtime_version"):
        frame[field] = None
    return analysis.add_labels(frame)


def test_short_groups_name_model_and_hash_unique() -> None:
    # devices by their short ids (advisor.devices): model, host (none without a sweep) and the
    # fingerprint hash, which tells every device and stack apart
    one_stack = _groups([("NVIDIA H200", "aaaa1111bbbb", "e1", "2.11.0"),
                         ("NVIDIA H200", "cccc2222dddd", "e1", "2.11.0")])  # fmt: skip
    ids = [f"H200 · {h[:8]}" for h in one_stack["fingerprint_hash"]]
    assert list(one_stack["short_group"]) == list(one_stack["device"]) == ids
    two_stacks = _groups([("NVIDIA H200", "aaaa1111bbbb", "e1", "2.11.0"),
                          ("NVIDIA H200", "aaaa1111bbbb", "e2", "2.10.0"),
                          ("NVIDIA H200", "aaaa1111bbbb", "e3xxxx", "2.10.0")])  # fmt: skip
    ids = [f"H200 · {h[:8]}" for h in two_stacks["fingerprint_hash"]]
    assert list(two_stacks["short_group"]) == [f"{ids[0]} · torch 2.11.0",
                                               f"{ids[1]} · torch 2.10.0",
                                               f"{ids[2]} · torch 2.10.0"]  # fmt: skip
    assert len(set(two_stacks["short_group"])) == 3


def test_sweeps_name_a_cpu_device_by_its_model() -> None:
    frame = analysis.sweeps_frame([{
        "id": 1, "workload": {"name": "w"}, "device_name": None, "device_hash": "abcdef0123456",
        "env_hash": "e1", "fingerprint_hash": "fedcba9876543210", "host": "cpu-host",
        "fingerprint": {"cpu_model": "Intel(R) Xeon(R) Processor"}, "status": "finished",
        "n_trials": 1, "planned_trials": 1, "n_ok": 1, "n_failed": 0,
    }])  # fmt: skip
    assert frame.at[0, "device"] == "Xeon @cpu-host · fedcba98"


def test_x_labels_never_slant_into_a_block() -> None:
    few = ui.x_labels(pd.Series(["bf16", "fp32"]), "dtype").to_dict()
    assert few["labelAngle"] == 0
    long = pd.Series([f"A100-SXM4-80GB · {i:08x} · torch 2.11.0" for i in range(12)])
    slanted = ui.x_labels(long, "device").to_dict()
    assert slanted["labelAngle"] == -45 and slanted["labelOverlap"] is False
    many = ui.x_labels(pd.Series([f"config number {i}" for i in range(60)]), "config").to_dict()
    assert many["labelAngle"] == -90 and many["labelOverlap"] == "greedy"  # thinned


def test_column_formats_and_intervals_in_human_units() -> None:
    assert units.column_format([0.037, 21.4]) == "%.3f"
    assert units.column_format([3.26, 21.4]) == "%.2f"
    assert units.column_format([12.3, 1220.0]) == "%.1f"
    assert units.column_format([None, float("nan")]) == "%.3f"
    assert units.interval_ms(0.95, 0.97) == "0.950-0.970 ms"
    assert units.interval_ms(0.036, 0.038) == "36.0-38.0 µs"
    assert units.interval_ms(1210.0, 1240.0) == "1.21-1.24 s"
    assert units.interval_ms(None, 1.0) == "-"


# -- the pages on the fleet database -----------------------------------------------------------


@pytest.fixture(scope="module")
def fleet_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('fleet') / 'fleet.db'}"
    seed_fleet(url).close()
    return url


def _specs(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]


def _marks(spec: dict) -> list[dict]:
    """Every layer of a (nested) layered chart: its mark and transforms."""
    found = []
    for layer in spec.get("layer", []):
        if "mark" in layer:
            found.append({"mark": layer["mark"], "transform": layer.get("transform", [])})
        found += _marks(layer)
    return found


def _rows(at: AppTest, index: int) -> pd.DataFrame:
    """The data rows of the page's chart ``index`` (all its data sets, stacked)."""
    import pyarrow as pa

    chart = at.get("vega_lite_chart")[index]
    frames = [pa.ipc.open_stream(d.data.data).read_pandas() for d in chart.proto.datasets]
    return pd.concat(frames, ignore_index=True)


def _ringed(spec: dict, field: str) -> bool:
    """A large black point drawn only for the rows where ``field`` says it is the pick."""
    return any(m["mark"].get("size", 0) >= 300 and m["mark"].get("color") == "black"
               and any(field in str(t) for t in m["transform"]) for m in _marks(spec))


def _config(at: AppTest, *columns: str) -> dict:
    """The column config given to the first table of the page with these columns."""
    table = next(d for d in at.dataframe if set(columns) <= set(d.value.columns))
    return json.loads(table.proto.columns)


@pytest.mark.slow
def test_fleet_pages_at_fleet_size(run_page: Run, fleet_url: str) -> None:
    at = run_page(fleet_url)
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Devices"] == str(len(FLEET_DEVICES)) == "12"
    assert metrics["Trials"] == f"{FLEET_TRIALS:,}" == "2,880"
    table = next(d.value for d in at.dataframe if "device" in d.value.columns)
    assert all(re.fullmatch(r"(H200|H100|A100|L4) @node-[a-z0-9-]+ · [0-9a-f]{8}", d)
               for d in table["device"])  # fmt: skip
    columns = _config(at, "workload", "device", "stale_reason")
    shown = [c for c, v in columns.items() if not v.get("hidden")]
    assert {"speedup", "p50_ms", "p50_ci", "noisy"} <= set(shown) and len(shown) <= 11
    assert columns["speedup"]["type_config"]["format"] == "%.2fx"
    assert columns["p50_ms"]["type_config"]["format"].startswith("%.")
    assert columns["stack"]["hidden"] and columns["stale_reason"]["hidden"]
    heat = _specs(at)[0]
    assert heat["layer"][0]["encoding"]["y"]["field"] == "short_group"

    at.switch_page("views/fleet.py").run()
    assert not at.exception and not at.error
    (heat,) = _specs(at)
    x, y = heat["layer"][0]["encoding"]["x"], heat["layer"][0]["encoding"]["y"]
    assert x["field"] == "short_group" and y["field"] == "config"  # configs as rows
    assert x["axis"]["labelAngle"] == -45 and len(x["scale"]["domain"]) == 12
    assert len(y["scale"]["domain"]) >= 30  # the top configs and every pick, one row each
    written = [m for m in heat["layer"] if m.get("mark", {}).get("type") == "text"]
    assert [m["encoding"]["text"]["field"] for m in written] == ["value"]  # values in cells
    (outline,) = [m for m in heat["layer"] if "datum.pick === true" in json.dumps(
        m.get("transform", []))]
    assert outline["mark"]["filled"] is False and outline["mark"]["stroke"] == "black"
    cells = _rows(at, 0)
    cells = cells[cells["speedup"].notna()]  # the measured cells (not the grey failed ones)
    picks = next(d.value for d in at.dataframe if "decision" in d.value.columns)
    starred = cells[cells["pick"] == True]  # noqa: E712
    assert starred["value"].str.startswith("★ ").all()
    assert not cells.loc[cells["pick"] != True, "value"].str.contains("★").any()  # noqa: E712
    # one pick per device that has one, on the config the table above names there
    with_pick = picks[picks["speedup"].notna()]
    assert sorted(zip(starred["group"].str.split(" | ", regex=False).str[0], starred["config"],
                      strict=True)) == sorted(zip(with_pick["device"], with_pick["config"],
                                                  strict=True))  # fmt: skip
    assert cells["value"].str.fullmatch(r"(★ )?\d+\.\d\dx").all()

    at.session_state["fleet_view"] = "Two devices"  # as a click on the tab does
    at = at.run()
    assert not at.exception and not at.error
    (plot,) = _specs(at)
    assert plot["height"] >= 400, "a square-ish plot, not a strip"
    assert _ringed(plot, "pick") and any(m["mark"]["type"] == "text" for m in _marks(plot))
    assert _rows(at, 0)["pick"].str.startswith("recommended on").any()
    both = _config(at, "speedup_a", "rank_a")
    assert both["speedup_a"]["type_config"]["format"] == "%.2fx"
    assert both["rank_a"]["type_config"]["format"] == "%d"


@pytest.mark.slow
def test_workload_page_marks_the_pick_and_shows_noise(run_page: Run, fleet_url: str) -> None:
    at = run_page(fleet_url, "workload")
    assert not at.exception and not at.error
    assert any(c.value.startswith("Recommended p50: ") for c in at.caption)
    scatter = _specs(at)[0]
    assert _ringed(scatter, "recommended")
    points = _rows(at, 0)
    assert points[points["recommended"] == True]["config"].nunique() == 1  # noqa: E712
    assert "ci_low" in points and "noisy" in points  # intervals drawn, noise marked
    trials = _config(at, "started", "outcome", "mode")
    assert not trials["noisy"].get("hidden") and trials["mode"]["hidden"]


def test_fleet_seed_is_labelled_made_up() -> None:
    """The screenshots' README must say the fleet figures are seed data, not measurements."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "README.md")
    text = readme.read_text()
    assert "seed_fleet" in text and "not measurements" in text


# -- staleness, upgrades, heatmaps: at fleet size, without Streamlit's runtime -----------------

A100 = "NVIDIA A100-SXM4-80GB"
OLD_ENV = fingerprint("a100-2", GPU_STACK_OLD, "gpu-old")["env_hash"]
NEW_ENV = fingerprint("a100-0", GPU_STACK, "gpu-new")["env_hash"]
APP = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"


def _fleet_groups(url: str) -> pd.DataFrame:
    """The labelled groups as the dashboard's data layer makes them (`data.groups`)."""
    from advisor.devices import DeviceNames

    with ResultStore.from_url(url, create=False) as store:
        found = pd.DataFrame(store.group_summaries())
        return analysis.add_staleness(analysis.add_labels(found, DeviceNames.of_store(store)))


def test_the_a100s_on_the_newer_torch_are_not_stale(fleet_url: str) -> None:
    """a100-2 (torch 2.10) was swept after a100-0 and a100-1 (torch 2.11): only a100-2 is
    stale, for the newer stack; a later measurement of an older stack stales nothing."""
    groups = _fleet_groups(fleet_url)
    a100 = groups[groups["model"] == A100]
    assert a100.groupby("env_hash")["last_started_at"].max()[OLD_ENV] > \
        a100.groupby("env_hash")["last_started_at"].max()[NEW_ENV]  # the older one is later
    stale = groups[groups["stale"]]
    assert set(stale["env_hash"]) == {OLD_ENV} and len(stale) == 3  # one device, 3 workloads
    assert all(r.startswith(f"{A100} measured with a newer stack: torch 2.10.0+cu128 → "
                            "2.11.0+cu130") for r in stale["stale_reason"])  # fmt: skip
    assert not groups.loc[groups["env_hash"] == NEW_ENV, "stale"].any()
    assert analysis.stacks_oldest_first(a100) == [OLD_ENV, NEW_ENV]  # an upgrade: old -> new


def test_a_newer_stack_here_is_an_upgrade_and_an_older_one_a_downgrade() -> None:
    assert version_key("2.10.0+cu128") > version_key("2.9.1") > version_key(None) == ()
    assert version_key("580.159.04") == (580, 159, 4) and version_key("91900") == (91900,)
    newer, older = fingerprint("a100", GPU_STACK, "gpu-new"), fingerprint("a100", GPU_STACK_OLD,
                                                                          "gpu-old")
    assert stack_order(older) < stack_order(newer)
    assert stack_direction(older, newer) == "upgrade"
    assert stack_direction(newer, older) == "downgrade" and stack_direction(newer, newer) == ""
    up = nearest_fingerprint(newer, [older])  # measured on 2.10, here 2.11
    assert up.direction == "upgrade"
    torch = next(c for c in up.changed if c.field == "torch_version")
    assert torch.direction == "newer here"
    assert "torch_version: 2.10.0+cu128 measured, 2.11.0+cu130 here (newer here)" in up.warning
    assert "this stack is newer than the one measured (an upgrade since)" in up.warning
    down = nearest_fingerprint(older, [newer])
    assert down.direction == "downgrade" and "(older here)" in down.warning
    assert "a downgrade" in down.warning and "an upgrade" not in down.warning
    assert down.to_dict()["direction"] == "downgrade"


def test_a_heatmap_keeps_a_row_without_a_pick_and_outlines_a_noisy_one() -> None:
    frame = pd.DataFrame({"workload": ["w", "w", "w"], "short_group": ["a", "b", "c"],
                          "speedup": [2.0, None, 3.0], "noisy": [False, None, True],
                          "label": ["2.00x", "undecided", "3.00x noisy"]})  # fmt: skip
    spec = ui.speedup_heatmap(frame, "workload", "short_group", "w", "d", text="label",
                              noisy="noisy").to_dict()  # fmt: skip
    (rows,) = spec["datasets"].values()
    assert [r["short_group"] for r in rows] == ["a", "b", "c"]  # none dropped
    filters = [json.dumps(layer.get("transform", [])) for layer in spec["layer"]]
    grey = spec["layer"][filters.index(next(f for f in filters if "isValid" in f))]
    assert grey["mark"]["color"] == ui.NO_PICK_GREY
    outline = spec["layer"][filters.index(next(f for f in filters if "datum.noisy" in f))]
    assert outline["mark"]["filled"] is False and outline["mark"]["strokeDash"]
    picked = ui.speedup_heatmap(frame.assign(pick=[True, False, False]), "workload",
                                "short_group", "w", "d", text="label", pick="pick").to_dict()
    (ring,) = [layer for layer in picked["layer"]
               if "datum.pick === true" in json.dumps(layer.get("transform", []))]
    assert ring["mark"] == {"type": "rect", "filled": False, "stroke": "black",
                            "strokeWidth": ui.PICK_STROKE_PX}
    assert picked["layer"][-1]["mark"]["type"] == "text"  # written over the outline
    clean = ui.speedup_heatmap(frame.assign(speedup=[2.0, 1.5, 3.0], noisy=False), "workload",
                               "short_group", "w", "d", noisy="noisy")  # fmt: skip
    assert isinstance(clean, alt.LayerChart) and len(clean.layer) == 1  # nothing to mark


# -- the pages at fleet size, and opened from a link (slow) ------------------------------------


def _linked(url: str, page: str, params: dict[str, str],
            monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The app on ``url`` opened at ``page`` from a link carrying ``params``."""
    monkeypatch.setenv("ADVISOR_DB_URL", url)
    st.cache_data.clear()
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.query_params = dict(params)
    return at.switch_page(f"views/{page}.py").run()


@pytest.mark.slow
def test_every_recommendation_row_and_every_device_in_the_heatmap(
        run_page: Run, fleet_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    shown: dict[str, tuple[int, object]] = {}
    real = st.dataframe

    def spy(data: pd.DataFrame, *args: object, **kwargs: object) -> object:
        shown[str(kwargs.get("key"))] = (len(data), kwargs.get("height", "auto"))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(st, "dataframe", spy)
    at = run_page(fleet_url)
    assert not at.exception and not at.error
    assert shown["recommendations"] == (36, "content")  # 3 workloads x 12: all on the page
    table = next(d.value for d in at.dataframe if "stale_reason" in d.value.columns)
    assert len(table) == 36
    assert set(table.loc[table["stale"], "device"]) == {
        d for d in table["device"] if d.startswith("A100 @node-a100-2 ")}
    heat = _rows(at, 0)
    assert sorted(zip(heat["workload"], heat["group"], strict=True)) == sorted(zip(
        table["workload"], table["device"] + " | " + table["stack"], strict=True))
    noisy = heat[heat["group"].str.contains(f"@node-{FLEET_NOISY_DEVICE} ")]
    assert len(noisy) == 3 and noisy["noisy"].all()
    assert noisy["label"].str.endswith(" noisy").all()
    assert any("datum.noisy === true" in json.dumps(m["transform"]) for m in _marks(_specs(at)[0]))
    # Twenty-odd equivalent picks: one folded list under its count, not a wall of boxes
    equivalent = int((table["decision"] == "equivalent").sum())
    assert equivalent > 10 and len(at.info) == 0
    (folded,) = [e for e in at.expander if "picks among equivalent configs" in e.label]
    assert folded.label.startswith(f"{equivalent} picks") and len(folded.markdown) == equivalent

    at.switch_page("views/fleet.py").run()
    assert not at.exception and not at.error
    assert shown["fleet_picks"] == (12, "content")
    (spec,) = _specs(at)
    columns = spec["layer"][0]["encoding"]["x"]["scale"]["domain"]
    assert len(columns) == 12  # the noisy host's column kept, and marked
    assert [c for c in columns if c.startswith("noisy · ")] == [
        c for c in columns if f"@node-{FLEET_NOISY_DEVICE} " in c]
    assert len([c for c in columns if c.startswith("noisy · ")]) == 1


@pytest.mark.slow
def test_the_fleet_page_from_a_link(fleet_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    groups = _fleet_groups(fleet_url)
    guard = groups[groups["workload"] == "guardrail"]
    a = next(g for g in guard["group"] if f"@node-{FLEET_NOISY_DEVICE} " in g)
    b = next(g for g in guard["group"] if "@node-a100-2 " in g)  # neither is a default
    params = {"fleet_workload": "guardrail", "fleet_view": "Two devices", "device_a": a,
              "device_b": b}  # fmt: skip
    at = _linked(fleet_url, "fleet", params, monkeypatch)
    assert not at.exception and not at.error
    assert at.selectbox(key="fleet_workload").value == "guardrail"
    assert at.session_state["fleet_view"] == "Two devices"
    assert (at.selectbox(key="device_a").value, at.selectbox(key="device_b").value) == (a, b)
    for key in ("fleet_workload", "device_a", "device_b"):  # the browser writes them back
        assert at.selectbox(key=key).proto.query_param_key == key
    assert at.query_params == params  # kept, not cleared as invalid or default

    # The two-device plot's axes come from its points (and 1x), not a fixed 0.1-10.
    (plot,) = _specs(at)
    points = _rows(at, 0).dropna(subset=["speedup_a", "speedup_b"])
    low = min(points["speedup_a"].min(), points["speedup_b"].min(), 1.0)
    high = max(points["speedup_a"].max(), points["speedup_b"].max(), 1.0)
    for axis, field in (("x", "speedup_a"), ("y", "speedup_b")):
        scale = next(layer["encoding"][axis]["scale"] for layer in _layers(plot)
                     if layer.get("encoding", {}).get(axis, {}).get("field") == field)
        lo, hi = scale["domain"]
        assert scale["type"] == "log" and scale["nice"] is False
        assert low / 1.3 <= lo <= low and high <= hi <= high * 1.3, (scale, low, high)
    assert high < 10 and [lo, hi] != [0.1, 10]

    at.query_params = {"fleet_workload": "guardrail", "fleet_view": "Software upgrade"}
    at = at.run()
    assert not at.exception and not at.error
    assert at.selectbox(key="upgrade_model").value == A100
    assert at.selectbox(key="upgrade_from").value == OLD_ENV  # torch 2.10: older, measured last
    assert at.selectbox(key="upgrade_to").value == NEW_ENV
    changed = next(m.value for m in at.markdown if m.value.startswith("**Changed:**"))
    assert "torch 2.10.0+cu128 → 2.11.0+cu130" in changed


def _layers(spec: dict) -> list[dict]:
    """Every layer of a (nested) layered chart, with its encoding."""
    found = []
    for layer in spec.get("layer", []):
        found.append(layer)
        found += _layers(layer)
    return found


@pytest.mark.slow
def test_the_workload_page_from_a_link(fleet_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    groups = _fleet_groups(fleet_url)
    label = next(g for g in groups.loc[groups["workload"] == "guardrail", "group"]
                 if "@node-a100-1 " in g)  # fmt: skip
    at = _linked(fleet_url, "workload", {"workload": "guardrail", "group": label}, monkeypatch)
    assert not at.exception and not at.error
    assert at.selectbox(key="workload").value == "guardrail"
    assert at.selectbox(key="group").value == label
    assert at.selectbox(key="group").proto.query_param_key == "group"
    assert {m.label: m.value for m in at.metric}["Trials"] == "40"
    assert not any(w.value.startswith("Stale") for w in at.warning)  # newest torch: not stale
