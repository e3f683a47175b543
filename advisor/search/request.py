"""What a sweep is asked to do: `SweepRequest`, the one declaration of the `advisor sweep` flags.
Light: the standard library, `advisor.dimensions` and `advisor.errors` only (`advisor sweep
--help` imports it). `SweepSettings`, what the request resolves to and a sweep's row keeps, is
here too.

Each flag is a field of `SweepRequest` declared with `flag`: its default, its option (long name;
``--x/--no-x`` for a bool with its negation), its help, and how a resumed sweep's stored
(settings, space) reads it back for the contradiction check (None: not checked at resume). The
`advisor sweep` options, the flags a `--config` sweep file takes and a sweep's row keeps, the
flags `--resume` checks (`advisor.search.resume`) and the request the command builds all follow
from the fields (`flag_fields`). A new sweep flag is one field here and its use in
`advisor.api.plan_sweeps`, e.g.::

    dynamic: Sequence[str] | None = flag(
        None, "--dynamic", "Comma-separated dynamic settings to try, e.g. auto,true (default "
        "auto); " + DIM["dynamic"].help + ".", comma=True, resume=lambda s, sp: sp.dynamic)

A request checks itself in one pass (`SweepRequest.check`): each flag's own check, declared
beside it (``check=``), in the order `--help` lists them, then the checks across flags. What
needs the device or a workload is checked in `advisor.api.plan_sweeps`, once those are known.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from advisor.dimensions import BY_NAME as DIM
from advisor.dimensions import OPTION_PREFIX, OPTIONS_BY_NAME, Value, parse_options
from advisor.errors import ConfigError

if TYPE_CHECKING:
    from advisor.search.space import Space

T = TypeVar("T")
FLAG = "advisor.flag"  # the key of a field's metadata that holds its `Flag`

# Defaults the flags show, the modules' own values (tests/cli/test_cli_help_imports.py checks
# them): constants here, so that `advisor sweep --help` imports none of those modules.
HOLDOUT = 0.5  # advisor.traffic.HOLDOUT
DEFAULT_TIMEOUT_S = 900.0  # advisor.search.launcher.DEFAULT_TIMEOUT_S
DEFAULT_CALLS_PER_PROCESS = 10_000  # advisor.serving.DEFAULT_CALLS_PER_PROCESS

MIN_TIMEOUT_S = 1.0  # a trial starts a Python process: no time limit below this can be met
SAMPLERS = ("tpe", "random", "grid")  # advisor.search.study.make_sampler's names
FULLGRAPH_CHOICES = {"off": (False,), "on": (True,), "both": (False, True)}  # --fullgraph

# A config whose first short measurement is above this multiple of the best median so far is
# clearly dominated: its full sampling is skipped (`SweepSettings.screen`, `--screen`).
SCREEN_FACTOR = 1.5


@dataclass(frozen=True)
class SweepSettings:
    """What a sweep was asked to do, resolved (`advisor.api.plan_sweeps` makes it from a
    `SweepRequest`) and stored with the sweep (`to_dict`; read back with `from_dict`). Where a
    field's name is not its flag's, the flag's value was resolved into it: ``--trials`` ->
    ``n_trials``, ``--budget 20m`` -> ``budget_s`` (seconds), ``--warm``/``--warm-all`` ->
    ``measure_warm``, ``--timeout`` -> ``timeout_s``, ``--shape``/``--traffic`` -> the shape
    or replay measured; each flag's ``resume`` reads its field back, typed (`Resume`)."""

    device: str
    n_trials: int | None = None
    budget_s: float | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    measure_warm: bool = True  # the recommended config's warm start, after the trials
    warm_all: bool = False  # every compiled config's, one more process per trial
    seed: int = 0
    shape: dict[str, int] | None = None
    policy: dict[str, Any] | None = None
    # advisor.traffic.Traffic.to_spec(): when set, every trial replays a trace of this traffic
    traffic: list[dict[str, Any]] | None = None
    # a config whose short first measurement is above screen x the best median so far is
    # clearly dominated: its full sampling is skipped (None: every config measured in full)
    screen: float | None = SCREEN_FACTOR
    # when configs tie with the leader or come near it, re-measure them interleaved in one
    # process before the recommendation (advisor.search.confirm): separate processes minutes apart
    # cannot order them
    confirm_leaders: bool = True
    # the Optuna sampler (one of `SAMPLERS`) and whether a budgeted sweep queues the fleet's
    # and the priors' picks first (advisor.search.plan)
    sampler: str = "tpe"
    priors: bool = True
    # a replay under varying traffic is judged by its cost per request over a process serving
    # this many requests (None: advisor.serving.DEFAULT_CALLS_PER_PROCESS)
    calls_per_process: int | None = None
    # the command line's flags, resolved (a --config file merged in, flags given win): the keys
    # of a sweep.toml that reruns this sweep (`advisor sweep --config`)
    flags: dict[str, Any] | None = None

    @property
    def budgeted(self) -> bool:
        return self.n_trials is not None or self.budget_s is not None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> SweepSettings:
        """The settings a sweep row keeps (`to_dict`, with its ``space`` beside them): the keys
        of this class's fields, others (``space``, a key an older version wrote) left out."""
        names = {f.name for f in dataclasses.fields(cls)}
        if "device" not in stored:
            raise ConfigError("the sweep's stored settings name no device (written by hand, or "
                              "imported damaged): start a new sweep")
        return cls(**{k: v for k, v in stored.items() if k in names})


# How a resumed sweep's stored (settings, space) reads a flag back, for the contradiction check
Resume = Callable[[SweepSettings, "Space"], object]
# A flag's own check of a value given for it (not None): raises ConfigError (or StoreError,
# WorkloadError) naming the flag and how to fix it; what it returns is not used
Check = Callable[[Any], object]


def check_timeout(value: float, flag: str = "--timeout") -> None:
    """A per-trial time limit: finite seconds, at least `MIN_TIMEOUT_S`; ConfigError else."""
    if not (math.isfinite(value) and value >= MIN_TIMEOUT_S):
        raise ConfigError(f"{flag} {value:g} is not a time limit a trial can meet: give the "
                          f"seconds a trial may take (at least {MIN_TIMEOUT_S:g}), e.g. "
                          f"{flag} 900")


def check_holdout(holdout: float, traffic: Path | None, given: bool = False) -> None:
    """``--holdout`` applies to a ``--traffic`` log only: given (or not the default) without
    one, it is refused naming both (a replay of declared traffic holds nothing out)."""
    if traffic is None and (given or holdout != HOLDOUT):
        shown = f"{holdout:g}" if isinstance(holdout, float) else str(holdout)
        raise ConfigError(f"--holdout {shown} applies only with --traffic (the share of a traffic "
                          "log that replays serve): give --traffic FILE, or drop --holdout")


def _at_least_one(option: str, example: str) -> Check:
    def check(value: int) -> None:
        if value < 1:
            raise ConfigError(f"{option} must be at least 1, e.g. {option} {example}")
    return check


def _budget(text: str) -> float:
    from advisor.search.space import parse_budget

    return parse_budget(text)


def _fullgraph(choice: str) -> None:
    if choice not in FULLGRAPH_CHOICES:
        raise ConfigError(f"bad --fullgraph {choice!r}: choose both, on or off")


def _screen(value: float) -> None:
    if not (math.isfinite(value) and value >= 0):
        raise ConfigError("--screen must be 0 (off) or a factor such as 1.5")


def _sampler(name: str) -> None:
    if name not in SAMPLERS:
        raise ConfigError(f"unknown --sampler {name!r}: choose one of {', '.join(SAMPLERS)}")


def _shape(text: str) -> None:
    from advisor.config import parse_shape

    parse_shape(text)  # its dims: once the workload is read


def _keep_caches(path: Path) -> None:
    """A directory that is, or can be created, and written by this user (tried for real:
    `advisor.paths.creatable_folder`); checked before anything is stored (its first use comes
    after the sweep's row). Nothing created."""
    from advisor import paths

    paths.creatable_folder(path, "--keep-caches")


class _FieldDefault:
    def __repr__(self) -> str:
        return "FIELD_DEFAULT"


FIELD_DEFAULT: Any = _FieldDefault()  # a flag's `cli_default` when it is the field's default


@dataclass(frozen=True)
class Flag:
    """How a field of `SweepRequest` is an `advisor sweep` flag.

    option: ``--name``, or ``--name/--no-name`` for a bool. resume: the value a sweep's
    (settings, space) stands for, compared at `--resume` (None: the flag is not checked).
    comma: the command line gives comma-separated text (``--modes eager,default``) that the
    field holds as a list (None: not given); a sweep file may give a TOML list.
    cli_default: the command's default where it is not the field's (`FIELD_DEFAULT`: the
    field's). check: the flag's own check of a value given for it (`Check`; None: none)."""

    option: str
    help: str
    resume: Resume | None = None
    comma: bool = False
    cli_default: Any = FIELD_DEFAULT
    check: Check | None = None

    @property
    def long(self) -> str:
        """The option's long name (``--warm`` of ``--warm/--no-warm``): what the resume check
        and its messages name, and, without ``--``, the flag's key in a sweep file."""
        return self.option.split("/")[0]


def flag(default: T, option: str, help: str, *, resume: Resume | None = None,
         comma: bool = False, cli_default: Any = FIELD_DEFAULT, check: Check | None = None) -> T:
    """A field of `SweepRequest` that is an `advisor sweep` flag (see `Flag`)."""
    declared = Flag(option, help, resume, comma, cli_default, check)
    found: T = field(default=default, metadata={FLAG: declared})
    return found


@dataclass(frozen=True, kw_only=True)
class SweepRequest:
    """Everything a sweep is asked to do: the workload files, the database, the `advisor sweep`
    flags (the fields declared with `flag`, in the order `--help` lists them). ``given_flags``:
    the flags checked at resume that were given explicitly (a resumed sweep refuses those that
    contradict its settings); ``flags``: what the sweep's row keeps so that it can be rerun."""

    files: tuple[Path, ...] = ()
    db: str | None = None
    trials: int | None = flag(
        None, "--trials", "Measure at most N configs (TPE picks them when N < the space).",
        resume=lambda s, sp: s.n_trials, check=_at_least_one("--trials", "20"))
    budget: str | None = flag(
        None, "--budget", "The sweep's time, e.g. 20m: trials run in its first 80% (the eager "
        "fp32 baseline within its first fifth; a replay's steady state sized to its trial's "
        "share; a trial still running then is stopped and kept as stopped, not measured), the "
        "rest pairs the pick with eager fp32 and measures its warm start (all of it with "
        "--no-warm --no-confirm-leaders).",
        resume=lambda s, sp: s.budget_s, check=_budget)
    modes: Sequence[str] | None = flag(
        None, "--modes", "Comma-separated modes to try; " + DIM["mode"].help + ".", comma=True,
        resume=lambda s, sp: sp.modes)
    dtypes: Sequence[str] | None = flag(
        None, "--dtypes", "Comma-separated dtypes to try; " + DIM["dtype"].help + ".",
        comma=True, resume=lambda s, sp: sp.dtypes)
    fullgraph: str = flag(
        "off", "--fullgraph", "both, on or off: " + DIM["fullgraph"].help + ".",
        resume=lambda s, sp: sorted({c.fullgraph for c in sp.configs if c.compiled}),
        check=_fullgraph)
    dynamic: Sequence[str] | None = flag(
        None, "--dynamic", "Comma-separated dynamic settings to try, e.g. auto,true (default "
        "auto); " + DIM["dynamic"].help + ".", comma=True, resume=lambda s, sp: sp.dynamic)
    options: Sequence[str] = flag(
        (), "--option", "Sweep an Inductor option: NAME=V1,V2 (repeatable), e.g. "
        "epilogue_fusion=true,false; the sweepable ones: " + ", ".join(OPTIONS_BY_NAME) + ".",
        resume=lambda s, sp: sorted({f"{k}={v}" for c in sp.configs
                                     for k, v in c.options.items()}), check=parse_options)
    device: str | None = flag(
        None, "--device", "cuda, cuda:N or cpu (default: cuda when present, else cpu).",
        resume=lambda s, sp: s.device)
    shape: str | None = flag(
        None, "--shape", "Shape to measure, e.g. batch=50,seq=128 (default: the workload's).",
        resume=lambda s, sp: s.shape, check=_shape)
    shapes: Sequence[str] | None = flag(
        None, "--shapes", "Comma-separated shape strategies to compare, e.g. static,dynamic,"
        "buckets:pow2,buckets:fitted-4 (default static; more than static replays the traffic).",
        comma=True, resume=lambda s, sp: sp.shapes)
    traffic: Path | None = flag(
        None, "--traffic", "CSV of observed requests (header: the dims, e.g. batch,seq; one row "
        "per request), replayed instead of one shape.", resume=lambda s, sp: s.traffic)
    holdout: float = flag(
        HOLDOUT, "--holdout", "With --traffic: the share of the log, at its end, that replays "
        "serve; buckets and start-up shapes are fitted on the earlier rest.",
        resume=lambda s, sp: s.traffic)
    calls_per_process: int | None = flag(
        None, "--calls-per-process", "Requests a serving process lives for: under varying "
        "traffic the pick is the lowest cost per request over such a process (default "
        f"{DEFAULT_CALLS_PER_PROCESS:,}).", resume=lambda s, sp: s.calls_per_process,
        check=_at_least_one("--calls-per-process", "10000"))
    resume: bool = flag(False, "--resume", "Continue the last interrupted sweep.")
    workers: int = flag(
        1, "--workers", "Worker processes, one per GPU, sharing the sweep (needs every config "
        "of the space: no --trials/--budget).")
    jobs: int | None = flag(
        None, "--jobs", "Trials at once per device: they compile side by side and take turns "
        "to measure, alone (default on a GPU: one per two cores, shared among --workers, at "
        "most 8; else 1; never more in all than two a host core).")
    # The command screens by default; the Python API measures every config in full unless
    # asked (0: off), as it always has.
    screen: float = flag(
        0.0, "--screen", "Cut short a config whose first short measurement is above this "
        "multiple of the best median so far (0: measure every config in full).",
        cli_default=1.5, resume=lambda s, sp: s.screen, check=_screen)
    sampler: str = flag(
        "tpe", "--sampler", "Optuna sampler once the queued configs are measured: tpe, random "
        "or grid (every combination once, in random order).", resume=lambda s, sp: s.sampler,
        check=_sampler)
    priors: bool = flag(
        True, "--priors/--no-priors", "Try the eager baseline, the fleet's best configs for "
        "this workload, then the priors' picks first (advisor.search.priors): before the "
        "sampler with --trials/--budget, before the space's own order in a pooled full sweep.",
        resume=lambda s, sp: s.priors)
    timeout_s: float = flag(
        DEFAULT_TIMEOUT_S, "--timeout", "Per-trial time limit in seconds.",
        resume=lambda s, sp: s.timeout_s, check=check_timeout)
    warm: bool = flag(
        True, "--warm/--no-warm", "After the trials, measure the recommended config's warm "
        "start (a second process compiling from its cache).",
        resume=lambda s, sp: s.measure_warm)
    warm_all: bool = flag(
        False, "--warm-all", "Measure every compiled config's warm start (one more process per "
        "trial).", resume=lambda s, sp: s.warm_all)
    keep_caches: Path | None = flag(
        None, "--keep-caches", "Keep each trial's Inductor cache under DIR/<trial uuid>.",
        check=_keep_caches)
    confirm: bool = flag(
        False, "--confirm", "At the end, re-measure the top configs and eager fp32 interleaved "
        "in one process, decide on those paired figures, save a warm-start artifact.")
    confirm_leaders: bool = flag(
        True, "--confirm-leaders/--no-confirm-leaders", "When configs tie with the fastest or "
        "come within 10% of it, re-measure the first three and eager fp32 interleaved in one "
        "process and decide on those paired figures (--confirm does this for the top configs "
        "anyway; not with --traffic, whose replays are the figures).")
    given_flags: tuple[str, ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)

    def dimension_values(self) -> dict[str, Sequence[Value] | None]:
        """The space's dimensions as the flags choose them: `build_space`'s mapping (None: the
        dimension's default), each Inductor option as ``option.NAME``."""
        return {"mode": self.modes, "dtype": self.dtypes,
                "fullgraph": FULLGRAPH_CHOICES[self.fullgraph],
                "shapes": list(self.shapes or ["static"]), "dynamic": self.dynamic,
                **{OPTION_PREFIX + name: values
                   for name, values in parse_options(self.options).items()}}

    @property
    def budget_s(self) -> float | None:
        """``--budget`` in seconds (None: not given)."""
        return _budget(self.budget) if self.budget is not None else None  # "": a mistake

    def check(self) -> None:
        """The request's mistakes that need neither the device nor a workload, in one pass,
        before any child starts (the probe and the workloads' descriptions import torch:
        seconds, for a typo): each flag's own check, in the order `--help` lists them, then
        the checks across flags: the space's flags together (any dtype a workload may allow;
        each workload's own are checked once it is read), ``--holdout`` without ``--traffic``,
        the traffic file read once with its holdout share,
        each workload file a readable .py file, the database URL. Raises ConfigError (or
        StoreError, WorkloadError)."""
        from advisor.config import DTYPES
        from advisor.db.engine import check_sqlite_path, parse_url, resolve_url
        from advisor.search.space import build_space
        from advisor.traffic import load_traffic
        from advisor.workload import read_workload_file

        for name, (declared, _) in flag_fields().items():
            value = getattr(self, name)
            if declared.check is not None and value is not None:
                declared.check(value)
        build_space(DTYPES, self.device or "cuda", self.dimension_values())
        check_holdout(self.holdout, self.traffic, "--holdout" in self.given_flags
                      and not self.resume)
        if self.traffic is not None:  # read once: the file, then the holdout share of it
            load_traffic(self.traffic).with_holdout(self.holdout)
        for file in self.files:
            read_workload_file(file)
        check_sqlite_path(parse_url(resolve_url(self.db)), folder_needed=True)


def flag_fields() -> dict[str, tuple[Flag, Any]]:
    """The flag fields of `SweepRequest`, in order: field name -> (its `Flag`, its type)."""
    hints = typing.get_type_hints(SweepRequest)
    return {f.name: (f.metadata[FLAG], hints[f.name]) for f in dataclasses.fields(SweepRequest)
            if FLAG in f.metadata}


def flag_help(name: str) -> str:
    """The help of the `SweepRequest` flag field ``name``: what another command that takes the
    same input (`advisor trial`'s ``--shape``, ``--traffic``, ...) says of it."""
    declared, _ = flag_fields()[name]
    return declared.help


def resume_checks() -> dict[str, Resume]:
    """The flags `--resume` checks: long name -> how (settings, space) read it back."""
    return {declared.long: declared.resume for declared, _ in flag_fields().values()
            if declared.resume is not None}
