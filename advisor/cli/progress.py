"""The sweep's progress bar: trials done of planned, current config and phase, best, time left.

On a terminal, a bar redrawn in place; piped (not a terminal), plain lines instead: one per
finished trial with done/planned, the best so far, the time elapsed and the time left.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from advisor import units
from advisor.cli.render import short_label
from advisor.config import CompileConfig
from advisor.records import TrialRecord


class ProgressObserver:
    """A `advisor.search.sweep.Observer` drawing on stderr (stdout stays clean for --json)."""

    def __init__(self) -> None:
        self.console = Console(stderr=True, highlight=False)
        self.plain = not self.console.is_terminal  # piped: no bar redrawn over itself
        self.progress = Progress(
            TextColumn("[bold]{task.fields[config]}[/bold] {task.fields[phase]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("best {task.fields[best]}"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[left]}"),
            console=self.console,
            transient=False,
            # Redrawing is the parent's only work while a child measures: once a second keeps
            # it off the cores a CPU measurement uses.
            refresh_per_second=1,
            disable=self.plain,
        )
        self.task: Any = None
        self.started_at = time.monotonic()
        self.budget_s: float | None = None
        self.durations: list[float] = []
        self.trial_started_at = 0.0
        self.planned = 0

    def __enter__(self) -> ProgressObserver:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def started(self, sweep_id: int, planned: int, done: int, budget_s: float | None) -> None:
        self.budget_s, self.planned = budget_s, planned
        self.console.print(f"sweep {sweep_id}: {planned} trials planned, {done} already done")
        self.task = self.progress.add_task(
            "sweep", total=planned, completed=done, config="", phase="", best="-", left=""
        )

    def _left(self) -> str:
        elapsed = time.monotonic() - self.started_at
        if self.budget_s is not None:
            return f"{units.duration_s(max(self.budget_s - elapsed, 0))} of budget left"
        task = self.progress.tasks[0]
        remaining = (task.total or 0) - task.completed
        if self.durations and remaining > 0:
            per = sum(self.durations) / len(self.durations)
            return f"~{units.duration_s(remaining * per)} left"
        return ""

    def trial_started(self, config: CompileConfig) -> None:
        self.trial_started_at = time.monotonic()
        self.progress.update(self.task, config=short_label(config.to_dict()), phase="starting",
                             left=self._left())

    def phase(self, name: str) -> None:
        self.progress.update(self.task, phase=name)

    def notice(self, text: str) -> None:
        self.console.print(f"advisor: {text}")

    def trial_finished(self, record: TrialRecord, best_ms: float | None) -> None:
        self.durations.append(time.monotonic() - self.trial_started_at)
        if record["status"] == "ok":
            outcome = units.duration_ms(record["median_ms"]) + ("" if record["passed"]
                                                                else " (rejected)")
        else:
            outcome = f"[red]failed: {record['failure_reason']}[/red]"
        self.console.print(f"  {CompileConfig.from_dict(record['config']).label}: {outcome}")
        if record.get("tried_because"):
            self.console.print(f"    tried because {record['tried_because']}")
        best = units.duration_ms(best_ms) if best_ms else "-"
        self.progress.update(self.task, advance=1, best=best, left=self._left())
        if self.plain:
            task = self.progress.tasks[0]
            left = self._left()
            elapsed = units.duration_s(time.monotonic() - self.started_at)
            planned = int(task.total) if task.total else "?"
            self.console.print(f"  {int(task.completed)}/{planned} done, best {best}, "
                               f"{elapsed} elapsed" + (f", {left}" if left else ""))
