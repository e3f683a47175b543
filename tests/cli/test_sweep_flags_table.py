"""One declaration of the sweep's flags (advisor.search.request.SweepRequest): the `advisor sweep`
options, the keys of a sweep file and of the row's stored flags, the flags `--resume` checks and
the request the command builds all come from the request's fields; `--dynamic`, the flag added
so, varies torch.compile's dynamic setting of the static shape strategy."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import typer
from support.sweeps import FOUR_DTYPES, sqlite_url

from advisor.cli.sweep import request_from
from advisor.dimensions import varying
from advisor.errors import ConfigError
from advisor.search.request import FIELD_DEFAULT, SweepRequest, flag_fields, resume_checks

# The command's parameters that are not flag fields: the files and the database (fields of the
# request, given explicitly), the sweep file and how the outcome prints.
EXPLICIT = ["files", "db", "config", "as_json"]


def _command() -> Any:
    from advisor.cli.main import app, register

    register()
    return typer.main.get_command(app).commands["sweep"]  # type: ignore[attr-defined]


@contextmanager
def _parsed(*args: str | Path) -> Iterator[typer.Context]:
    """`advisor sweep ARGS` parsed as the command parses them (its sweep file read), not run."""
    with _command().make_context("sweep", [str(a) for a in args]) as ctx:
        yield ctx


def test_the_commands_parameters_are_the_requests_flag_fields_and_the_explicit_ones() -> None:
    names = [p.name for p in _command().params]
    assert names == EXPLICIT + list(flag_fields())
    requested = {f.name for f in dataclasses.fields(SweepRequest)}
    # every field of the request is a flag, an explicit parameter, or made by the command
    assert requested == set(flag_fields()) | {"files", "db", "given_flags", "flags"}


def test_each_option_is_what_its_field_declares() -> None:
    params = {p.name: p for p in _command().params}
    for name, (declared, _) in flag_fields().items():
        param = params[name]
        assert param.opts == [declared.long], name
        negation = declared.option.split("/")[1:]
        assert param.secondary_opts == negation, name
        assert param.help == declared.help, name
        default = SweepRequest.__dataclass_fields__[name].default
        if declared.cli_default is not FIELD_DEFAULT:
            default = declared.cli_default
        assert param.default == (list(default) if param.multiple else default), name
    # the flags whose command default is not the field's (the Python API's) are few and known
    assert {n for n, (d, _) in flag_fields().items() if d.cli_default is not FIELD_DEFAULT} == {
        "screen"}
    assert params["screen"].default == 1.5 and SweepRequest().screen == 0.0


def test_the_names_users_see_are_kept() -> None:
    """Long names (what a sweep file's keys and the stored flags are), defaults, and the
    flags --resume checks: as before the table, plus --dynamic."""
    longs = [d.long for d, _ in flag_fields().values()]
    assert longs == [
        "--trials", "--budget", "--modes", "--dtypes", "--fullgraph", "--dynamic", "--option",
        "--device", "--shape", "--shapes", "--traffic", "--holdout", "--calls-per-process",
        "--resume", "--workers", "--jobs", "--screen", "--sampler", "--priors", "--timeout",
        "--warm", "--warm-all", "--keep-caches", "--confirm", "--confirm-leaders"]
    assert set(resume_checks()) == {
        "--modes", "--dtypes", "--fullgraph", "--dynamic", "--shapes", "--option", "--device",
        "--trials", "--budget", "--shape", "--traffic", "--holdout", "--timeout", "--screen",
        "--sampler", "--priors", "--calls-per-process", "--warm", "--warm-all"}


def test_the_request_holds_the_flags_typed_and_names_the_given_ones() -> None:
    with _parsed(FOUR_DTYPES, "--modes", "eager,default", "--option",
                 "epilogue_fusion=true,false", "--workers", "1", "--no-warm",
                 "--dynamic", "auto,true") as ctx:
        request = request_from(ctx)
    assert request.files == (FOUR_DTYPES,)
    assert request.modes == ["eager", "default"] and request.dtypes is None
    assert request.options == ("epilogue_fusion=true,false",)
    assert request.dynamic == ["auto", "true"]
    assert request.warm is False and request.screen == 1.5 and request.workers == 1
    # the flags --resume checks, given here, in the table's order (--workers is not checked)
    assert request.given_flags == ("--modes", "--dynamic", "--option", "--warm")
    assert request.flags["dynamic"] == "auto,true" and request.flags["option"] == [
        "epilogue_fusion=true,false"]
    assert "db" not in request.flags and "config" not in request.flags


def test_a_sweep_file_gives_dynamic_as_a_list(tmp_path: Path) -> None:
    config = tmp_path / "sweep.toml"
    config.write_text(f'[sweep]\nfiles = ["{FOUR_DTYPES}"]\ndynamic = ["auto", "true"]\n')
    with _parsed("--config", config) as ctx:
        request = request_from(ctx)
    assert request.dynamic == ["auto", "true"]
    assert request.flags["dynamic"] == "auto,true"  # as a sweep file's keys keep it
    assert "--dynamic" in request.given_flags  # a file's value is given, not a default
    with _parsed("--config", config, "--dynamic", "false") as ctx:  # the command line wins
        assert request_from(ctx).dynamic == ["false"]


def test_dynamic_true_false_builds_a_space_varying_dynamic(tmp_path: Path) -> None:
    from advisor.api import plan_sweeps

    with _parsed(FOUR_DTYPES, "--db", sqlite_url(tmp_path / "a.db"), "--device", "cpu",
                 "--modes", "eager,default", "--dtypes", "fp32", "--dynamic", "true,false",
                 "--shapes", "static") as ctx:
        request = request_from(ctx)
    planned = plan_sweeps(request)
    try:
        (plan,) = planned.plans
    finally:
        planned.close()
        planned.store.close()
    space = plan.space
    assert space.dynamic == ["true", "false"]
    assert [c.label for c in space.configs if c.compiled] == [
        "fp32 + default + dynamic=true", "fp32 + default + dynamic=false"]
    assert [c.dynamic for c in space.configs if not c.compiled] == ["auto"]  # eager: none
    assert varying(space.configs)["dynamic"] == ["true", "false"]  # an Optuna parameter


def test_dynamic_applies_to_the_static_shape_strategy_only() -> None:
    from advisor.search.space import build_space

    space = build_space(("fp32",), "cpu",
                        {"mode": ["default"], "dtype": ["fp32"], "dynamic": ["auto", "true"],
                         "shapes": ["static", "dynamic"]})
    assert {(c.shapes, c.dynamic) for c in space.configs if c.compiled} == {
        ("static", "auto"), ("static", "true"), ("dynamic", "auto")}
    with pytest.raises(ConfigError, match="include auto in --dynamic"):
        build_space(("fp32",), "cpu",
                    {"mode": ["default"], "dtype": ["fp32"], "dynamic": ["true"],
                     "shapes": ["dynamic"]})
    with pytest.raises(ConfigError, match="unknown dynamic setting 'sometimes': choose from "
                                          "auto, true, false"):
        build_space(("fp32",), "cpu",
                    {"mode": ["default"], "dtype": ["fp32"], "dynamic": ["sometimes"]})


def test_the_python_api_takes_a_request_and_keywords(tmp_path: Path) -> None:
    from advisor import api

    url = sqlite_url(tmp_path / "a.db")
    # from Python, an error names the Python argument (`advisor.arguments.python_arguments`)
    with pytest.raises(ConfigError, match="^trials= must be at least 1"):
        api.sweep(FOUR_DTYPES, SweepRequest(trials=0, db=url))
    with pytest.raises(ConfigError, match="^trials= must be at least 1"):
        api.sweep(FOUR_DTYPES, SweepRequest(trials=3, db=url), trials=0)  # keywords win
    for wrong in ({"files": (FOUR_DTYPES,)}, {"dynamics": ["true"]}):
        with pytest.raises(ConfigError, match="unknown argument"):
            api.sweep(FOUR_DTYPES, db=url, **wrong)
    assert not (tmp_path / "a.db").exists()


def test_the_trials_options_that_the_sweep_also_takes_say_what_its_flags_declare() -> None:
    """`advisor trial` takes one config: its --shape, --traffic, --holdout, --device and
    --timeout are the sweep's inputs, their help the sweep's declarations (`flag_help`)."""
    from advisor.cli.main import app, register

    register()
    trial = typer.main.get_command(app).commands["trial"]  # type: ignore[attr-defined]
    params = {p.name: p for p in trial.params}
    shared = ("shape", "traffic", "holdout", "device", "timeout_s")
    for name in shared:
        declared, _ = flag_fields()[name]
        assert params[name].opts == [declared.long], name
        assert params[name].help == declared.help, name
        assert params[name].default == SweepRequest.__dataclass_fields__[name].default, name


def _bad_values(tmp_path: Path) -> dict[str, Any]:
    """A value each self-checking flag refuses, by field name."""
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    return {
        "trials": 0, "budget": "xyz", "options": ("no_such_option=1",), "shape": "batch=x",
        "calls_per_process": 0, "screen": -1.0,
        "sampler": "bogus", "timeout_s": 0.5, "keep_caches": a_file / "caches",
        "fullgraph": "maybe",
    }


def test_the_request_checks_itself_each_flag_beside_its_declaration(tmp_path: Path) -> None:
    """`SweepRequest.check`: each flag's own check (declared with the flag) refuses a bad
    value alone, in one pass that needs neither the device nor a workload's import."""
    from advisor.errors import AdvisorError

    bad = _bad_values(tmp_path)
    checked = {name for name, (declared, _) in flag_fields().items() if declared.check}
    assert checked == set(bad)  # a flag given a check gets a bad value here
    good = SweepRequest(files=(FOUR_DTYPES,), db=sqlite_url(tmp_path / "a.db"))
    good.check()
    for name, value in bad.items():
        with pytest.raises(AdvisorError) as refused:
            dataclasses.replace(good, **{name: value}).check()
        assert "\n" not in str(refused.value), name
    # the checks across flags: the space's flags together, --holdout with --traffic, the files
    across: dict[str, Any] = {
        "unknown mode 'bogus'": {"modes": ["bogus"]},
        "include auto in --dynamic": {"dynamic": ["true"], "shapes": ["dynamic"]},
        "--holdout 0.3 applies only with --traffic": {"holdout": 0.3},
        "no such traffic file": {"traffic": tmp_path / "no_such_log.csv"},
        "no such workload file": {"files": (tmp_path / "missing.py",)},
    }
    for words, fields in across.items():
        with pytest.raises(AdvisorError, match=words):
            dataclasses.replace(good, **fields).check()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]  # nothing written


def test_the_first_bad_flag_in_help_order_is_the_one_named(tmp_path: Path) -> None:
    request = SweepRequest(files=(FOUR_DTYPES,), db=sqlite_url(tmp_path / "a.db"),
                           trials=0, sampler="bogus", modes=["bogus"])
    with pytest.raises(ConfigError, match="^--trials must be at least 1, e.g. --trials 20$"):
        request.check()
    with pytest.raises(ConfigError, match="^unknown --sampler 'bogus'"):
        dataclasses.replace(request, trials=None).check()
    # the space's flags are checked together, after every flag's own check
    with pytest.raises(ConfigError, match="^unknown mode 'bogus'"):
        dataclasses.replace(request, trials=None, sampler="tpe").check()
