"""Fleet: one workload across devices and software stacks, in four views (tabs: only the open
one is computed and drawn). The workload, the open view and the devices chosen in it are bound
to the page's address (``?fleet_workload=...&fleet_view=Two+devices&device_a=...``): a link
opens the same view."""

import altair as alt
import pandas as pd
import streamlit as st

from advisor import units
from dashboard import analysis, data, ui

TOP_CONFIGS = 30  # the heatmap's rows unless all are asked for
MAX_TEXT_COLUMNS = 16  # more devices than this: cells too narrow for their figure (tooltip)

url = ui.connect()
st.title("Fleet")
names = data.workloads(url)
widest = data.groups(url)["workload"].value_counts().idxmax()  # measured on the most devices
workload = st.selectbox("Workload", names, index=names.index(widest), key="fleet_workload",
                        bind="query-params")  # fmt: skip
fleet = data.fleet(url, workload)
groups = list(dict.fromkeys(fleet["group"]))
st.caption(f"{len(groups)} device and stack combinations, "
           f"{fleet['config'].nunique()} configs measured. The page's address keeps the "
           "workload, the open view and the devices chosen in it: copy it to share this view.")

picks = data.recommendations(url, workload)
st.subheader("Recommended on each device and stack")
ui.table(picks, ["device", "config", "decision", "speedup", "p50_ms", "p50_ci", "noisy",
                 "cold_compile_s"], hidden=["stack", "baseline", "p99_ms", "n_trials"],
         key="fleet_picks", all_rows=True)  # fmt: skip
st.caption("The one answer per device and stack (what `advisor recommend` says there), its p50 "
           "with the 95% interval and whether its timings were noisy; the software stack in the "
           "table's column menu. The views below show every config's best single trial, for "
           "exploring, not for picking.")

shapes = data.measured_shapes(url, workload)
if len(set(shapes.values())) > 1:
    where = {", ".join(v): k for k, v in shapes.items()}
    labels = fleet.drop_duplicates(["device_hash", "env_hash"]).set_index(
        ["device_hash", "env_hash"]
    )["group"]
    st.warning(
        "These devices measured different traffic shapes, so compare speedups, not latencies: "
        + "; ".join(f"{labels.get(key, key)}: {shape}" for shape, key in where.items()),
        icon=":material/straighten:",
    )


def speedup_map() -> None:
    """Speedup over eager fp32: device x config, the configs with the best median first."""
    ranking = analysis.config_ranking(fleet)
    everything = len(ranking) <= TOP_CONFIGS or st.toggle(
        f"All {len(ranking)} configs", help=f"Off: the {TOP_CONFIGS} configs with the highest "
        "median speedup across these devices, and every device's pick."
    )  # fmt: skip
    # each device's pick (the one answer, as the table above): a row always, outlined, starred
    chosen = set(zip(picks["group"], picks["config_key"], strict=True))
    is_pick = [(g, k) in chosen for g, k in zip(fleet["group"], fleet["config_key"], strict=True)]
    picked = set(fleet.loc[is_pick, "config"])
    shown = ranking if everything else [c for i, c in enumerate(ranking)
                                        if i < TOP_CONFIGS or c in picked]  # fmt: skip
    on_map = fleet.assign(pick=is_pick)
    on_map = on_map[on_map["config"].isin(shown)]
    measured = on_map[on_map["speedup"].notna()]
    failed = on_map[on_map["n_passed"] == 0].assign(outcome="no passing trial")
    # A device whose answer rests on noisy timings keeps its column, its label marked.
    noisy = set(picks.loc[picks["noisy"].fillna(False).astype(bool)
                          | (picks["decision"] == "undecided: noise"), "group"])  # fmt: skip
    marked = {g: f"noisy · {sg}" if g in noisy else sg  # first: a long label is cut at its end
              for g, sg in zip(fleet["group"], fleet["short_group"], strict=True)}  # fmt: skip
    measured = measured.assign(short_group=measured["group"].map(marked))
    failed = failed.assign(short_group=failed["group"].map(marked))
    value = [("★ " if p else "") + units.ratio(s)
             for p, s in zip(measured["pick"], measured["speedup"], strict=True)]  # fmt: skip
    cells = measured.assign(value=value)[[
        "short_group", "group", "config", "speedup", "value", "pick", "best_median_ms",
        "n_trials", "n_passed"]]  # fmt: skip
    columns = list(dict.fromkeys(fleet.sort_values("group")["group"].map(marked)))
    written = "value" if len(columns) <= MAX_TEXT_COLUMNS else None
    heat = ui.speedup_heatmap(cells, "short_group", "config", "device · software stack",
                              "config", x_order=columns, y_order=shown, step=22, pick="pick",
                              text=written)  # fmt: skip
    if not failed.empty:
        heat = heat + alt.Chart(failed[["short_group", "group", "config", "outcome",
                                        "n_trials"]]).mark_rect(color="#bbbbbb").encode(
            x=alt.X("short_group:N", scale=alt.Scale(domain=columns)),
            y=alt.Y("config:N", scale=alt.Scale(domain=shown)),
            tooltip=ui.tooltips(["group", "config", "outcome", "n_trials"]))  # fmt: skip
    ui.chart(heat)
    st.caption(
        "Each cell: the config's best p50 on that device and stack against the eager fp32 p50 "
        "there, written in the cell (green: faster, red: slower); grey: every trial failed or "
        "was rejected; outlined in black, ★: the device's pick (the table above). Configs "
        "(rows) in order of their median speedup across the devices; columns: each device by "
        "its short id, as `advisor compare` names it: model @host · fingerprint hash (the "
        "whole stack in the tooltip); \"noisy ·\": its recommendation rests on noisy timings."
    )


def latency_per_device() -> None:
    """The recommended config's p50 on each device and stack, next to eager fp32's."""
    every = data.recommendations(url, workload)
    ranked = every.dropna(subset=["p50_ms"])
    unplotted = every[every["p50_ms"].isna()]
    if not unplotted.empty:  # said, not silently left out
        st.warning("No recommended figure to plot for: " + "; ".join(
            f"{r.device} ({r.decision})" for r in unplotted.itertuples()) + ".")
    if ranked.empty:
        st.info("No config of this workload ran and passed on any device.")
        return
    spread = ranked["eager_p50_ms"].fillna(ranked["p50_ms"]).max() / ranked["p50_ms"].min()
    log = spread > 20  # devices far apart: a log scale keeps the fast ones visible
    order = alt.SortField("p50_ms")
    x_title = "p50 latency (ms" + (", log scale)" if log else ")")
    scale = alt.Scale(type="log") if log else alt.Scale(zero=True)
    dots = alt.Chart(ranked).mark_point(filled=True, size=140).encode(
        x=alt.X("p50_ms:Q", title=x_title, scale=scale),
        y=alt.Y("short_group:N", sort=order, axis=ui.long_labels("device · software stack")),
        color=alt.Color("config:N", title="recommended config"),
        opacity=alt.condition(alt.datum.noisy, alt.value(0.35), alt.value(1.0)),
        tooltip=ui.tooltips(["group", "config",
                             alt.Tooltip("p50_ms:Q", format=".3~r", title="p50 (ms)"),
                             alt.Tooltip("p50_ci:N", title="p50 95% CI"), "noisy",
                             alt.Tooltip("eager_p50_ms:Q", format=".3~r",
                                         title="eager fp32 p50 (ms)"),
                             alt.Tooltip("speedup:Q", format=".2f", title="speedup (x)")]),
    )  # fmt: skip
    eager = (
        alt.Chart()
        .mark_tick(color="black", thickness=2, size=18)
        .encode(x=alt.X("eager_p50_ms:Q", scale=scale), y=alt.Y("short_group:N", sort=order))
    )
    gap = (
        alt.Chart()
        .mark_rule(color="gray")
        .encode(
            x=alt.X("p50_ms:Q", scale=scale),
            x2=alt.X2("eager_p50_ms"),
            y=alt.Y("short_group:N", sort=order),
        )
    )
    with_eager = ranked.dropna(subset=["eager_p50_ms"])
    ui.chart((alt.layer(gap, eager, data=with_eager) + dots).properties(**ui.rows()))
    st.caption("Dots: the recommended config (faded: noisy timings; its interval in the "
               "tooltip); black ticks: eager fp32 on the same device and stack; the line between "
               "them is what compiling saves.")  # fmt: skip


def software_upgrade() -> None:
    """What a software upgrade moved on one device model: the recommendation and every
    config's best p50, from one stack to another."""
    envs = data.groups(url, workload)
    envs = envs[envs["env_hash"].isin(set(fleet["env_hash"]))]
    upgraded = envs.groupby("model")["env_hash"].nunique()
    models = sorted(upgraded[upgraded > 1].index)
    if not models:
        st.info("No device model has been measured with two software stacks yet: after a "
                "torch, triton or driver upgrade, sweep again on the same device model and the "
                "change shows here.")  # fmt: skip
        return
    pick = st.columns(3)
    model = pick[0].selectbox("Device model", models, key="upgrade_model", bind="query-params")
    stacks = envs[envs["model"] == model]
    stack_names: dict[str, str] = dict(zip(stacks["env_hash"], stacks["stack"], strict=True))
    # Oldest first by versions (torch, then triton, CUDA, driver), not by when measured: the
    # default is the upgrade from the second newest stack to the newest, never a downgrade.
    by_version = analysis.stacks_oldest_first(stacks)
    name_of = stack_names.__getitem__
    old: str = pick[1].selectbox("From stack", by_version, index=len(by_version) - 2,
                                 format_func=name_of, key="upgrade_from",
                                 bind="query-params")  # fmt: skip
    new: str = pick[2].selectbox("To stack", by_version, index=len(by_version) - 1,
                                 format_func=name_of, key="upgrade_to",
                                 bind="query-params")  # fmt: skip
    env_rows = data.groups(url, workload).drop_duplicates("env_hash").set_index("env_hash")
    st.markdown(f"**Changed:** {analysis.stack_change(env_rows.loc[old], env_rows.loc[new])}")
    recs = data.recommendations(url, workload)
    before = recs[(recs["model"] == model) & (recs["env_hash"] == old)].nsmallest(1, "p50_ms")
    after = recs[(recs["model"] == model) & (recs["env_hash"] == new)].nsmallest(1, "p50_ms")
    if not before.empty and not after.empty:
        b, a = before.iloc[0], after.iloc[0]
        delta = (a["p50_ms"] / b["p50_ms"] - 1) * 100
        st.markdown(
            f"**Recommended:** {b['config']} at {units.duration_ms(b['p50_ms'])} → "
            f"{a['config']} at {units.duration_ms(a['p50_ms'])} ({delta:+.1f}%)"
        )
    moves = analysis.upgrade_moves(fleet, model, old, new)
    if moves.empty:
        st.info("No config was measured (and passed) with both stacks.")
        return
    # The chart: the configs that moved most (all of them are in the table below).
    moved = moves.loc[moves["change_pct"].abs().nlargest(TOP_CONFIGS).index]
    long = moved.melt(id_vars=["config", "change_pct"], value_vars=["before_ms", "after_ms"],
                      var_name="when", value_name="p50_ms")  # fmt: skip
    long["when"] = long["when"].map({"before_ms": "from stack", "after_ms": "to stack"})
    in_order = alt.Scale(domain=list(moves["config"][moves["config"].isin(moved["config"])]))
    line = (
        alt.Chart()
        .mark_line(color="gray")
        .encode(
            x=alt.X("p50_ms:Q", title="best p50 latency on this device model (ms)"),
            y=alt.Y("config:N", scale=in_order, axis=ui.long_labels("config")),
            detail=alt.Detail("config:N"),
        )
    )
    dots = alt.Chart().mark_point(filled=True, size=80).encode(
        x=alt.X("p50_ms:Q"), y=alt.Y("config:N", scale=in_order),
        color=alt.Color("when:N", title="stack"),
        tooltip=ui.tooltips(["config", "when",
                             alt.Tooltip("p50_ms:Q", format=".3~r", title="p50 (ms)"),
                             alt.Tooltip("change_pct:Q", format="+.1f", title="change (%)")]),
    )  # fmt: skip
    ui.chart(alt.layer(line, dots, data=long).properties(**ui.rows()))
    ui.table(moves, key="upgrade_moves")


def two_devices() -> None:
    """Two devices and stacks side by side (by default the two that disagree most): their
    recommendations, and each kind of disagreement counted: configs faster than eager fp32 on
    one and slower on the other, failed or rejected on one side only, as fast as eager on one
    side only."""
    if len(groups) < 2:
        st.info("This workload has been measured on one device and stack only.")
        return
    sides = st.columns(2)
    first, second = data.most_different(url, workload)
    a = sides[0].selectbox("Device A", groups, index=groups.index(first), key="device_a",
                           bind="query-params")  # fmt: skip
    b = sides[1].selectbox("Device B", groups, index=groups.index(second), key="device_b",
                           bind="query-params")  # fmt: skip
    recs = data.recommendations(url, workload)
    picked: dict[str, str] = {}
    for col, group, side in zip(sides, (a, b), "AB", strict=True):
        chosen = recs[recs["group"] == group]
        if not chosen.empty and pd.notna(chosen.iloc[0]["config"]):
            r = chosen.iloc[0]
            picked[side] = r["config"]
            col.markdown(f"Recommends **{r['config']}**: {units.duration_ms(r['p50_ms'])}, "
                         f"{units.ratio(r['speedup'])} over eager fp32")  # fmt: skip
            noise = [f"95% CI {r['p50_ci']}" if r["p50_ci"] else "no 95% interval (too few "
                     "samples)", "noisy timings" if r["noisy"] else "timings not noisy"]
            col.caption("p50: " + "; ".join(noise))
    both = analysis.disagreements(fleet, a, b)
    if both.empty:
        st.info("No config was measured on both.")
        return
    plotted = both.dropna(subset=["speedup_a", "speedup_b"]).assign(
        pick=lambda f: [" and ".join(f"recommended on {side}" for side in "AB"
                                     if picked.get(side) == c) for c in f["config"]])  # fmt: skip
    # Both axes from the data (and 1x, the dashed lines), the same on both: not a fixed
    # 0.1-10 that squeezes the points into a corner.
    scale = alt.Scale(type="log", domain=analysis.log_domain(
        [*plotted["speedup_a"], *plotted["speedup_b"], 1.0]), nice=False)
    dots = alt.Chart().mark_point(filled=True, size=80, clip=True).encode(
        x=alt.X("speedup_a:Q", title="speedup on device A (x over eager fp32)", scale=scale),
        y=alt.Y("speedup_b:Q", title="speedup on device B (x over eager fp32)", scale=scale),
        color=alt.Color("kind:N", title="on the two devices",
                        scale=alt.Scale(domain=list(KIND_COLOURS),
                                        range=list(KIND_COLOURS.values()))),
        tooltip=ui.tooltips(["config", alt.Tooltip("speedup_a:Q", format=".2f"),
                             alt.Tooltip("speedup_b:Q", format=".2f"), "verdict_a",
                             "verdict_b", "pick"]),
    )  # fmt: skip
    one = alt.Chart().mark_rule(color="gray", strokeDash=[3, 3])
    rules = alt.layer(one.encode(x=alt.X("x:Q", scale=scale)),
                      one.encode(y=alt.Y("x:Q", scale=scale)),
                      data=pd.DataFrame({"x": [1.0]}))  # fmt: skip
    at = {"x": alt.X("speedup_a:Q"), "y": alt.Y("speedup_b:Q")}
    ring = alt.Chart().transform_filter(alt.datum.pick != "").mark_point(
        size=400, color="black", strokeWidth=2).encode(**at)  # fmt: skip
    # Names: only the recommended configs' (others in the tooltip and the table below); on
    # the left of the point, so that the plot keeps its width; A's above B's, a line apart,
    # so that two picks close together are not written over each other.
    names = [alt.Chart().transform_filter(alt.datum.pick == text).mark_text(
        align="right", dx=-14, dy=dy, fontSize=11, fontWeight="bold").encode(
        **at, text=alt.Text("pick:N"))
        for text, dy in (("recommended on A", -8), ("recommended on B", 8),
                         ("recommended on A and recommended on B", 0))]  # fmt: skip
    plot, summary = st.columns([3, 2])
    with plot:
        # A plot area as tall as it is wide, about: not a strip across the page.
        ui.chart((rules + alt.layer(dots, ring, *names, data=plotted)).properties(height=440))
        st.caption("One point per config that passed on both (log scales; dashed: as fast as "
                   "eager fp32; hover for its name). Ringed: the config recommended on A or B. "
                   "Red: faster than eager fp32 on one device, slower on the other; orange: as "
                   "fast as eager on one, not on the other; blue: the same verdict on both. A "
                   "config that failed or was rejected on one side has no point: it is counted "
                   "beside the plot and listed in the table.")  # fmt: skip
    counts = analysis.disagreement_counts(both)
    disagree = len(both) - counts.get(analysis.AGREE, 0)
    if not disagree:
        n = len(both)
        summary.success(
            f"They agree on {'the' if n == 1 else 'all'} {n} config{'s' if n > 1 else ''} "
            "measured on both: each is faster than eager fp32 on both, slower on both, as fast "
            "on both, or fails on both."
        )
    else:
        summary.markdown(f"**They disagree on {disagree} config{'s' if disagree > 1 else ''}** "
                         f"of the {len(both)} measured on both (first in the table):")
        summary.markdown("\n".join(f"- {n} {SAY_KIND[k]}" for k, n in counts.items()
                                   if k != analysis.AGREE))
    summary.markdown(f"{counts.get(analysis.AGREE, 0)} with the same verdict on both; ranks by "
                     "best p50 on each.")
    ui.table(both, ["config", "kind", "speedup_a", "speedup_b", "rank_a", "rank_b", "verdict_a",
                    "verdict_b"], hidden=["disagree"], key="disagreements")  # fmt: skip


# The disagreement kinds' colours on the plot (the kinds with a point: passed on both) and how
# the summary beside it says each.
KIND_COLOURS = {analysis.OPPOSITE: "#d62728", analysis.SAME_ONE_SIDE: "#ff7f0e",
                analysis.AGREE: "#1f77b4"}  # fmt: skip
SAY_KIND = {
    analysis.OPPOSITE: "faster than eager fp32 on one device and slower on the other",
    analysis.FAILED_ONE_SIDE: "failed or rejected on one device and not on the other",
    analysis.SAME_ONE_SIDE: "as fast as eager fp32 on one device, faster or slower on the other",
}


VIEWS = {  # tab label -> what the tab shows
    "Speedup: device x config": speedup_map,
    "Latency per device": latency_per_device,
    "Software upgrade": software_upgrade,
    "Two devices": two_devices,
}
tabs = st.tabs(list(VIEWS), key="fleet_view", on_change="rerun", bind="query-params")
for tab, show in zip(tabs, VIEWS.values(), strict=True):
    if tab.open:
        with tab:
            show()
