"""The sweep's progress bar: trials done of planned, current config and phase, best, time left.

On a terminal, a bar redrawn in place; piped (not a terminal), plain lines instead: one per
finished trial with done/planned, the best so far, the time elapsed and the time left, and one
per step after the trials (the leaders' re-measurement, the warm start). While a trial runs, its
child's progress (every few seconds: its phase, how far it got, the time in it) is the bar's phase
(``request 87/150, 41 s``); piped, a line at least every `PLAIN_EVERY_S` seconds
(``replaying fp32 + eager: request 87 of 150, 41 s``). The time left is
computed at every redraw: it counts down during a trial, and once the trials are done it names
the step under way with the time it has taken so far (``warm start ... 12.0 s``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Column
from rich.text import Text

from advisor import units
from advisor.cli.render import short_label
from advisor.config import CompileConfig
from advisor.records import TrialRecord
from advisor.serving import pruned_text, stopped_text

PLAIN_EVERY_S = 8.0  # piped: a running trial's progress line at most this often (child: 4 s)


def progress_text(info: Mapping[str, Any], label: str = "", short: bool = False) -> str:
    """A child's progress (advisor.child.measure.Ticker) in words: ``replaying fp32 + eager:
    request 87 of 150, 41 s``; ``short``: ``request 87/150, 41 s`` (the bar's phase column,
    whose config column names the config)."""
    phase, unit = str(info.get("phase") or ""), str(info.get("unit") or "")
    done, total = int(info.get("done") or 0), int(info.get("total") or 0)
    seconds = units.duration_s(float(info.get("phase_s") or 0.0))
    if short:
        head = f"{unit} {done + 1}/{total}" if total and unit else phase
        return f"{head}, {seconds}"
    head = phase if not label else f"{label}: {phase}" if ":" in phase else f"{phase} {label}"
    where = f": {unit} {done + 1} of {total}" if total and unit else ""
    return f"{head}{where}, {seconds}"


class _TimeLeft(ProgressColumn):
    """The time left, computed again at each redraw (a text field would stand still)."""

    def __init__(self, time_left: Callable[[], str]) -> None:
        super().__init__(table_column=Column(no_wrap=True, overflow="ellipsis"))
        self.time_left = time_left

    def render(self, task: Task) -> Text:
        return Text(self.time_left())


class _TwoLines(Progress):
    """The bar on two lines, so that it fits an 80-column terminal: the running trial (its
    config and its progress, cut short with an ellipsis where too long), then the bar, the
    trials done, the best so far and the times."""

    def get_renderables(self) -> Iterable[RenderableType]:
        for task in self.tasks:
            config, phase = str(task.fields.get("config", "")), str(task.fields.get("phase", ""))
            if config or phase:
                yield Text.assemble((config, "bold"), " ", phase, no_wrap=True,
                                    overflow="ellipsis")
        yield self.make_tasks_table(self.tasks)


class ProgressObserver:
    """A `advisor.search.sweep.Observer` drawing on stderr (stdout stays clean for --json).
    ``console`` and ``clock`` (seconds, monotonic): where it draws and how it tells time."""

    def __init__(self, console: Console | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console or Console(stderr=True, highlight=False)
        self.clock = clock
        self.plain = not self.console.is_terminal  # piped: no bar redrawn over itself
        self.progress = _TwoLines(
            BarColumn(bar_width=None),
            MofNCompleteColumn(),
            TextColumn("best {task.fields[best]}", table_column=Column(no_wrap=True, min_width=12)),
            TimeElapsedColumn(),
            _TimeLeft(self.time_left),
            console=self.console,
            transient=False,
            # Redrawing is the parent's only work while a child measures: once a second keeps
            # it off the cores a CPU measurement uses.
            refresh_per_second=1,
            disable=self.plain,
        )
        self.task: Any = None
        self.started_at = self.clock()
        self.budget_s: float | None = None
        self.durations: list[float] = []
        self.trial_started_at: float | None = None  # None: no trial running
        self.step: tuple[str, float] | None = None  # a step after the trials, and its start
        self.planned = 0
        self.label = ""  # the running trial's config
        self.said_at: float | None = None  # piped: when its last progress line was printed

    def __enter__(self) -> ProgressObserver:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def started(self, sweep_id: int, planned: int, done: int, budget_s: float | None) -> None:
        self.budget_s, self.planned = budget_s, planned
        self.console.print(f"sweep {sweep_id}: {planned} trials planned, {done} already done")
        self.task = self.progress.add_task(
            "sweep", total=planned, completed=done, config="", phase="", best="-"
        )

    def time_left(self) -> str:
        """What the bar shows as time left now: the budget left; else, while trials remain,
        their estimate (mean trial time) less the running trial's time so far; after the
        trials, the step under way and its time so far."""
        now = self.clock()
        if self.step is not None:
            name, since = self.step
            return f"{name} {units.duration_s(now - since)}"
        if self.budget_s is not None:
            return f"{units.duration_s(max(self.budget_s - (now - self.started_at), 0))} " \
                   "of budget left"
        if not self.progress.tasks:
            return ""
        task = self.progress.tasks[0]
        remaining = (task.total or 0) - task.completed
        if self.durations and remaining > 0:
            per = sum(self.durations) / len(self.durations)
            running = 0.0 if self.trial_started_at is None else now - self.trial_started_at
            return f"~{units.duration_s(max(remaining * per - min(running, per), 0))} left"
        return ""

    def trial_started(self, config: CompileConfig) -> None:
        self.trial_started_at = self.clock()
        self.step = None
        self.label, self.said_at = config.label, None
        self.progress.update(self.task, config=short_label(config), phase="starting")

    def trial_progress(self, info: Mapping[str, Any]) -> None:
        """A running trial's progress: the bar's phase; piped, a line every `PLAIN_EVERY_S`."""
        if self.trial_started_at is None:
            return
        self.progress.update(self.task, phase=progress_text(info, short=True))
        now = self.clock()
        if self.plain and (self.said_at is None or now - self.said_at >= PLAIN_EVERY_S):
            self.said_at = now
            self.console.print(f"  {progress_text(info, self.label)}")

    def phase(self, name: str) -> None:
        if self.trial_started_at is not None:  # a trial's own phase (compiling, measuring)
            self.progress.update(self.task, phase=name)
            return
        self.step = (name, self.clock())  # a step after the trials: the warm start, ...
        self.progress.update(self.task, config="", phase="")  # named in the time-left column
        if self.plain:
            elapsed = units.duration_s(self.clock() - self.started_at)
            self.console.print(f"  {name} ({elapsed} elapsed)")

    def notice(self, text: str) -> None:
        self.console.print(f"advisor: {text}")

    def trial_finished(self, record: TrialRecord, best_ms: float | None) -> None:
        if self.trial_started_at is not None:
            self.durations.append(self.clock() - self.trial_started_at)
        self.trial_started_at = None
        if record["status"] == "ok":
            outcome = units.duration_ms(record["median_ms"]) + ("" if record["passed"]
                                                                else " (rejected)")
        elif record["status"] == "pruned":  # a replay stopped once proven worse: its bound
            outcome = pruned_text(record.get("pruned") or {})
        elif record["status"] == "stopped":  # its time ended first: how far it got
            outcome = f"[yellow]{stopped_text(record.get('stopped') or {})}[/yellow]"
        else:
            outcome = f"[red]failed: {record['failure_reason']}[/red]"
        self.console.print(f"  {CompileConfig.from_dict(record['config']).label}: {outcome}")
        if record.get("tried_because"):
            self.console.print(f"    tried because {record['tried_because']}")
        best = units.duration_ms(best_ms) if best_ms else "-"
        self.progress.update(self.task, advance=1, best=best)
        if self.plain:
            task = self.progress.tasks[0]
            left = self.time_left()
            elapsed = units.duration_s(self.clock() - self.started_at)
            planned = int(task.total) if task.total else "?"
            self.console.print(f"  {int(task.completed)}/{planned} done, best {best}, "
                               f"{elapsed} elapsed" + (f", {left}" if left else ""))
