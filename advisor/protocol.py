"""What crosses between the advisor's processes and its store, named once (a first piece): the
fields of a fingerprint, which the probe child writes, the parent hashes and checks overrides
against, and the store keeps."""

from __future__ import annotations

DEVICE_FIELDS = (
    "device_kind", "device_name", "compute_capability", "device_memory_bytes", "sm_count",
    "cpu_model", "cpu_cores", "host_memory_bytes",
)
ENV_FIELDS = (
    "driver_version", "cuda_driver_version", "torch_version", "triton_version",
    "cuda_runtime_version", "cudnn_version", "python_version",
)
EXTRA_FIELDS = (
    "device_uuid", "power_limit_w", "sm_clock_max_mhz", "os", "advisor_version", "hostname",
)
FINGERPRINT_FIELDS = DEVICE_FIELDS + ENV_FIELDS + EXTRA_FIELDS
