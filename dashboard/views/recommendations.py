"""Recommendations: one row per workload x device x software stack, filterable."""

import streamlit as st

from dashboard import analysis, data, ui

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
    "*stale* when its device model has since been measured with another stack."
)

recs = data.recommendations(url)
left, middle, right, last = st.columns([2, 3, 3, 1.3], vertical_alignment="bottom")
workloads = left.multiselect("Workload", sorted(recs["workload"].unique()), placeholder="all")
devices = middle.multiselect("Device", sorted(recs["device"].unique()), placeholder="all")
stacks = right.multiselect("Software stack", sorted(recs["stack"].unique()), placeholder="all")
hide_stale = last.toggle("Hide stale", help="Hide rows whose device model has a newer stack.")

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
)  # fmt: skip
st.caption("p50 with its 95% interval and whether its timings were noisy; more columns (p99, "
           "software stack, baseline, trial counts, why a row is stale) in the table's column "
           "menu.")

noisy = shown[shown["decision"] == "undecided: noise"]
if not noisy.empty:
    names = ", ".join(f"{r.workload} on {r.device}" for r in noisy.itertuples())
    st.warning(f"Undecided on noisy timings (no pick): {names}. Measure again on a quiet host.")
for r in shown[shown["decision"] == "equivalent"].itertuples():
    st.info(f"{r.workload} on {r.device}: {r.note}", icon=":material/balance:")
nothing = shown[shown["config"].isna()]
if not nothing.empty:
    names = ", ".join(f"{r.workload} on {r.device}" for r in nothing.itertuples())
    st.warning(f"No config ran and passed for: {names}. See the Workload page for the failures.")

ranked = shown.dropna(subset=["speedup"])
if not ranked.empty:
    st.subheader("Speedup of the recommended config")
    cells = ranked.assign(label=[f"{s:.2f}x" for s in ranked["speedup"]])
    cells = cells[["workload", "short_group", "group", "config", "speedup", "p50_ms", "noisy",
                   "label"]]  # fmt: skip
    heat = ui.speedup_heatmap(
        cells,
        "workload",
        "short_group",
        "workload",
        "device · software stack",
        text="label" if len(cells) <= 400 else None,
        step=24,
    )
    ui.chart(heat)
    st.caption("Rows: each device (its model and short hash; the torch version when devices "
               "run different stacks; the whole stack in the tooltip).")
