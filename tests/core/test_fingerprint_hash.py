"""Fingerprint hashes: what makes two machines the same for a recommendation."""

from advisor.fingerprint import add_hashes

H200_HOST = {
    "device_kind": "cuda", "device_name": "NVIDIA H200", "compute_capability": "9.0",
    "device_memory_bytes": 150_754_820_096, "sm_count": 132, "cpu_model": "x86_64",
    "cpu_cores": 16, "host_memory_bytes": 135_128_870_912, "driver_version": "580.159.04",
    "torch_version": "2.11.0+cu130", "triton_version": "3.6.0",
}


def test_host_memory_noise_between_identical_hosts_keeps_the_fingerprint():
    # Two H200 machines of one kind, seen on the device: 19 MiB apart (kernel reservations).
    other = {**H200_HOST, "host_memory_bytes": 135_148_564_480}
    assert add_hashes(dict(H200_HOST))["fingerprint_hash"] == add_hashes(other)[
        "fingerprint_hash"]


def test_a_different_host_memory_size_or_driver_changes_it():
    base = add_hashes(dict(H200_HOST))
    bigger = add_hashes({**H200_HOST, "host_memory_bytes": 135_128_870_912 + 8 * 2**30})
    driver = add_hashes({**H200_HOST, "driver_version": "590.1"})
    assert bigger["device_hash"] != base["device_hash"]
    assert driver["env_hash"] != base["env_hash"]
    assert driver["device_hash"] == base["device_hash"]
