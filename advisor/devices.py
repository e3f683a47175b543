"""Which device to use, decided without importing torch (NVML answers, or nothing does), and
what every surface calls a measured device: `device_id` (``H200 @gpu-a · 7f023bc2``), with
`DeviceNames` for a store's fingerprints and the selector that reads an id back."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from advisor.errors import ConfigError

if TYPE_CHECKING:
    from advisor.rows import SweepRow


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


def check_device_name(requested: str | None) -> None:
    """``requested`` is written as a device is (cpu, cuda or cuda:N), whether or not this host
    has it; ConfigError otherwise."""
    if requested is None or requested in ("cpu", "cuda"):
        return
    index = requested.partition(":")[2] if requested.startswith("cuda:") else None
    if not (index and index.isascii() and index.isdigit()):
        raise ConfigError(f"bad device {requested!r}: write cuda, cuda:N or cpu")


def resolve_device(requested: str | None) -> str:
    """`requested` checked, or cuda when a GPU is present, else cpu."""
    count = cuda_device_count()
    if requested is None:
        return "cuda" if count else "cpu"
    check_device_name(requested)
    if requested == "cpu":
        return "cpu"
    if requested == "cuda" or requested.startswith("cuda:"):
        index = requested.partition(":")[2]
        if count == 0:
            raise ConfigError(
                f"device {requested} asked for, but no CUDA GPU is visible; use --device cpu"
            )
        if index and int(index) >= count:
            raise ConfigError(f"device {requested} does not exist: {count} GPU(s) visible")
        return requested
    raise ConfigError(f"bad device {requested!r}: write cuda, cuda:N or cpu")


# -- names: one short id per fingerprint, read the same on every surface -------------------------

ID_HASH_CHARS = 8
_MIN_PREFIX = 4  # a hash prefix shorter than this is taken for a host name, never a prefix
_MAX_MODEL = 16
_MAX_HOST = 20
_NOISE_WORDS = {"nvidia", "amd", "intel", "apple", "geforce", "tesla", "cpu", "processor",
                "graphics"}


def short_model(name: str | None) -> str:
    """A device model in a word or two: ``NVIDIA H200`` -> ``H200``, ``NVIDIA A100-SXM4-80GB``
    -> ``A100``, ``NVIDIA GeForce RTX 4090`` -> ``RTX 4090``, ``Intel(R) Xeon(R) Platinum
    8480+`` -> ``Xeon 8480+``, ``AMD EPYC 9654 96-Core Processor`` -> ``EPYC 9654``."""
    text = re.sub(r"\((?:R|TM|C)\)", "", str(name or ""), flags=re.IGNORECASE).split("@")[0]
    words = [w for w in text.split() if w.lower() not in _NOISE_WORDS]
    numbered = next((i for i, w in enumerate(words) if any(c.isdigit() for c in w)), None)
    if numbered is not None:
        head, _, _ = words[numbered].partition("-")
        model = head if any(c.isdigit() for c in head) else words[numbered]
        words = [*words[:min(numbered, 1)], model]  # "RTX 4090", "Xeon 8480+", "H200"
    short = " ".join(words) or "unknown"
    return short if len(short) <= _MAX_MODEL else short[: _MAX_MODEL - 1] + "~"


def short_host(host: str) -> str:
    """A host name without its domain (an IP address stays whole), at most 20 characters."""
    host = str(host).strip()
    if not re.fullmatch(r"[0-9.:]+", host):
        host = host.split(".")[0] or host
    return host if len(host) <= _MAX_HOST else host[: _MAX_HOST - 1] + "~"


def cpu_isa_label(fp: Mapping[str, Any]) -> str | None:
    """What a CPU runs, in a word: the ISA torch dispatches to, ``+AMX`` where the CPU has AMX
    tiles (``AVX512+AMX``, ``AVX2``); None when unknown or torch's ``DEFAULT``."""
    isa = fp.get("cpu_isa")
    if not isa or isa == "DEFAULT":
        return None
    return f"{isa}+AMX" if "amx_tile" in str(fp.get("cpu_flags") or "").split() else str(isa)


def device_model(fp: Mapping[str, Any]) -> str:
    """A fingerprint's device model in full, a CPU's with what it runs (`cpu_isa_label`):
    ``NVIDIA H200``, ``Intel(R) Xeon(R) Processor (AVX512+AMX)``."""
    name = str(fp.get("device_name") or fp.get("cpu_model") or "unknown device")
    label = cpu_isa_label(fp) if fp.get("device_kind") == "cpu" else None
    return f"{name} ({label})" if label else name


def device_id(fp: Mapping[str, Any], hosts: Iterable[str | None] | None = None) -> str:
    """The one short name of a fingerprint (a device and its software stack) on every surface:
    ``H200 @gpu-a · 7f023bc2`` (the model in a word, the host that measured it, the
    fingerprint hash's first 8 characters); a CPU's model with what it runs (`cpu_isa_label`:
    ``Xeon 8480+ AVX512+AMX @cpu-a · 0c1d2e3f``), as a hypervisor may give two CPUs one name.
    Identical hosts share a fingerprint: ``H200 @node-1+3 · 7f023bc2`` names the first of
    four. ``hosts``: the hosts that measured it (default: the one ``fp`` names); a fingerprint
    without one is ``H200 · 7f023bc2``."""
    model = short_model(fp.get("device_name") or fp.get("cpu_model"))
    label = cpu_isa_label(fp) if fp.get("device_kind") == "cpu" else None
    model += f" {label}" if label else ""
    found = [fp.get("hostname")] if hosts is None else hosts
    names = sorted({short_host(h) for h in found if h})
    at = f" @{names[0]}" + (f"+{len(names) - 1}" if len(names) > 1 else "") if names else ""
    return f"{model}{at} · {str(fp.get('fingerprint_hash') or '?')[:ID_HASH_CHARS]}"


class DeviceNames:
    """The short ids (`device_id`) of a store's fingerprints, and the way back: `resolve` reads
    an id, a hash prefix or a host name as the fingerprint hash it names.

    Built from the store's sweeps (``ResultStore.sweeps()``): a fingerprint's hosts are those
    its sweeps ran on, so every surface that reads the same store names it alike (a worker
    that joined a sweep from an identical host adds none)."""

    def __init__(self, sweeps: Iterable[SweepRow] = ()) -> None:
        self._fps: dict[str, dict[str, Any]] = {}
        self._hosts: dict[str, set[str]] = {}
        self._by_parts: dict[tuple[str, str], str] = {}
        for s in sweeps:
            fp: dict[str, Any] = dict(s.get("fingerprint") or {})  # a copy, names learnt into
            fp_hash = s.get("fingerprint_hash") or fp.get("fingerprint_hash")
            if not fp_hash:
                continue
            fp.update(fingerprint_hash=fp_hash,
                      device_name=fp.get("device_name") or s.get("device_name"))
            self._fps.setdefault(fp_hash, fp)
            host = s.get("host") or fp.get("hostname")
            self._hosts.setdefault(fp_hash, set()).update([host] if host else [])
            parts = (s.get("device_hash") or fp.get("device_hash"),
                     s.get("env_hash") or fp.get("env_hash"))
            if all(parts):
                self._by_parts[(str(parts[0]), str(parts[1]))] = fp_hash

    @classmethod
    def of_store(cls, store: Any) -> DeviceNames:
        """The names of every fingerprint ``store`` (an `advisor.db.ResultStore`) swept."""
        return cls(store.sweeps())

    def learn(self, fp: Mapping[str, Any] | None) -> None:
        """Know the fields of ``fp`` (a record's fingerprint, or a row of its fields with its
        hash) where the sweeps did not say them. Its host is not learnt: hosts come from the
        sweeps alone, so that no surface names a fingerprint by the records it happened to read
        (a fingerprint no sweep ran on reads ``H200 · 7f023bc2``)."""
        fp_hash = (fp or {}).get("fingerprint_hash")
        if not fp or not fp_hash:
            return
        known = self._fps.setdefault(fp_hash, {})
        for key, value in fp.items():
            if known.get(key) is None and value is not None and key != "hostname":
                known[key] = value

    def fingerprint_hash(self, device_hash: str, env_hash: str) -> str:
        """The fingerprint hash of a device and stack (as `advisor.fingerprint` derives it,
        unless a sweep stored another)."""
        from advisor.fingerprint import combined_hash

        return self._by_parts.get((device_hash, env_hash)) or combined_hash(device_hash, env_hash)

    def name(self, fp_hash: str | None, fp: Mapping[str, Any] | None = None) -> str:
        """The short id of the fingerprint ``fp_hash`` (``fp``: its fields, when this store's
        sweeps may not know them)."""
        if not fp_hash:  # a row from before fingerprints were hashed: its own fields
            return device_id({**(fp or {}), "fingerprint_hash": None})
        if fp is not None:
            self.learn({**fp, "fingerprint_hash": fp_hash})
        known = self._fps.get(fp_hash, {"fingerprint_hash": fp_hash})
        return device_id(known, self._hosts.get(fp_hash, set()))

    def hosts(self, fp_hash: str) -> list[str]:
        """The hosts that measured ``fp_hash``, sorted."""
        return sorted(self._hosts.get(fp_hash, set()))

    def matches(self, selector: str, fp_hash: str) -> bool:
        """Whether ``selector`` names ``fp_hash``: its short id, the hash or a prefix of at
        least 4 characters, or one of its hosts (with or without its domain, ``@`` or not)."""
        text = selector.strip().lower()
        if text in (self.name(fp_hash).lower(), fp_hash.lower()):
            return True
        if len(text) >= _MIN_PREFIX and re.fullmatch(r"[0-9a-f]+", text) \
                and fp_hash.lower().startswith(text):
            return True
        host = text.removeprefix("@")
        return any(host == h.lower() or short_host(host) == short_host(h).lower()
                   for h in self.hosts(fp_hash))

    def resolve(self, selector: str, among: Iterable[str], what: str = "--fingerprint",
                scope: str = "") -> str:
        """The one fingerprint hash of ``among`` that ``selector`` names (`matches`; an exact
        id or hash wins over a prefix or a host). Raises ConfigError, saying which devices
        there are, when it names none or several."""
        hashes = sorted(dict.fromkeys(among))
        exact = [h for h in hashes
                 if selector.strip().lower() in (h.lower(), self.name(h).lower())]
        found = exact or [h for h in hashes if self.matches(selector, h)]
        if len(found) == 1:
            return found[0]
        of = f" of {scope}" if scope else ""
        if found:
            raise ConfigError(f"{what} {selector!r} names {len(found)} devices{of}: "
                              f"{self._listing(found)}; give more of the hash")
        raise ConfigError(f"no trials{of} on a device that {what} {selector!r} names; give the "
                          f"short id, a hash prefix or the host of one of: "
                          f"{self._listing(hashes)}")

    def _listing(self, hashes: list[str], most: int = 6) -> str:
        shown = ", ".join(sorted(self.name(h) for h in hashes)[:most])
        return shown + (f" and {len(hashes) - most} more" if len(hashes) > most else "")
