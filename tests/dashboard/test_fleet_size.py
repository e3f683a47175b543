"""The dashboard at fleet size (dashboard_seed.seed_fleet: 2,880 trials, 12 devices of four
models): devices named by model and short hash, heatmap labels that cannot overlap into a
block, formatted columns, tables that fit, the recommended point marked, noise beside figures.
The label, format and unit helpers are checked without Streamlit (fast); the pages run once
on the fleet database (slow)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from dashboard_seed import FLEET_DEVICES, FLEET_TRIALS, seed_fleet
from streamlit.testing.v1 import AppTest

from advisor import units
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
    one_stack = _groups([("NVIDIA H200", "aaaa1111bbbb", "e1", "2.11.0"),
                         ("NVIDIA H200", "cccc2222dddd", "e1", "2.11.0")])  # fmt: skip
    assert list(one_stack["short_group"]) == ["H200 · aaaa1111", "H200 · cccc2222"]
    assert list(one_stack["device"]) == ["NVIDIA H200 · aaaa1111", "NVIDIA H200 · cccc2222"]
    two_stacks = _groups([("NVIDIA H200", "aaaa1111bbbb", "e1", "2.11.0"),
                          ("NVIDIA H200", "aaaa1111bbbb", "e2", "2.10.0"),
                          ("NVIDIA H200", "aaaa1111bbbb", "e3xxxx", "2.10.0")])  # fmt: skip
    assert list(two_stacks["short_group"]) == [
        "H200 · aaaa1111 · torch 2.11.0", "H200 · aaaa1111 · torch 2.10.0 · e2",
        "H200 · aaaa1111 · torch 2.10.0 · e3xxxx",
    ]  # fmt: skip


def test_sweeps_name_a_cpu_device_by_its_model() -> None:
    frame = analysis.sweeps_frame([{
        "id": 1, "workload": {"name": "w"}, "device_name": None, "device_hash": "abcdef0123456",
        "fingerprint": {"cpu_model": "Intel(R) Xeon(R) Processor"}, "status": "finished",
        "n_trials": 1, "planned_trials": 1, "n_ok": 1, "n_failed": 0,
    }])  # fmt: skip
    assert frame.at[0, "device"] == "Intel(R) Xeon(R) Processor · abcdef01"


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
    assert all(d.startswith("NVIDIA ") and len(d.rsplit(" · ", 1)[1]) == 8
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
    assert len(y["scale"]["domain"]) == 30  # the top configs, one row each

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
