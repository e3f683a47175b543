"""A recommendation as data, as Python to paste into a serving process, and as YAML."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from advisor.config import TORCH_DTYPE_NAMES
from advisor.recommendation.evidence import Recommendation
from advisor.recommendation.policies import policy_named
from advisor.serving import DEFAULT_CALLS_PER_PROCESS
from advisor.stats import CONFIDENCE
from advisor.units import duration_ms, interval_ms


def export_dict(rec: Recommendation, device_id: str | None = None) -> dict[str, Any]:
    """What to paste into a serving process: the torch.compile call, dtype handling, shapes
    and the figures the recommendation rests on. Plain data (JSON/YAML-ready). ``device_id``:
    the device's short id (`advisor.devices.device_id`), beside its fingerprint hash."""
    if rec.best is None:
        return {"workload": rec.workload, "device_id": device_id,
                "fingerprint_hash": rec.fingerprint_hash, "policy": rec.policy,
                "recommendation": None, "sentence": rec.sentence}
    b = rec.best
    config = b.config
    figures: dict[str, Any] = {
        "median_ms": b.median_ms, "median_ci_ms": b.median_ci_ms, "p99_ms": b.p99_ms,
        "speedup_vs_eager_fp32": b.speedup, "speedup_ci": b.speedup_ci,
        "eager_fp32_median_ms": rec.baseline.median_ms if rec.baseline else None,
        "cold_compile_s": b.cold_compile_s, "warm_compile_s": b.warm_compile_s,
        "break_even_calls": b.break_even_calls, "throughput_per_s": b.throughput_per_s,
        "peak_mem_bytes": b.peak_mem_bytes, "max_abs_err": b.max_abs_err,
        "confirmed": b.confirmed, "trial_uuid": b.trial_uuid,
        "decided_by": rec.decided_by, "steady_ms": b.steady_ms,
    }
    if b.figure == "process":
        figures["calls_per_process"] = rec.calls_per_process or DEFAULT_CALLS_PER_PROCESS
    figures.update(policy_named(rec.policy, rec.calls_per_process).export_figures(rec, b))
    out: dict[str, Any] = {
        "workload": rec.workload,
        "device_id": device_id,
        "fingerprint_hash": rec.fingerprint_hash,
        "policy": rec.policy,
        "config": config.to_dict(),
        "label": config.label,
        "compiled": config.compiled,
        "torch_compile": config.compile_kwargs() if config.compiled else None,
        "dtype": {
            "name": config.dtype,
            "torch_dtype": f"torch.{TORCH_DTYPE_NAMES[config.dtype]}",
            "cast_model": config.dtype in ("bf16", "fp16"),
            "cast_inputs": "floating-point tensors" if config.dtype in ("bf16", "fp16") else None,
            "float32_matmul_precision": "high" if config.dtype == "tf32" else "highest",
        },
        "cudagraphs": config.uses_cudagraphs,
        "shapes": b.shapes,
        "buckets": b.buckets,
        "flags": b.flags,
        "figures": figures,
        "sentence": rec.sentence,
        "note": rec.note or None,
        "staleness": rec.staleness,
        "artifact": rec.artifact,
    }
    return out


def to_python(rec: Recommendation, device_id: str | None = None) -> str:
    """A Python snippet applying the recommendation (comments carry the evidence; the device
    named by its short id, ``device_id``, when given)."""
    data = export_dict(rec, device_id)
    on = f" on {device_id}" if device_id else ""
    lines = [f"# advisor recommendation for {rec.workload}{on} (fingerprint "
             f"{rec.fingerprint_hash}, policy {rec.policy})"]
    lines += _comment(rec.sentence)
    if rec.note:
        lines += _comment("note: " + rec.note)
    if rec.staleness and not rec.staleness.get("exact"):
        lines += _comment("WARNING: " + rec.staleness["warning"])
    if rec.best is None:
        return "\n".join([*lines, "# nothing to apply: keep the model eager"]) + "\n"
    b = rec.best
    f = data["figures"]
    if b.median_ci_ms:
        lines.append(f"# median {duration_ms(b.median_ms)}, {CONFIDENCE:.0%} CI "
                     f"{interval_ms(b.median_ci_ms[0], b.median_ci_ms[1])}"
                     + (" (confirmed, interleaved with eager fp32)" if b.confirmed else ""))
    if f["break_even_calls"] is not None and b.config.compiled:
        lines.append(f"# compiling pays off after {f['break_even_calls']:,} calls")
    config = b.config
    dtype = data["dtype"]
    lines += ["import torch", ""]
    if config.dtype == "tf32":
        lines.append('torch.set_float32_matmul_precision("high")  # tf32 matmuls')
    if dtype["cast_model"]:
        lines.append(f"model = model.to({dtype['torch_dtype']})  # and cast floating inputs "
                     f"to {dtype['torch_dtype']}")
    if config.compiled:
        args = ", ".join(f"{k}={v!r}" for k, v in config.compile_kwargs().items())
        lines.append(f"model = torch.compile(model, {args})")
    else:
        lines.append("# no torch.compile: eager is the recommendation here")
    lines.append("")
    lines.append("with torch.inference_mode():")
    if config.uses_cudagraphs:
        lines.append("    torch.compiler.cudagraph_mark_step_begin()  # before every call")
    cast = f".to({dtype['torch_dtype']})" if dtype["cast_model"] else ""
    lines.append(f"    out = model(x{cast})" + ("  # clone outputs you keep (CUDA graphs reuse "
                                               "them)" if config.uses_cudagraphs else ""))
    if b.buckets and b.buckets.get("boundaries"):
        lines += _comment(f"shape strategy {b.buckets['strategy']}: pad each request up to its "
                          f"bucket, boundaries {b.buckets['boundaries']}, and cut the outputs "
                          "back (advisor.apply(...).request(dims, ...) does it with the "
                          "workload's pad and cut); warm up every bucket before traffic")
    elif b.buckets:
        lines += _comment(f"shape strategy {b.buckets['strategy']}")
    if rec.artifact:
        lines.append("# warm start: advisor.apply(model, workload=..., db=...) loads the stored "
                     "cache artifact")
    return "\n".join(lines) + "\n"


def _comment(text: str) -> list[str]:
    """``text`` as wrapped comment lines, continuations indented."""
    return [("# " if i == 0 else "#   ") + part for i, part in enumerate(_wrap(text))]


def _wrap(text: str, width: int = 94) -> list[str]:
    words, out, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*out, line] if line else out


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        if e and "." not in mantissa:  # YAML 1.1 readers want 1.0e-06, not 1e-06
            text = f"{mantissa}.0e{exponent}"
        return text
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text)  # a JSON string is a valid YAML double-quoted scalar


def to_yaml(data: Any, indent: int = 0) -> str:
    """Plain data (dicts, lists, scalars) as block YAML, written by hand (no dependency)."""
    pad = " " * indent
    if isinstance(data, dict):
        if not data:
            return pad + "{}\n"
        out = []
        for key, value in data.items():
            name = _yaml_scalar(str(key))
            if isinstance(value, (dict, list)) and value:
                out.append(f"{pad}{name}:\n{to_yaml(value, indent + 2)}")
            else:
                out.append(f"{pad}{name}: {_inline(value)}\n")
        return "".join(out)
    if isinstance(data, list):
        if not data:
            return pad + "[]\n"
        out = []
        for item in data:
            if isinstance(item, (dict, list)) and item:
                body = to_yaml(item, indent + 2)
                out.append(f"{pad}- {body[indent + 2:]}")
            else:
                out.append(f"{pad}- {_inline(item)}\n")
        return "".join(out)
    return pad + _yaml_scalar(data) + "\n"


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _yaml_scalar(value)
