"""CompileConfig: validation, stable key, dict round trip, torch.compile kwargs; parse_shape."""

from __future__ import annotations

import hashlib
import json

import pytest

from advisor.config import (
    DTYPES,
    EAGER_FP32,
    MODE_OPTIONS,
    MODES,
    CompileConfig,
    parse_shape,
    shape_name,
)
from advisor.errors import AdvisorError, ConfigError

# --- validation -------------------------------------------------------------------------------


def test_defaults_are_default_mode_fp32() -> None:
    config = CompileConfig()
    assert (config.mode, config.dtype, config.fullgraph, config.dynamic, config.options) == (
        "default",
        "fp32",
        False,
        "auto",
        {},
    )
    assert config.compiled
    assert not EAGER_FP32.compiled


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_mode_and_dtype_is_accepted(mode: str, dtype: str) -> None:
    assert CompileConfig(mode=mode, dtype=dtype).to_dict()["mode"] == mode


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"mode": "fast"}, ["mode", "'fast'", "reduce-overhead"]),
        ({"mode": "Default"}, ["mode", "'Default'"]),
        ({"mode": ""}, ["mode"]),
        ({"dtype": "float32"}, ["dtype", "'float32'", "bf16"]),
        ({"dtype": "fp64"}, ["dtype", "'fp64'"]),
        ({"fullgraph": "yes"}, ["fullgraph", "'yes'"]),
        ({"fullgraph": 1}, ["fullgraph"]),
        ({"dynamic": "maybe"}, ["dynamic", "'maybe'", "auto"]),
        ({"dynamic": True}, ["dynamic"]),
        ({"dynamic": None}, ["dynamic"]),
        ({"options": [("freezing", True)]}, ["options", "mapping"]),
        ({"options": {"freezing": [True]}}, ["freezing"]),
        ({"options": {"freezing": None}}, ["freezing"]),
        ({"options": {"nested": {"a": 1}}}, ["nested"]),
        ({"options": {3: True}}, ["3"]),
        ({"mode": "eager", "options": {"freezing": True}}, ["eager"]),
        ({"mode": "eager", "fullgraph": True}, ["eager"]),
        ({"mode": "eager", "dynamic": "true"}, ["eager"]),
    ],
)
def test_bad_field_is_a_clear_config_error(fields: dict, words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        CompileConfig(**fields)
    message = str(info.value)
    assert len(message.splitlines()) == 1
    for word in words:
        assert word in message
    assert isinstance(info.value, AdvisorError)


def test_scalar_options_of_every_kind_are_accepted() -> None:
    options = {"freezing": True, "compile_threads": 1, "x.ratio": 0.5, "gemm": "ATEN"}
    assert CompileConfig(options=options).options == dict(sorted(options.items()))


def test_config_is_frozen_and_owns_its_options() -> None:
    options = {"freezing": True}
    config = CompileConfig(options=options)
    options["epilogue_fusion"] = False  # the caller's dict changing later changes nothing
    assert config.options == {"freezing": True}
    with pytest.raises(AttributeError):
        config.mode = "eager"  # type: ignore[misc]


# --- stable key -------------------------------------------------------------------------------


def test_key_format_is_pinned() -> None:
    # Keys land in databases: their text must not drift between versions.
    assert EAGER_FP32.key == "eager/fp32"
    assert CompileConfig().key == "default/fp32/graphbreaks-ok/dynamic-auto"
    assert (
        CompileConfig(mode="reduce-overhead", dtype="bf16", fullgraph=True, dynamic="false").key
        == "reduce-overhead/bf16/fullgraph/dynamic-false"
    )
    blob = json.dumps({"a": 1, "b": True}, sort_keys=True).encode()
    digest = hashlib.sha256(blob).hexdigest()[:10]
    assert CompileConfig(options={"b": True, "a": 1}).key == (
        f"default/fp32/graphbreaks-ok/dynamic-auto/opts-{digest}"
    )


def test_same_config_same_key() -> None:
    a = CompileConfig(mode="max-autotune", dtype="fp16", options={"x": 1, "y": "z"})
    b = CompileConfig(mode="max-autotune", dtype="fp16", options={"y": "z", "x": 1})
    assert a == b
    assert a.key == b.key
    assert hash(a) == hash(b)
    assert len({a, b}) == 1


def test_different_configs_different_keys() -> None:
    configs = [EAGER_FP32, CompileConfig(mode="eager", dtype="bf16")]
    for mode in MODES[1:]:
        for dtype in DTYPES:
            for fullgraph in (False, True):
                for dynamic in ("auto", "true", "false"):
                    configs.append(CompileConfig(mode, dtype, fullgraph, dynamic))
    configs += [
        CompileConfig(options={"freezing": True}),
        CompileConfig(options={"freezing": False}),
        CompileConfig(options={"freezing": 1}),  # 1 and True must not collide
        CompileConfig(options={"epilogue_fusion": True}),
    ]
    keys = [c.key for c in configs]
    assert len(set(keys)) == len(keys)


def test_label_reads_like_the_config() -> None:
    assert CompileConfig(mode="reduce-overhead", dtype="bf16").label == "bf16 + reduce-overhead"
    label = CompileConfig(fullgraph=True, dynamic="true", options={"freezing": True}).label
    assert label == "fp32 + default + fullgraph + dynamic=true + freezing=True"


# --- plain dicts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        EAGER_FP32,
        CompileConfig(),
        CompileConfig("reduce-overhead", "bf16", True, "false"),
        CompileConfig("max-autotune-no-cudagraphs", "tf32", False, "true", {"freezing": True}),
    ],
)
def test_dict_round_trip(config: CompileConfig) -> None:
    data = config.to_dict()
    assert set(data) == {"mode", "dtype", "fullgraph", "dynamic", "options"}
    # Plain data only: it survives JSON (what crosses processes and lands in the store).
    again = CompileConfig.from_dict(json.loads(json.dumps(data)))
    assert again == config
    assert again.key == config.key


def test_to_dict_gives_a_copy_of_options() -> None:
    config = CompileConfig(options={"freezing": True})
    config.to_dict()["options"]["freezing"] = False
    assert config.options == {"freezing": True}


def test_from_dict_rejects_unknown_fields_and_bad_values() -> None:
    with pytest.raises(ConfigError, match="unknown config fields: colour"):
        CompileConfig.from_dict({"mode": "default", "colour": "red"})
    with pytest.raises(ConfigError, match="unknown mode"):
        CompileConfig.from_dict({"mode": "turbo"})


def test_from_dict_fills_defaults() -> None:
    assert CompileConfig.from_dict({"mode": "eager"}) == EAGER_FP32


# --- torch.compile kwargs ---------------------------------------------------------------------


def test_compile_kwargs_without_options_pass_the_mode() -> None:
    assert CompileConfig().compile_kwargs() == {"fullgraph": False}
    assert CompileConfig(mode="reduce-overhead", fullgraph=True).compile_kwargs() == {
        "fullgraph": True,
        "mode": "reduce-overhead",
    }
    assert CompileConfig(dynamic="true").compile_kwargs() == {"fullgraph": False, "dynamic": True}
    assert CompileConfig(dynamic="false").compile_kwargs() == {
        "fullgraph": False,
        "dynamic": False,
    }


@pytest.mark.parametrize("mode", MODES[1:])
def test_compile_kwargs_expand_the_mode_into_options(mode: str) -> None:
    kwargs = CompileConfig(mode=mode, options={"freezing": True}).compile_kwargs()
    assert "mode" not in kwargs  # torch.compile refuses mode and options together
    assert kwargs["options"] == {**MODE_OPTIONS[mode], "freezing": True}


def test_user_options_override_the_modes_options() -> None:
    config = CompileConfig(mode="reduce-overhead", options={"triton.cudagraphs": False})
    assert config.compile_kwargs()["options"] == {"triton.cudagraphs": False}
    assert not config.uses_cudagraphs


def test_uses_cudagraphs() -> None:
    assert CompileConfig(mode="reduce-overhead").uses_cudagraphs
    assert CompileConfig(mode="max-autotune").uses_cudagraphs
    assert CompileConfig(mode="max-autotune", options={"freezing": True}).uses_cudagraphs
    assert not CompileConfig(mode="max-autotune-no-cudagraphs").uses_cudagraphs
    assert not CompileConfig().uses_cudagraphs
    assert not EAGER_FP32.uses_cudagraphs
    assert CompileConfig(options={"triton.cudagraphs": True}).uses_cudagraphs


def test_mode_options_match_torch() -> None:
    # Our expansion of each mode must be what torch itself means by it.
    inductor = pytest.importorskip("torch._inductor")
    for mode, options in MODE_OPTIONS.items():
        assert inductor.list_mode_options(mode) == options, mode


# --- shapes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "dims"),
    [
        ("batch=50,seq=128", {"batch": 50, "seq": 128}),
        ("batch=1", {"batch": 1}),
        (" batch = 50 , seq=128 ", {"batch": 50, "seq": 128}),
        ("n_items=7", {"n_items": 7}),
    ],
)
def test_parse_shape(text: str, dims: dict[str, int]) -> None:
    parsed = parse_shape(text)
    assert parsed == dims
    assert list(parsed) == list(dims)  # order kept: it is the shape's canonical name
    assert parse_shape(shape_name(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", ["name=int"]),
        ("batch", ["name=int"]),
        ("=5", ["name=int"]),
        ("1st=5", ["name=int"]),
        ("batch=50,", ["name=int"]),
        ("batch:50", ["name=int"]),
        ("batch=", ["whole number"]),
        ("batch=x", ["whole number"]),
        ("batch=1.5", ["whole number"]),
        ("batch=0", ["positive"]),
        ("batch=-3", ["positive"]),
        ("batch=2,batch=3", ["twice"]),
    ],
)
def test_parse_shape_rejects_bad_text(text: str, words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        parse_shape(text)
    message = str(info.value)
    assert message.startswith(f"bad shape {text!r}")
    for word in words:
        assert word in message


def test_shape_name() -> None:
    assert shape_name({"batch": 50, "seq": 128}) == "batch=50,seq=128"
