"""The sweep's progress bar: trials done of planned, current config and phase, best, time left.

On a terminal, a bar redrawn in place; piped (not a terminal), plain lines instead: one per
finished trial with done/planned, the best so far, the time elapsed and the time left, and one
per step after the trials (the leaders' re-measurement, the warm start). While a trial runs, its
child's progress (every few seconds: its phase, how far it got, the time in it) is the bar's phase
(``request 87/150, 41 s``); piped, a line at least every `PLAIN_EVERY_S` seconds
(``replaying fp32 + eager: request 87 of 150, 41 s``). The time left is
computed at every redraw (`time_left_text`): it counts down during a trial, and where no estimate
holds (no trial finished yet, or the running one already past the mean trial time) it says what
runs and for how long instead (``compiling, 2.50 min so far``), never ``~0 s left`` while work
runs; once the trials are done it names the step under way with the time it has taken so far
(``warm start ... 12.0 s``).
"""

from __future__ import annotations

import threading
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
from advisor.serving import progress_text, pruned_text, stopped_text

PLAIN_EVERY_S = 8.0  # piped: a running trial's progress line this often (the child's: 4 s)
ESTIMATE_FLOOR_S = 1.0  # a running trial's own estimate under this has run out: not said


def time_left_text(remaining: int, per_trial_s: float | None, running_s: float | None,
                   doing: str = "running") -> str:
    """The time left while ``remaining`` trials (the running one among them) are to finish:
    ``~40.0 s left`` from the mean trial time ``per_trial_s`` less the running trial's time
    ``running_s`` (None: no trial running). Where no estimate holds for the running trial (no
    mean yet, or less than `ESTIMATE_FLOOR_S` of it left), what it is ``doing`` and its time so
    far, with the estimate for the trials not yet started: ``compiling, 2.50 min so far``,
    ``compiling, 2.50 min so far, ~20.0 s after``. Never an estimate of nothing while a trial
    runs; ``""`` when nothing is known."""
    if remaining <= 0:
        return ""
    if running_s is None:
        return "" if per_trial_s is None else f"~{units.duration_s(remaining * per_trial_s)} left"
    if per_trial_s is not None and per_trial_s - running_s >= ESTIMATE_FLOOR_S:
        return f"~{units.duration_s(remaining * per_trial_s - running_s)} left"
    so_far = f"{doing or 'running'}, {units.duration_s(running_s)} so far"
    if per_trial_s is None or remaining == 1:
        return so_far
    return f"{so_far}, ~{units.duration_s((remaining - 1) * per_trial_s)} after"


def _doing(phase: str) -> str:
    """A phase as the time-left column names it: its head (``waiting for a quiet host: 1.5 of
    2 cores busy`` -> ``waiting for a quiet host``)."""
    return phase.partition(":")[0].strip()


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
    trials done, the best so far and the times. ``running()``: the running trial's progress
    as of this redraw (None: the task's fields say it)."""

    def __init__(self, *columns: Any, running: Callable[[], str | None], **kwargs: Any) -> None:
        super().__init__(*columns, **kwargs)
        self.running = running

    def get_renderables(self) -> Iterable[RenderableType]:
        for task in self.tasks:
            config, phase = str(task.fields.get("config", "")), str(task.fields.get("phase", ""))
            phase = self.running() or phase
            if config or phase:
                yield Text.assemble((config, "bold"), " ", phase, no_wrap=True,
                                    overflow="ellipsis")
        yield self.make_tasks_table(self.tasks)


class ProgressObserver:
    """A `advisor.search.sweep.Observer` drawing on stderr (stdout stays clean for --json).
    ``console`` and ``clock`` (seconds, monotonic): where it draws and how it tells time."""

    def __init__(self, console: Console | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 repeat_s: float | None = 1.0) -> None:
        """``repeat_s``: piped, how often a thread looks whether a progress line is due (a
        child's progress can stall while it compiles: the last one is said again, its time
        moved on); None: only when the child's progress comes."""
        self.console = console or Console(stderr=True, highlight=False)
        self.clock = clock
        self.repeat_s = repeat_s
        self._stop = threading.Event()
        self._repeater: threading.Thread | None = None
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
            running=lambda: self.progress_now(short=True),
        )
        self.task: Any = None
        self.started_at = self.clock()
        self.budget_s: float | None = None
        self.durations: list[float] = []
        self.trial_started_at: float | None = None  # None: no trial running
        self.step: tuple[str, float] | None = None  # a step after the trials, and its start
        self.planned = 0
        self.label = ""  # the running trial's config
        self.doing = ""  # the running trial's phase, as the time-left column names it
        self.said_at: float | None = None  # piped: when its last progress line was printed
        self.last: tuple[Mapping[str, Any], float] | None = None  # its last progress, and when

    def __enter__(self) -> ProgressObserver:
        self.progress.start()
        if self.plain and self.repeat_s is not None:
            self._repeater = threading.Thread(target=self._repeat, name="progress", daemon=True)
            self._repeater.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._repeater is not None:
            self._repeater.join()
        self.progress.stop()

    def _repeat(self) -> None:
        assert self.repeat_s is not None
        while not self._stop.wait(self.repeat_s):
            self.say_progress()

    def progress_now(self, short: bool = False) -> str | None:
        """The running trial's last progress, its time in its phase moved on to now (None: no
        trial running, or none said yet)."""
        last = self.last
        if self.trial_started_at is None or last is None:
            return None
        info, at = last
        moved = {**info, "phase_s": float(info.get("phase_s") or 0.0) + self.clock() - at}
        return progress_text(moved, self.label, short=short)

    def say_progress(self) -> None:
        """Piped: the running trial's progress line, when `PLAIN_EVERY_S` passed since the
        last."""
        now = self.clock()
        if not self.plain or (self.said_at is not None and now - self.said_at < PLAIN_EVERY_S):
            return
        text = self.progress_now()
        if text is not None:
            self.said_at = now
            self.console.print(f"  {text}")

    def started(self, sweep_id: int, planned: int, done: int, budget_s: float | None) -> None:
        self.budget_s, self.planned = budget_s, planned
        self.console.print(f"sweep {sweep_id}: {planned} trials planned, {done} already done")
        self.task = self.progress.add_task(
            "sweep", total=planned, completed=done, config="", phase="", best="-"
        )

    def time_left(self) -> str:
        """What the bar shows as time left now: the budget left (once spent, the running
        trial's phase and time so far); else, while trials remain, `time_left_text`; after the
        trials, the step under way and its time so far."""
        now = self.clock()
        if self.step is not None:
            name, since = self.step
            return f"{name} {units.duration_s(now - since)}"
        running = None if self.trial_started_at is None else now - self.trial_started_at
        if self.budget_s is not None:
            left = self.budget_s - (now - self.started_at)
            if left < ESTIMATE_FLOOR_S and running is not None:
                return f"budget spent; {self.doing}, {units.duration_s(running)} so far"
            return f"{units.duration_s(max(left, 0))} of budget left"
        if not self.progress.tasks:
            return ""
        task = self.progress.tasks[0]
        remaining = int((task.total or 0) - task.completed)
        per = sum(self.durations) / len(self.durations) if self.durations else None
        return time_left_text(remaining, per, running, self.doing)

    def trial_started(self, config: CompileConfig) -> None:
        self.trial_started_at = self.clock()
        self.step = None
        self.label, self.said_at, self.last = config.label, None, None
        self.doing = "starting"
        self.progress.update(self.task, config=short_label(config), phase="starting")

    def trial_progress(self, info: Mapping[str, Any]) -> None:
        """A running trial's progress: the bar's phase; piped, a line every `PLAIN_EVERY_S`."""
        if self.trial_started_at is None:
            return
        self.last = (info, self.clock())
        self.doing = _doing(str(info.get("phase") or "")) or self.doing
        self.progress.update(self.task, phase=progress_text(info, short=True))
        self.say_progress()

    def phase(self, name: str) -> None:
        if self.trial_started_at is not None:  # a trial's own phase (compiling, measuring)
            self.doing = _doing(name) or self.doing
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
        self.last = None
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
