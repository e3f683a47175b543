"""The one place that turns a `CompileConfig` into what runs: the component's dtype, the float32
matmul precision, Inductor's settings, the inputs' cast and the `torch.compile` call.

Every path that runs a config goes through here: a trial and its replay, the warm start, the
leaders' paired confirmation, the artifact child and `advisor.apply` in a serving process. What is
measured is then what ships. Child side: imports torch (lazily, so that the parent can name these
functions without importing it).
"""

from __future__ import annotations

from typing import Any

from advisor.child.tensors import cast_floating
from advisor.config import TORCH_DTYPE_NAMES, CompileConfig


def torch_dtype(name: str) -> Any:
    """The torch dtype a component is built in for a config's dtype name."""
    import torch

    return getattr(torch, TORCH_DTYPE_NAMES[name])


def input_dtype(config: CompileConfig) -> Any:
    """The dtype floating inputs are cast to (None: fp32 and tf32 take inputs as given)."""
    return torch_dtype(config.dtype) if config.dtype in ("bf16", "fp16") else None


def set_precision(config: CompileConfig) -> None:
    """float32 precision for the config: TF32 matmuls and convolutions for tf32, else none
    (the fp32 eager oracle's; `set_tf32`)."""
    set_tf32(config.dtype == "tf32")


def set_tf32(on: bool) -> tuple[str, bool]:
    """TF32 for float32 matmuls and cuDNN convolutions, on or off; returns what was set before
    (`restore_tf32` takes it back). Off is not torch's default: its cuDNN convolutions run TF32
    unless told otherwise, so an fp32 oracle of a convnet would not be fp32."""
    import torch

    before = (torch.get_float32_matmul_precision(), bool(torch.backends.cudnn.allow_tf32))
    torch.set_float32_matmul_precision("high" if on else "highest")
    torch.backends.cudnn.allow_tf32 = on
    return before


def restore_tf32(before: tuple[str, bool]) -> None:
    import torch

    torch.set_float32_matmul_precision(before[0])
    torch.backends.cudnn.allow_tf32 = before[1]


def inductor_settings(device: str, config: CompileConfig) -> None:
    """Inductor settings of every compile of a config: a trial, its warm start and a confirmation
    compiling from its cache must share them, or they miss the cache."""
    if config.compiled and not device.startswith("cuda"):
        import torch._inductor.config as inductor_config

        inductor_config.cpp.enable_kernel_profile = True  # names of generated C++ kernels


def cast_model(model: Any, config: CompileConfig) -> Any:
    """The model in the config's dtype (an nn.Module is cast in place); precision set."""
    import torch

    set_precision(config)
    dtype = input_dtype(config)
    if dtype is not None and isinstance(model, torch.nn.Module):
        model = model.to(dtype)
    return model


def cast_inputs(args: Any, config: CompileConfig) -> Any:
    """A call's inputs as the config runs them."""
    return cast_floating(args, input_dtype(config))


def compiled(model: Any, config: CompileConfig) -> Any:
    """The callable a config runs: ``torch.compile(model, **config.compile_kwargs())``, or the
    model itself for eager."""
    if not config.compiled:
        return model
    import torch

    return torch.compile(model, **config.compile_kwargs())


def prepare(model: Any, config: CompileConfig, device: str) -> Any:
    """A built model as the config runs it on ``device``: cast, precision and Inductor settings
    applied, compiled (not yet called: the first call compiles)."""
    inductor_settings(device, config)
    return compiled(cast_model(model, config), config)
