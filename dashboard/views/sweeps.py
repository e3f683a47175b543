"""Sweeps: running and recent sweeps with their progress, refreshed while one runs."""

import altair as alt
import streamlit as st

from advisor import units
from dashboard import analysis, data, ui

REFRESH_S = 5

url = ui.connect()
st.title("Sweeps")


def show_sweeps(live: bool) -> None:
    """The sweeps, their progress and one sweep's trials (a fragment: reruns on its own)."""
    sweeps = data.sweeps(url)
    running = sweeps[sweeps["status"] == "running"]
    if live and running.empty:
        st.rerun()  # the last sweep just ended: stop refreshing
    if live:
        st.caption(f"A sweep is running: this part refreshes every {REFRESH_S} s.")
    counts = st.columns(4)
    counts[0].metric("Running", len(running))
    counts[1].metric("Finished", int((sweeps["status"] == "finished").sum()))
    ended = sweeps["status"].isin(["stopped", "interrupted", "failed"])  # stopped: by the budget
    counts[2].metric("Stopped, interrupted or failed", int(ended.sum()))
    counts[3].metric("Trials", f"{int(sweeps['trials'].sum()):,}")

    for sweep in running.itertuples():
        planned = f"{sweep.planned:.0f}" if sweep.planned == sweep.planned else "?"
        best = units.duration_ms(sweep.best_ms)
        text = (f"sweep {sweep.id}: {sweep.workload} on {sweep.device}: {sweep.trials}/{planned} "
                f"trials, best {best}, {sweep.failed} failed")  # fmt: skip
        progress = sweep.progress if sweep.progress == sweep.progress else 0.0
        st.progress(float(progress), text=text)

    st.subheader("Recent sweeps")
    ui.table(sweeps, ["id", "workload", "device", "status", "progress", "trials", "planned",
                      "failed", "best_ms", "started", "finished"], key="sweeps")  # fmt: skip
    if sweeps.empty:
        return

    st.subheader("One sweep, trial by trial")
    ids = list(sweeps["id"])
    chosen = st.selectbox("Sweep", ids, index=0, key="sweep_id", format_func=lambda i: (
        "sweep {id}: {workload} on {device} ({status})".format(
            **sweeps.set_index("id").loc[i].to_dict(), id=i)))  # fmt: skip
    progress = analysis.sweep_progress(data.sweep_trials(url, int(chosen)))
    if progress.empty:
        st.info("This sweep has no trials yet.")
        return
    row = sweeps.set_index("id").loc[chosen]
    rec = data.recommendation(url, row["workload"], row["device_hash"], row["env_hash"])
    st.markdown(f"**Recommended** for {row['workload']} on this device and stack (all its "
                f"sweeps pooled): {rec.sentence}")
    points = (
        alt.Chart(progress.dropna(subset=["p50_ms"]))
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X(
                "trial:Q",
                title="trial (number, in the order run)",
                axis=alt.Axis(tickMinStep=1, format="d"),
                scale=alt.Scale(domainMin=1),
            ),
            y=alt.Y("p50_ms:Q", title="p50 latency (ms)"),
            tooltip=ui.tooltips(
                ["trial", "config", "outcome", alt.Tooltip("p50_ms:Q", format=".3~r")]
            ),
        )
    )
    best = (
        alt.Chart(progress.dropna(subset=["best_so_far_ms"]))
        .mark_line(interpolate="step-after", color="green")
        .encode(x=alt.X("trial:Q"), y=alt.Y("best_so_far_ms:Q"))
    )
    pick = rec.best.label if rec.best is not None else None
    ringed = progress.dropna(subset=["p50_ms"])
    ringed = ringed[ringed["config"] == pick]
    ring = alt.Chart(ringed).mark_point(size=300, color="black", strokeWidth=2).encode(
        x=alt.X("trial:Q"), y=alt.Y("p50_ms:Q"),
        tooltip=ui.tooltips(["trial", "config", alt.Tooltip("p50_ms:Q", format=".3~r")]))
    ui.chart(points + best + ring, height=300)
    st.caption("Dots: trials that ran and passed; ringed: the trials of the recommended config; "
               "green: the best single-trial p50 so far (a progress line, not the "
               "recommendation above, which pools each config's trials).")
    ui.table(progress, key="sweep_trials")


live = bool((data.sweeps(url)["status"] == "running").any())
if live:
    st.fragment(show_sweeps, run_every=REFRESH_S)(live)
else:
    show_sweeps(live)
