"""What a CPU runs is part of its device: the ISA torch dispatches to and AMX, AVX-512 BF16/FP16
tell apart two hosts whose model string a hypervisor masks alike."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from advisor.devices import DeviceNames, cpu_isa_label, device_id, device_model
from advisor.fingerprint import add_hashes, combined_hash, cpu_flags

SAPPHIRE = "amx_bf16 amx_int8 amx_tile avx2 avx512_bf16 avx512_fp16 avx512f"
MASKED_CPU = {
    "device_kind": "cpu", "device_name": "Intel Xeon Processor (Icelake)",
    "cpu_model": "Intel Xeon Processor (Icelake)", "cpu_cores": 8,
    "host_memory_bytes": 32 * 2**30, "cpu_isa": "AVX512", "cpu_flags": SAPPHIRE,
    "torch_version": "2.13.0+cpu", "python_version": "3.11.7", "hostname": "vm-1",
}  # fmt: skip
H200_HOST = {
    "device_kind": "cuda", "device_name": "NVIDIA H200", "compute_capability": "9.0",
    "device_memory_bytes": 150_754_820_096, "sm_count": 132, "cpu_model": "x86_64",
    "cpu_cores": 16, "host_memory_bytes": 135_128_870_912, "driver_version": "580.159.04",
    "torch_version": "2.11.0+cu130", "triton_version": "3.6.0",
}  # fmt: skip


def _hashed(**changes: Any) -> dict[str, Any]:
    return add_hashes({**MASKED_CPU, **changes})


def test_two_cpus_of_one_model_string_but_another_isa_are_two_devices() -> None:
    avx512, avx2 = _hashed(), _hashed(cpu_isa="AVX2")
    assert avx512["device_hash"] != avx2["device_hash"]
    assert avx512["fingerprint_hash"] != avx2["fingerprint_hash"]
    assert avx512["env_hash"] == avx2["env_hash"]
    no_amx = _hashed(cpu_flags="avx2 avx512_bf16 avx512f")  # the same ISA, without AMX
    assert no_amx["device_hash"] != avx512["device_hash"]
    assert _hashed(hostname="vm-2")["device_hash"] == avx512["device_hash"]  # hosts alike


def test_a_cpu_probed_before_these_fields_hashes_as_it_did() -> None:
    before = {k: v for k, v in MASKED_CPU.items() if k not in ("cpu_isa", "cpu_flags")}
    unknown = _hashed(cpu_isa=None, cpu_flags=None)
    assert add_hashes(dict(before))["device_hash"] == unknown["device_hash"]
    assert add_hashes(dict(before))["device_hash"] != _hashed()["device_hash"]


def test_a_gpu_device_is_its_gpu_whatever_its_hosts_cpu_runs() -> None:
    # the GPU decides; the hashes of GPUs stored before these fields stay as they were
    bare = add_hashes(dict(H200_HOST))
    with_isa = add_hashes({**H200_HOST, "cpu_isa": "AVX512", "cpu_flags": SAPPHIRE})
    other_isa = add_hashes({**H200_HOST, "cpu_isa": "AVX2", "cpu_flags": "avx2"})
    assert bare["device_hash"] == with_isa["device_hash"] == other_isa["device_hash"]
    assert bare["device_hash"] == "c30e6641ed372f97"  # as before cpu_isa was collected


def test_the_fingerprint_hash_recipe_has_one_owner() -> None:
    fp = _hashed()
    assert combined_hash(fp["device_hash"], fp["env_hash"]) == fp["fingerprint_hash"]
    assert (
        DeviceNames().fingerprint_hash(fp["device_hash"], fp["env_hash"]) == fp["fingerprint_hash"]
    )


def test_cpu_flags_are_read_from_cpuinfo() -> None:
    x86 = ("processor\t: 0\nmodel name\t: Intel Xeon Processor\nflags\t\t: fpu sse2 avx2 avx512f "
           "avx512_bf16 amx_tile amx_bf16 avx512_fp16 avx512vl amx_int8\n\nprocessor\t: 1\n"
           "flags\t\t: fpu\n")  # fmt: skip
    assert cpu_flags(x86) == SAPPHIRE  # the first processor's, sorted, only those that matter
    assert cpu_flags("processor\t: 0\nFeatures\t: fp asimd sve i8mm bf16\n") == "bf16 i8mm sve"
    assert cpu_flags("processor\t: 0\nflags\t\t: fpu sse2\n") == ""
    assert cpu_flags("no flags line here") is None


def test_a_cpu_is_named_with_what_it_runs() -> None:
    fp = _hashed()
    assert cpu_isa_label(fp) == "AVX512+AMX"
    assert cpu_isa_label({"cpu_isa": "AVX2", "cpu_flags": "avx2"}) == "AVX2"
    assert cpu_isa_label({"cpu_isa": "DEFAULT"}) is None and cpu_isa_label({}) is None
    assert device_id(fp) == f"Xeon (Icelake) AVX512+AMX @vm-1 · {fp['fingerprint_hash'][:8]}"
    assert device_model(fp) == "Intel Xeon Processor (Icelake) (AVX512+AMX)"
    gpu = {**add_hashes(dict(H200_HOST)), "cpu_isa": "AVX512", "hostname": "gpu-a"}
    assert device_id(gpu).startswith("H200 @gpu-a · ")  # a GPU is named by the GPU
    assert device_model(gpu) == "NVIDIA H200"


def test_doctor_names_the_cpu_with_what_it_runs() -> None:
    from advisor.cli.doctor import cpu_line

    assert cpu_line(_hashed()) == (
        "Intel Xeon Processor (Icelake), torch dispatches to AVX512; AMX, AVX-512 BF16, AVX-512 "
        f"FP16 ({SAPPHIRE})"
    )
    assert cpu_line({"cpu_model": "EPYC", "cpu_isa": "AVX2", "cpu_flags": "avx2"}) == (
        "EPYC, torch dispatches to AVX2; no AMX, AVX-512 BF16 or FP16 (avx2)"
    )
    assert cpu_line({"cpu_model": "M2"}) == "M2, ISA unknown (torch does not say)"


@pytest.mark.slow
def test_the_probe_reports_the_isa_torch_dispatches_to() -> None:
    from advisor.search.launcher import Launcher

    fp = Launcher(timeout_s=300).probe("cpu")
    torch_says = subprocess.run(
        [sys.executable, "-c",
         "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert fp["cpu_isa"] == torch_says
    with open("/proc/cpuinfo") as f:
        assert fp["cpu_flags"] == cpu_flags(f.read())
    if "avx512f" in (fp["cpu_flags"] or "").split() and "ATEN_CPU_CAPABILITY" not in os.environ:
        assert fp["cpu_isa"] == "AVX512"  # a host with AVX-512: torch says AVX512
    assert fp["device_hash"] == add_hashes(dict(fp))["device_hash"]
    other = "AVX2" if fp["cpu_isa"] != "AVX2" else "AVX512"  # an AVX2-only host says AVX2 itself
    assert fp["device_hash"] != add_hashes({**fp, "cpu_isa": other})["device_hash"]
