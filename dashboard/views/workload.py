"""Workload: every trial of one workload on one device and stack, and what the compiler did."""

import altair as alt
import pandas as pd
import streamlit as st

from advisor import serving, units
from advisor.presentation import charts
from advisor.presentation.noise import interval_warning
from dashboard import analysis, data, ui

# The trials table's columns at first (the others are in its column menu): it fits the page.
# Under varying traffic the deciding figure (the cost per request over a process) comes first.
TRIAL_COLUMNS = ["config", "outcome", "speedup", "p50_ms", "noisy", "p99_ms", "cold_compile_s",
                 "launches_per_call", "peak_mem_mib", "started"]  # fmt: skip

url = ui.connect()
st.title("Workload")

left, right = st.columns([1, 3])
names = data.workloads(url)
most = data.groups(url).groupby("workload")["n_trials"].sum().idxmax()
# The workload and the device are bound to the page's address (?workload=...&group=...): a link
# opens the same view; the device by its label (its short id and stack), which does not move
# when trials are added.
workload = left.selectbox("Workload", names, index=names.index(most), key="workload",
                          bind="query-params")  # fmt: skip
groups = data.groups(url, workload)
# The device and stack with the most trials first (then the most recent).
first = max(range(len(groups)), key=lambda i: (groups.at[i, "n_trials"],
                                               str(groups.at[i, "last_started_at"])))  # fmt: skip
labels = list(groups["group"])
chosen = right.selectbox("Device and software stack", labels, index=first, key="group",
                         bind="query-params")  # fmt: skip
group = groups.iloc[labels.index(chosen)]
if group["stale"]:
    st.warning(f"Stale: {group['stale_reason']}.", icon=":material/history:")

records = data.group_trials(url, workload, group["device_hash"], group["env_hash"])
rec = data.recommendation(url, workload, group["device_hash"], group["env_hash"])
trials = analysis.trials_frame(records, rec.calls_per_process)
best = next((r for r in records if rec.best and r["trial_uuid"] == rec.best.trial_uuid), None)

counts = st.columns(5)
counts[0].metric("Trials", len(records))
counts[1].metric("Failed", int(trials["outcome"].str.startswith("failed").sum()))
counts[2].metric("Rejected", int(trials["outcome"].str.startswith("rejected").sum()))
counts[3].metric("Recommended p50", units.duration_ms(rec.best.median_ms if rec.best else None),
                 help=ui.interval_help(rec.best))
counts[4].metric("Speedup (paired)" if rec.paired else "Speedup (separate trials)",
                 units.ratio(rec.best.speedup if rec.best else None),
                 help=(f"against {rec.baseline_name}; "
                       + ("re-measured interleaved with eager fp32 in one process"
                          if rec.paired else "two separate trials' medians, not paired")))
if rec.best is not None:
    st.caption(f"Recommended p50: {ui.noise_line(rec.best)}.")
unsafe = interval_warning(rec)
no_pick = ("undecided: noise", "undecided: host busy")
if unsafe and rec.decision not in no_pick:  # before the claim, never after it
    st.warning(unsafe, icon=":material/blur_on:")
if rec.decision in no_pick:
    st.warning(rec.sentence, icon=":material/blur_on:")
elif rec.best is None:
    st.error(rec.sentence)
elif rec.decision == "provisional":  # not every config measured: no green box
    st.warning(f"Recommended so far: {rec.sentence}")
    if rec.note:
        st.caption(rec.note)
else:
    st.success(f"Recommended: {rec.sentence}")
    if rec.note:
        st.caption(rec.note)

st.subheader("Trials")
for advisory in dict.fromkeys(r["quality_advisory"] for r in records if r.get("quality_advisory")):
    st.info(f"The quality check is advisory, not used to reject: {advisory}.",
            icon=":material/info:")
filters = st.columns(3)
outcomes = filters[0].multiselect("Outcome", sorted(trials["outcome"].unique()),
                                  placeholder="all")  # fmt: skip
modes = filters[1].multiselect("Mode", sorted(trials["mode"].dropna().unique()), placeholder="all")
dtypes = filters[2].multiselect("Dtype", sorted(trials["dtype"].dropna().unique()),
                                placeholder="all")  # fmt: skip
shown = trials
if outcomes:
    shown = shown[shown["outcome"].isin(outcomes)]
if modes:
    shown = shown[shown["mode"].isin(modes)]
if dtypes:
    shown = shown[shown["dtype"].isin(dtypes)]
# Sorted by the figure the recommendation decides on (the fastest first; failed and rejected
# trials last, then by when they started), every row shown: not ten rows of the start order.
shown = shown.sort_values(["deciding_ms", "started"], na_position="last", kind="stable")
replays = bool((shown["deciding_ms"] != shown["p50_ms"]).loc[shown["deciding_ms"].notna()].any())
columns = ["deciding_ms", *TRIAL_COLUMNS] if replays else TRIAL_COLUMNS
ui.table(shown, columns, hidden=[c for c in shown.columns if c not in columns], key="trials",
         all_rows=True)
st.caption(f"All {len(shown)} trials, the fastest by the "
           + ("cost per request over a serving process's life (the deciding figure)"
              if replays else "steady-state p50 (the deciding figure)")
           + " first, failed and rejected trials last. "
           "Each trial's own figures: its speedup is against the fastest eager fp32 trial, "
           "separate trials, not paired (the headline above is "
           + ("paired" if rec.paired else "from the pooled trials") + "); noisy: its "
           "timings' spread exceeded 10% of its median; mode, dtype, p90, kernels, graphs, "
           "recompiles, the error and more in the table's column menu.")

points = pd.DataFrame(charts.latency_points(rec))  # what `advisor report` plots too
left, right = st.columns(2)
with left:
    st.subheader("Latency vs cold compile time")
    if points.empty:
        st.info("No trial ran and passed: nothing to plot.")
    else:
        front = points[points["pareto"]]
        points["ci_low"] = [ci[0] if ci else None for ci in points["median_ci_ms"]]
        points["ci_high"] = [ci[1] if ci else None for ci in points["median_ci_ms"]]
        points["interval"] = [units.interval_ms(*ci) if ci else "-"
                              for ci in points["median_ci_ms"]]  # fmt: skip
        points = points.drop(columns="median_ci_ms")
        base = alt.Chart(points)
        dots = base.mark_point(filled=True, size=90).encode(
            x=alt.X("cold_compile_s:Q", title="cold compile time (s)"),
            y=alt.Y("median_ms:Q", title="median latency (ms)"),
            color=alt.Color("mode:N", title="mode"),
            shape=alt.Shape("dtype:N", title="dtype"),
            opacity=alt.condition(alt.datum.noisy, alt.value(0.35), alt.value(1.0)),
            tooltip=ui.tooltips([
                "config", alt.Tooltip("median_ms:Q", format=".3~r", title="median (ms)"),
                alt.Tooltip("interval:N", title="95% CI"), "noisy",
                alt.Tooltip("cold_compile_s:Q", format=".1f", title="cold compile (s)"),
                alt.Tooltip("speedup:Q", format=".2f", title="speedup (x)"), "pareto",
                "recommended",
            ]),
        )  # fmt: skip
        bars = base.mark_rule(color="gray").encode(
            x="cold_compile_s:Q", y="ci_low:Q", y2="ci_high:Q")
        ring = base.transform_filter(alt.datum.recommended).mark_point(
            size=420, color="black", strokeWidth=2).encode(x="cold_compile_s:Q", y="median_ms:Q")
        pick = base.transform_filter(alt.datum.recommended).mark_text(
            align="left", dx=14, dy=-10, fontWeight="bold").encode(
            x="cold_compile_s:Q", y="median_ms:Q", text=alt.value("recommended"))
        line = (
            alt.Chart(front)
            .mark_line(point=False, strokeDash=[4, 3], color="gray")
            .encode(
                x=alt.X("cold_compile_s:Q"),
                y=alt.Y("median_ms:Q"),
                order=alt.Order("cold_compile_s:Q"),
            )
        )
        ui.chart(line + bars + dots + ring + pick, height=380)
        st.caption(
            f"One point per config, its pooled median as the recommendation decided (eager "
            f"configs compile nothing). Dashed: the Pareto front ({len(front)} configs no other "
            "config beats on both latency and compile time). Ringed: the recommended config. "
            "Grey bars: the 95% interval of each median; faded: noisy timings. Failed and "
            "rejected trials are not plotted."
        )
with right:
    st.subheader("Speedup by mode x dtype")
    matrix = analysis.speedup_matrix(trials)
    if matrix.empty:
        st.info("No trials.")
    else:
        heat = ui.speedup_heatmap(matrix, "dtype", "mode", "dtype", "mode", text="text")
        ui.chart(heat.properties(**ui.rows(60)))
        st.caption(
            "Best passed speedup over eager fp32 in each cell (any fullgraph, dynamic "
            'and Inductor options); "failed": every trial of the cell failed; "no pass": they '
            "ran, but wrong or below the quality threshold."
        )

st.subheader("Kernels and launches per call: eager fp32 vs the recommended config")
if best is None:
    st.info("No recommended config: no kernel counts to compare.")
else:
    per_call = analysis.kernel_counts(best)
    if per_call.empty:
        st.info("These trials recorded no kernel counts.")
    else:
        bars = (
            alt.Chart(per_call)
            .mark_bar()
            .encode(
                x=alt.X("count:Q", title="per call (count)"),
                y=alt.Y("what:N", title=None),
                yOffset=alt.YOffset("run:N"),
                color=alt.Color("run:N", title="run"),
                tooltip=ui.tooltips(["run", "what", "count"]),
            )
        )
        ui.chart(bars.properties(**ui.rows(22)))
    for column, kernels in zip(st.columns(2), analysis.kernel_names(best), strict=True):
        column.dataframe(kernels, hide_index=True, height=min(300, 35 * (len(kernels) + 1) + 3))

baseline = rec.baseline.trial_uuid if rec.baseline else None
named = {u: n for u, n in ((baseline, "eager fp32"), (best and best["trial_uuid"],
                                                         "recommended")) if u}  # fmt: skip
shapes = analysis.shape_latencies(records, named)
if shapes["shape"].nunique() > 1:
    st.subheader("Latency per traffic shape: eager fp32 vs the recommended config")
    ui.chart(
        alt.Chart(shapes).mark_bar().encode(
            x=alt.X("p50_ms:Q", title="p50 latency (ms)"),
            y=alt.Y("shape:N", title="traffic shape"),
            yOffset=alt.YOffset("run:N"),
            color=alt.Color("run:N", title="run"),
            tooltip=ui.tooltips(["shape", "weight", "run", alt.Tooltip("p50_ms:Q", format=".3~r"),
                                 alt.Tooltip("p99_ms:Q", format=".3~r")]),
        ).properties(**ui.rows(22))
    )  # fmt: skip

st.subheader("Graph breaks")
breaks = analysis.graph_breaks(records)
if breaks.empty:
    st.caption("No graph break in any trial of this workload on this device.")
else:
    ui.table(breaks, key="graph_breaks")

replay = analysis.replay_frame(records)
if not replay.empty:
    st.subheader("Shape strategies side by side")
    st.caption("Each strategy served the same stream as a fresh process meets it (new shapes "
               "paying their compile or CUDA-graph recording), then the steady state. "
               "process_life_ms: the cost per request over a process of "
               f"{serving.DEFAULT_CALLS_PER_PROCESS:,} requests, which decides under varying "
               "traffic; flags: what a server of it will meet (docs/shapes.md).")
    ui.table(replay, key="replay")
    latency = [c for c in replay.columns if c.endswith("_ms")]
    if latency:
        long = replay.melt(id_vars=["strategy"], value_vars=latency, var_name="figure",
                           value_name="ms").dropna()  # fmt: skip
        ui.chart(
            alt.Chart(long).mark_bar().encode(
                x=alt.X("ms:Q", title="latency per request (ms)"),
                y=alt.Y("strategy:N", title="shape strategy"),
                yOffset=alt.YOffset("figure:N"),
                color=alt.Color("figure:N", title="figure"),
                tooltip=ui.tooltips(["strategy", "figure", alt.Tooltip("ms:Q", format=".3~r")]),
            ).properties(**ui.rows(22))
        )  # fmt: skip
