"""Which device to use, decided without importing torch (NVML answers, or nothing does)."""

from __future__ import annotations

import os

from advisor.errors import ConfigError


def cuda_device_count() -> int:
    """GPUs this process may use, via NVML; 0 without a driver or with CUDA_VISIBLE_DEVICES=''."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return 0
    try:
        import pynvml

        pynvml.nvmlInit()
        count = int(pynvml.nvmlDeviceGetCount())
    except Exception:  # noqa: BLE001 - no NVML library or driver means no GPU here
        return 0
    if visible:
        return min(count, len([v for v in visible.split(",") if v.strip()]))
    return count


def resolve_device(requested: str | None) -> str:
    """`requested` checked, or cuda when a GPU is present, else cpu."""
    count = cuda_device_count()
    if requested is None:
        return "cuda" if count else "cpu"
    if requested == "cpu":
        return "cpu"
    if requested == "cuda" or requested.startswith("cuda:"):
        index = requested.partition(":")[2]
        if index and not index.isdigit():
            raise ConfigError(f"bad device {requested!r}: write cuda, cuda:N or cpu")
        if count == 0:
            raise ConfigError(
                f"device {requested} asked for, but no CUDA GPU is visible; use --device cpu"
            )
        if index and int(index) >= count:
            raise ConfigError(f"device {requested} does not exist: {count} GPU(s) visible")
        return requested
    raise ConfigError(f"bad device {requested!r}: write cuda, cuda:N or cpu")
