"""Recommendations: one row per workload x device x software stack, filterable."""

import streamlit as st

from advisor.presentation.report import NAMED, named
from dashboard import analysis, data, ui


def _cell_text(speedup: float | None, noisy: object, decision: str) -> str:
    """A heatmap cell's words: ``6.46x``, ``7.25x noisy``, or why there is no pick."""
    if speedup is None or speedup != speedup:  # None or NaN: no pick
        return "undecided" if str(decision).startswith("undecided") else "no pick"
    marked = noisy is not None and noisy == noisy and bool(noisy)  # None or NaN: unknown
    return f"{speedup:.2f}x" + (" noisy" if marked else "")


url = ui.connect()
st.title("Recommendations")
st.caption(
    "What `advisor recommend` says for each workload on each device and software stack (the "
    "same function every surface calls): each config's figure pools all its full trials "
    "(paired confirmation first), a simpler config wins only a tie on paired figures within "
    "2%, configs the evidence cannot order are *equivalent* when all clearly beat eager fp32 "
    "(the lower cold compile, then the simpler, is picked), else *undecided* (*undecided: "
    "noise* on noisy timings: no pick). Every speedup is against the baseline figure named in "
    "its row; break-even is against the fastest eager config of the same stack. A row is "
    "*stale* when its device model has been measured with a newer stack (newer torch, triton, "
    "CUDA or driver versions): a device on the newest versions is never stale. The filters "
    "are kept in the page's address: copy it to share this view."
)

recs = data.recommendations(url)
left, middle, right, last = st.columns([2, 3, 3, 1.3], vertical_alignment="bottom")
# Every filter is bound to the page's address (?workloads=...&devices=...): a link opens this view.
workloads = left.multiselect("Workload", sorted(recs["workload"].unique()), placeholder="all",
                             key="workloads", bind="query-params")  # fmt: skip
devices = middle.multiselect("Device", sorted(recs["device"].unique()), placeholder="all",
                             key="devices", bind="query-params")  # fmt: skip
stacks = right.multiselect("Software stack", sorted(recs["stack"].unique()), placeholder="all",
                           key="stacks", bind="query-params")  # fmt: skip
hide_stale = last.toggle("Hide stale", help="Hide rows whose device model has a newer stack.",
                         key="hide_stale", bind="query-params")  # fmt: skip

shown = recs
if workloads:
    shown = shown[shown["workload"].isin(workloads)]
if devices:
    shown = shown[shown["device"].isin(devices)]
if stacks:
    shown = shown[shown["stack"].isin(stacks)]
if hide_stale:
    shown = shown[~shown["stale"]]
shown = shown.assign(last_measured=analysis.utc_times(shown["last_started_at"]))

counts = st.columns(5)
counts[0].metric("Workloads", shown["workload"].nunique())
counts[1].metric("Devices", shown["device_hash"].nunique())
counts[2].metric("Software stacks", shown["env_hash"].nunique())
counts[3].metric("Trials", f"{int(shown['n_trials'].sum()):,}")
counts[4].metric("Failed trials", f"{int(shown['n_failed'].sum()):,}")

ui.table(
    shown,
    ["workload", "device", "config", "decision", "speedup", "p50_ms", "p50_ci", "noisy",
     "cold_compile_s", "break_even_calls", "stale"],
    hidden=["p99_ms", "stack", "baseline", "n_trials", "n_failed", "n_rejected", "stale_reason",
            "last_measured"],
    key="recommendations",
    all_rows=True,  # every row on the page: a fleet's answers are not ten rows
)  # fmt: skip
st.caption("p50 with its 95% interval and whether its timings were noisy; more columns (p99, "
           "software stack, baseline, trial counts, why a row is stale) in the table's column "
           "menu.")

# At fleet size, a handful of names and a count: the table and the heatmap show every row.
noisy = shown[shown["decision"] == "undecided: noise"]
if not noisy.empty:
    names = named([f"{r.workload} on {r.device}" for r in noisy.itertuples()])
    st.warning(f"Undecided on noisy timings (no pick): {names}. Measure again on a quiet host.")
equivalent = shown[shown["decision"] == "equivalent"]
if len(equivalent) <= NAMED:
    for r in equivalent.itertuples():
        st.info(f"{r.workload} on {r.device}: {r.note}", icon=":material/balance:")
else:
    with st.expander(f"{len(equivalent)} picks among equivalent configs (the evidence cannot "
                     "order them; the lower cold compile, then the simpler, is picked): why",
                     icon=":material/balance:"):  # fmt: skip
        for r in equivalent.itertuples():
            st.markdown(f"**{r.workload} on {r.device}**: {r.note}")
nothing = shown[shown["config"].isna()]
if not nothing.empty:
    names = named([f"{r.workload} on {r.device}" for r in nothing.itertuples()])
    st.warning(f"No config ran and passed for: {names}. See the Workload page for the failures.")

if not shown.empty:
    # Every row, a pick or not: a device without one (undecided on noise, nothing passed) is a
    # grey cell, a noisy pick is outlined; none is left out.
    st.subheader("Speedup of the recommended config")
    cells = shown.assign(label=[_cell_text(s, n, d) for s, n, d in zip(
        shown["speedup"], shown["noisy"], shown["decision"], strict=True)])
    cells = cells[["workload", "short_group", "group", "config", "decision", "speedup",
                   "p50_ms", "noisy", "label"]]  # fmt: skip
    heat = ui.speedup_heatmap(
        cells,
        "workload",
        "short_group",
        "workload",
        "device · software stack",
        text="label" if len(cells) <= 400 else None,
        step=24,
        noisy="noisy",
    )
    ui.chart(heat)
    st.caption("Rows: each device by its short id, as the CLI names it (model @host · "
               "fingerprint hash; the torch version when devices run different stacks; the "
               "whole stack in the tooltip). Dashed outline, \"noisy\": the pick's timings were "
               "noisy; grey: no pick (undecided, or nothing ran and passed).")
