"""Device and software identity: what a measurement belongs to.

`collect(device)` returns a plain dict (keys in `DEVICE_FIELDS`, `ENV_FIELDS`, `EXTRA_FIELDS` and
three hashes). `device_hash` identifies the device model (two identical GPUs share it),
`env_hash` the software stack, `fingerprint_hash` both: results are compared and recommended per
fingerprint. The recipe is here alone (`add_hashes`, `combined_hash`): a CPU device's hash holds
what it can run (`CPU_ISA_FIELDS`: the ISA torch dispatches to, AMX and AVX-512 BF16/FP16), so
that two hosts whose model string a hypervisor masks alike but whose ISA differs are two
devices; a GPU device's does not (its CPU is named by ``cpu_model``, and the hashes of GPUs
measured before these fields stay as they were).

GPU facts come from NVML (package nvidia-ml-py), the NVML handle matched to the CUDA device by
UUID, never by index (NVML ignores CUDA_VISIBLE_DEVICES).

``ADVISOR_FINGERPRINT_OVERRIDES`` (a JSON object of fields) replaces fields before hashing: it
simulates another host or stack, for tests and demonstrations of fleet features.

`Telemetry` samples SM clock, power, temperature and throttle reasons while a trial measures.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import socket
import threading
from typing import Any, cast

from advisor import settings
from advisor.protocol import CPU_ISA_FIELDS, DEVICE_FIELDS, ENV_FIELDS, EXTRA_FIELDS
from advisor.records import Fingerprint, TelemetryFigures

# The /proc/cpuinfo flags that change which kernels run (x86: AVX2, AVX-512 and its BF16/FP16,
# AMX; Arm: SVE, BF16 and int8 matrix multiply), kept in a fingerprint's ``cpu_flags``.
CPU_FLAGS = frozenset({
    "avx2", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni", "amx_tile", "amx_bf16",
    "amx_int8", "amx_fp16", "sve", "sve2", "bf16", "i8mm",
})  # fmt: skip

# nvmlDeviceGetCurrentClocksEventReasons bits worth reporting (0x1, idle, is ignored).
THROTTLE_BITS = {
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "power_brake",
}


def stable_hash(fields: dict[str, Any]) -> str:
    blob = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _hashed(key: str, value: Any) -> Any:
    # Host memory moves by megabytes between identical machines (what the kernel reserves):
    # hashed in whole GiB, or a recommendation would go stale on the next identical host.
    if key == "host_memory_bytes" and isinstance(value, int):
        return round(value / 2**30)
    return value


def _device_fields(fp: dict[str, Any]) -> dict[str, Any]:
    """The fields device_hash hashes: `DEVICE_FIELDS`, the CPU's ISA fields only for a CPU
    device and only when known (a fingerprint from before them hashes as it did)."""
    fields = {k: _hashed(k, fp.get(k)) for k in DEVICE_FIELDS if k not in CPU_ISA_FIELDS}
    if fp.get("device_kind") == "cpu":
        fields.update({k: fp[k] for k in CPU_ISA_FIELDS if fp.get(k) is not None})
    return fields


def combined_hash(device_hash: str, env_hash: str) -> str:
    """The fingerprint hash of a device and a software stack."""
    return stable_hash({"device": device_hash, "env": env_hash})


def add_hashes(fp: dict[str, Any]) -> dict[str, Any]:
    """Fill in device_hash, env_hash and fingerprint_hash from the fields."""
    fp["device_hash"] = stable_hash(_device_fields(fp))
    fp["env_hash"] = stable_hash({k: fp.get(k) for k in ENV_FIELDS})
    fp["fingerprint_hash"] = combined_hash(fp["device_hash"], fp["env_hash"])
    return fp


def _cpu_model() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def cpu_flags(cpuinfo: str) -> str | None:
    """The `CPU_FLAGS` of the first processor of a /proc/cpuinfo text (its ``flags`` line on
    x86, ``Features`` on Arm), sorted and space-separated; None without such a line."""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            return " ".join(sorted(CPU_FLAGS.intersection(value.split())))
    return None


def _cpu_flags() -> str | None:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        return cpu_flags(f.read())
    return None


def _cpu_isa() -> str | None:
    """The ISA torch dispatches CPU kernels to (``AVX512``, ``AVX2``, ``DEFAULT``, ...; what
    $ATEN_CPU_CAPABILITY may lower)."""
    import torch

    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except (AttributeError, RuntimeError):  # a torch without it
        return None


def _software() -> dict[str, Any]:
    import torch

    from advisor.version import __version__

    try:
        import triton

        triton_version: str | None = triton.__version__
    except ImportError:
        triton_version = None
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "torch_version": torch.__version__,
        "triton_version": triton_version,
        "cuda_runtime_version": torch.version.cuda,
        "cudnn_version": str(cudnn) if cudnn else None,
        "python_version": platform.python_version(),
        "os": f"{platform.system()} {platform.release()}",
        "advisor_version": __version__,
        "hostname": socket.gethostname(),
    }


def _host() -> dict[str, Any]:
    import psutil

    return {
        "cpu_model": _cpu_model(),
        "cpu_cores": os.cpu_count(),
        "host_memory_bytes": psutil.virtual_memory().total,
        "cpu_isa": _cpu_isa(),
        "cpu_flags": _cpu_flags(),
    }


def nvml_handle(torch_index: int) -> Any:
    """The NVML handle of CUDA device `torch_index`, matched by UUID; None without NVML."""
    import torch

    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no NVML library or no driver: telemetry is optional
        return None
    uuid = str(torch.cuda.get_device_properties(torch_index).uuid)
    want = uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"
    try:
        return pynvml.nvmlDeviceGetHandleByUUID(want)
    except pynvml.NVMLError:
        return None


def _gpu(torch_index: int) -> dict[str, Any]:
    import torch

    props = torch.cuda.get_device_properties(torch_index)
    uuid = str(props.uuid)
    facts: dict[str, Any] = {
        "device_kind": "cuda",
        "device_name": props.name,
        "device_uuid": uuid if uuid.startswith("GPU-") else f"GPU-{uuid}",
        "compute_capability": f"{props.major}.{props.minor}",
        "device_memory_bytes": props.total_memory,
        "sm_count": props.multi_processor_count,
        "driver_version": None,
        "cuda_driver_version": None,
        "power_limit_w": None,
        "sm_clock_max_mhz": None,
    }
    handle = nvml_handle(torch_index)
    if handle is not None:
        import pynvml

        facts["driver_version"] = _text(pynvml.nvmlSystemGetDriverVersion())
        cuda = pynvml.nvmlSystemGetCudaDriverVersion()
        facts["cuda_driver_version"] = f"{cuda // 1000}.{cuda % 1000 // 10}"
        with contextlib.suppress(pynvml.NVMLError):
            facts["power_limit_w"] = pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000
        with contextlib.suppress(pynvml.NVMLError):
            facts["sm_clock_max_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(
                handle, pynvml.NVML_CLOCK_SM
            )
    return facts


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def cuda_index(device: str) -> int:
    import torch

    return torch.device(device).index or 0 if device != "cuda" else torch.cuda.current_device()


def collect(device: str) -> Fingerprint:
    """The fingerprint of `device` ("cpu", "cuda", "cuda:N") and the software stack."""
    fp: dict[str, Any] = dict.fromkeys(DEVICE_FIELDS + ENV_FIELDS + EXTRA_FIELDS)
    fp.update(_host())
    fp.update(_software())
    if device.startswith("cuda"):
        fp.update(_gpu(cuda_index(device)))
    else:
        fp.update({"device_kind": "cpu", "device_name": fp["cpu_model"]})
    fp.update(overrides())
    return cast(Fingerprint, add_hashes(fp))


def overrides() -> dict[str, Any]:
    """$ADVISOR_FINGERPRINT_OVERRIDES, checked (`advisor.settings.fingerprint_overrides`)."""
    return settings.fingerprint_overrides()


class Telemetry:
    """Samples GPU clocks, power, temperature and throttle reasons in a background thread.

    Use as a context manager around a measurement; `summary()` afterwards. On CPU, or without
    NVML, it samples nothing and `summary()` is empty.
    """

    def __init__(self, device: str, interval_s: float = 0.05) -> None:
        self.handle = nvml_handle(cuda_index(device)) if device.startswith("cuda") else None
        self.interval_s = interval_s
        self.samples: list[tuple[int, float, int, int]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        import pynvml

        h = self.handle
        with contextlib.suppress(pynvml.NVMLError):
            self.samples.append(
                (
                    pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                    pynvml.nvmlDeviceGetPowerUsage(h) / 1000,
                    pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                    pynvml.nvmlDeviceGetCurrentClocksEventReasons(h),
                )
            )

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> Telemetry:
        if self.handle is not None:
            self._sample()
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._sample()

    def summary(self) -> TelemetryFigures:
        if not self.samples:
            return {}
        clocks = sorted(s[0] for s in self.samples)
        mask = 0
        for s in self.samples:
            mask |= s[3]
        return {
            "sm_clock_mhz": clocks[len(clocks) // 2],
            "sm_clock_min_mhz": clocks[0],
            "power_draw_w": max(s[1] for s in self.samples),
            "temperature_c": max(s[2] for s in self.samples),
            "throttle_reasons": [name for bit, name in THROTTLE_BITS.items() if mask & bit],
            "n_samples": len(self.samples),
        }
