"""Workloads: the contract between a user's model and the advisor.

A workload is a plain Python file that defines a module-level ``workload``, an instance of
`Workload`. Wrapping a Hugging Face model takes a dozen lines::

    # workloads/my_reranker.py
    import torch
    from transformers import AutoModelForSequenceClassification
    from advisor import Quality, Workload

    def build(device: str, dtype: torch.dtype) -> torch.nn.Module:
        model = AutoModelForSequenceClassification.from_pretrained("my/cross-encoder")
        return model.to(device=device, dtype=dtype).eval()

    def inputs(shape: dict[str, int], device: str) -> dict[str, torch.Tensor]:
        ids = torch.randint(1000, 2000, (shape["batch"], shape["seq"]), device=device)
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}

    workload = Workload(
        name="my-reranker",
        build=build,
        inputs=inputs,
        traffic=[({"batch": 50, "seq": 128}, 0.7), ({"batch": 100, "seq": 256}, 0.3)],
        dtypes=("fp32", "bf16"),
        quality=Quality("top10_overlap", my_top10_overlap, threshold=0.9),
    )

The parts, and what the advisor does with them:

- ``name``: how results are filed and looked up (``advisor recommend my-reranker``).
- ``build(device, dtype)``: returns the component, ready to call, on ``device`` in ``dtype``
  (a ``torch.dtype``; tf32 configs receive ``torch.float32``). An ``nn.Module`` or any callable.
  The advisor seeds torch's RNG (``torch.manual_seed(0)``) before each call, so seeded random
  weights are the same in every build.
- ``inputs(shape, device)``: the call's arguments for one shape (a dict of named dims such as
  ``{"batch": 50, "seq": 128}``): a tuple of positional arguments or a dict of keyword arguments.
  Return fp32 for floating-point tensors; the advisor casts them to the config's dtype, so every
  dtype sees the same values. Also seeded before each call.
- ``traffic``: representative shapes with weights (relative frequencies; normalised here).
- ``default_shape``: the shape a single trial measures when none is given (default: the
  heaviest traffic shape).
- ``dtypes``: the dtypes this component may run in (subset of fp32, tf32, bf16, fp16).
- ``tolerances``: per dtype, ``(atol, rtol)`` for the element-wise check of every output tensor
  against the fp32 eager reference; missing dtypes take `DEFAULT_TOLERANCES`.
- ``quality``: optional task-level check, a `Quality`: ``fn(reference, candidate) -> float``
  receives the fp32 eager outputs and the candidate's outputs (both as returned by the component,
  moved to the CPU and cast to fp32: a tensor, tuple, named tuple, list or dict keeps its type, and
  a dict subclass such as a Hugging Face ``ModelOutput`` stays one, so ``reference.logits``
  works) and must return a number. ``fn`` judges one request (one shape's call); the requests'
  values combine as ``combine`` says, and the check passes when the combined number is
  ``>= threshold`` (or ``<=`` when ``higher_is_better`` is False):

  - ``combine="mean"`` (default): the traffic-weighted mean of the requests must pass; the
    worst request is recorded and shown beside it. Adding requests of the same traffic cannot
    by itself fail a config.
  - ``combine="worst"``: a floor; every request must pass. Use it only where one bad request
    is a failure of the task (more requests can only lower the worst).
  - ``combine="quantile", quantile=q``: the q-quantile request counted from the worst side must
    pass: the check passes while the requests that fall short hold less than a share q of the
    traffic (``q=0.1``: fewer than one request in ten).

  ``advisory``: a reason string for a check that measures something other than the task, set
  when the component runs on stand-in weights (seeded random weights because the trained ones
  are not installed: its scores are near-ties, so the check measures ties, not the task). The
  check is still computed, recorded and shown, with the reason beside it, but it rejects
  nothing: a config's ``passed`` then depends on correctness alone. Set it only on the stand-in
  path, e.g. ``advisory=None if trained else "seeded random weights (...)"``.
- ``inference``: True (default) runs every call under ``torch.inference_mode()``; set False for
  training steps that need autograd.
- ``info()``: optional; returns a dict of facts stored with every result (e.g. which weights).
- ``pad(inputs, from_dims, to_dims)`` and ``cut(outputs, from_dims)``: optional, together; what
  bucketed shape strategies (``buckets:pow2``, ``buckets:fitted-K``, ...; docs/shapes.md) need.
  ``pad`` receives the call's arguments for a request of shape ``from_dims`` (as ``inputs()``
  returned them, already cast to the config's dtype and on the device) and returns arguments of
  the bucket's shape ``to_dims`` (each dim ``>=``): the request in the leading positions, the rest
  neutral, so that the component computes the request's own results there. ``cut`` receives the
  component's outputs for the padded call and returns them as the unpadded request would have:
  the leading ``from_dims`` part. The advisor checks that cut outputs match the fp32 eager
  outputs of the unpadded request. A reranker pads token ids with the pad token and the
  attention mask with zeros (padded tokens are masked out, padded candidates are extra rows)
  and slices the scores back to the request's candidates::

      def pad(inputs, from_dims, to_dims):
          b, s = to_dims["batch"] - from_dims["batch"], to_dims["seq"] - from_dims["seq"]
          return {name: torch.nn.functional.pad(t, (0, s, 0, b), value=0)
                  for name, t in inputs.items()}  # ids, attention_mask, token_type_ids

      def cut(outputs, from_dims):
          return outputs[: from_dims["batch"]]  # one score per real candidate

`load_workload(path)` imports the file and checks the contract; every violation is a
`WorkloadError` whose message names the file and the problem.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import stat
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.config import DTYPES, MAX_DIM
from advisor.errors import Terminated, WorkloadError

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "fp32": (1e-4, 1e-4),
    "tf32": (1e-2, 1e-2),
    "bf16": (5e-2, 5e-2),
    "fp16": (1e-2, 1e-2),
}


COMBINES = ("mean", "worst", "quantile")


@dataclass(frozen=True)
class Quality:
    """A task-level quality check: ``fn(reference, candidate) -> float`` for each request, the
    requests' values combined by ``combine`` (`combine_quality`), against a threshold. With
    ``advisory`` set the check is computed and reported but rejects nothing (see the module
    docstring)."""

    name: str
    fn: Callable[[Any, Any], float]
    threshold: float
    higher_is_better: bool = True
    combine: str = "mean"
    quantile: float | None = None
    advisory: str | None = None

    def __post_init__(self) -> None:
        if self.combine not in COMBINES:
            raise WorkloadError(
                f"Quality {self.name!r}: combine={self.combine!r} is not one of "
                f"{', '.join(COMBINES)} (mean: the requests' mean must pass; worst: every "
                "request must; quantile: give quantile=q, the q-quantile request must)")
        q = self.quantile
        if self.combine == "quantile" and not (
            isinstance(q, (int, float)) and not isinstance(q, bool) and 0 < q < 1
        ):
            raise WorkloadError(
                f"Quality {self.name!r}: combine='quantile' needs quantile=q with 0 < q < 1 "
                f"(0.1: the 10th-percentile request must pass), not {q!r}")
        if self.combine != "quantile" and q is not None:
            raise WorkloadError(
                f"Quality {self.name!r}: quantile={q!r} applies only with combine='quantile'")
        if self.advisory is not None and not (
            isinstance(self.advisory, str) and self.advisory.strip()
        ):
            raise WorkloadError(
                f"Quality {self.name!r}: advisory must be a non-empty string (why the check "
                "only advises) or None")

    @property
    def rule(self) -> str:
        """How the requests' values combine, as records and tables show it: ``mean``,
        ``worst`` or ``p10`` (the 10th-percentile request, counted from the worst)."""
        if self.combine != "quantile":
            return self.combine
        return f"p{float(self.quantile or 0) * 100:g}"

    def passes(self, value: float) -> bool:
        return value >= self.threshold if self.higher_is_better else value <= self.threshold

    def combined(
        self, values: Sequence[float], weights: Sequence[float] | None = None
    ) -> tuple[float, float]:
        """(the value judged, the worst request's value) of per-request ``values``."""
        return combine_quality(values, combine=self.combine, quantile=self.quantile,
                               higher_is_better=self.higher_is_better, weights=weights)


def combine_quality(
    values: Sequence[float],
    *,
    combine: str = "mean",
    quantile: float | None = None,
    higher_is_better: bool = True,
    weights: Sequence[float] | None = None,
) -> tuple[float, float]:
    """Per-request quality values -> (the value judged, the worst request's value).

    ``weights``: each value's share of the traffic (equal when None, or when they sum to 0).
    ``mean``: the weighted mean; ``worst``: the worst value; ``quantile``: the weighted
    ``quantile``-quantile counted from the worst side, the first value, worst first, at which
    the values so far hold at least that share of the weight (an observed value, never
    interpolated). A NaN value is the worst there is: both figures are NaN. Adding requests
    drawn from the same traffic moves ``mean`` and ``quantile`` towards the traffic's own
    figure; only ``worst`` can fall with every request added."""
    if not values:
        raise ValueError("combine_quality needs at least one value")
    vals = [float(v) for v in values]
    if any(math.isnan(v) for v in vals):
        return math.nan, math.nan
    ws = [1.0] * len(vals) if weights is None else [float(w) for w in weights]
    if len(ws) != len(vals) or any(w < 0 or not math.isfinite(w) for w in ws):
        raise ValueError("combine_quality: one finite weight >= 0 per value")
    total = sum(ws)
    if total <= 0:
        ws, total = [1.0] * len(vals), float(len(vals))
    worst = min(vals) if higher_is_better else max(vals)
    if combine == "mean":
        return sum(v * w for v, w in zip(vals, ws, strict=True)) / total, worst
    if combine == "worst":
        return worst, worst
    if combine != "quantile" or quantile is None or not 0 < quantile < 1:
        raise ValueError(f"combine_quality: combine={combine!r}, quantile={quantile!r}")
    order = sorted(zip(vals, ws, strict=True), key=lambda vw: vw[0], reverse=not higher_is_better)
    held = 0.0
    for value, w in order:
        held += w / total
        if held >= quantile - 1e-12:
            return value, worst
    return order[-1][0], worst


@dataclass(frozen=True)
class Workload:
    """A component to tune; see the module docstring for the contract."""

    name: str
    build: Callable[[str, Any], Any]
    inputs: Callable[[dict[str, int], str], Any]
    traffic: Sequence[tuple[dict[str, int], float]]
    dtypes: Sequence[str] = ("fp32", "tf32", "bf16", "fp16")
    tolerances: dict[str, tuple[float, float]] = field(default_factory=dict)
    quality: Quality | None = None
    default_shape: dict[str, int] | None = None
    inference: bool = True
    info: Callable[[], dict[str, Any]] | None = None
    pad: Callable[[Any, dict[str, int], dict[str, int]], Any] | None = None
    cut: Callable[[Any, dict[str, int]], Any] | None = None

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise WorkloadError(problems[0])
        total = sum(weight for _, weight in self.traffic)
        object.__setattr__(
            self, "traffic", tuple((dict(s), w / total) for s, w in self.traffic)
        )
        object.__setattr__(self, "dtypes", tuple(self.dtypes))

    @property
    def shape(self) -> dict[str, int]:
        """The shape a single trial measures by default."""
        if self.default_shape is not None:
            return dict(self.default_shape)
        return dict(max(self.traffic, key=lambda item: item[1])[0])

    def tolerance(self, dtype: str) -> tuple[float, float]:
        return self.tolerances.get(dtype, DEFAULT_TOLERANCES[dtype])


def _is_shape(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(k, str) and type(v) is int and 0 < v <= MAX_DIM
                for k, v in value.items())
    )


def _is_weight(value: Any) -> bool:
    """A traffic weight: a finite number above 0 (NaN and infinity would poison the shares)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0)


def _problems(w: Workload) -> list[str]:
    problems: list[str] = []
    if not isinstance(w.name, str) or not w.name.strip():
        problems.append("name must be a non-empty string")
    for part in ("build", "inputs"):
        if not callable(getattr(w, part)):
            problems.append(f"{part} must be a function")
    if not isinstance(w.traffic, (list, tuple)) or not w.traffic:
        problems.append("traffic must be a non-empty list of (shape dict, weight) pairs")
    else:
        for item in w.traffic:
            ok = isinstance(item, (list, tuple)) and len(item) == 2 and _is_shape(item[0])
            if not ok or not _is_weight(item[1]):
                problems.append(
                    f"traffic entry {item!r} is not a (shape dict of positive ints, "
                    "finite weight > 0) pair"
                )
                break
    bad = [d for d in w.dtypes if d not in DTYPES] if isinstance(w.dtypes, (list, tuple)) else [1]
    if bad or not w.dtypes:
        problems.append(f"dtypes must be a non-empty list drawn from {', '.join(DTYPES)}")
    if not isinstance(w.tolerances, dict):
        problems.append("tolerances must be a dict of dtype -> (atol, rtol)")
    for dtype, tol in dict(w.tolerances if isinstance(w.tolerances, dict) else {}).items():
        if dtype not in DTYPES or not (
            isinstance(tol, (list, tuple)) and len(tol) == 2
            and all(isinstance(t, (int, float)) and t >= 0 for t in tol)
        ):
            problems.append(f"tolerances[{dtype!r}] must be (atol, rtol) for a known dtype")
    if w.quality is not None and not (
        isinstance(w.quality, Quality) and callable(w.quality.fn)
    ):
        problems.append("quality must be an advisor.Quality(name, fn, threshold)")
    if w.default_shape is not None and not _is_shape(w.default_shape):
        problems.append("default_shape must be a dict of dim name -> positive int")
    if w.info is not None and not callable(w.info):
        problems.append("info must be a function returning a dict")
    for part in ("pad", "cut"):
        if getattr(w, part) is not None and not callable(getattr(w, part)):
            problems.append(f"{part} must be a function")
    if (w.pad is None) != (w.cut is None):
        problems.append("pad and cut come together: give both (bucketed shapes need them) or "
                        "neither")
    return problems


def _where(exc: BaseException, file: Path) -> str:
    """`` (line N)``: the workload file's own line that raised (a SyntaxError names its own)."""
    if isinstance(exc, SyntaxError):
        return ""
    target = file.resolve()
    lines = [
        frame.lineno for frame in traceback.extract_tb(exc.__traceback__)
        if Path(frame.filename).resolve() == target
    ]
    return f" (line {lines[-1]})" if lines else ""


@dataclass(frozen=True)
class LoadedWorkload:
    """A workload together with where it came from."""

    workload: Workload
    path: Path
    source_sha256: str


@dataclass(frozen=True)
class WorkloadFacts:
    """What a sweep's parent needs of a workload, read in a child that imported it
    (`advisor.search.launcher.describe`), so that the parent never imports the file, nor torch:
    its name, dtypes, default shape (`Workload.shape`), traffic (weights normalised) and whether
    it can be padded into buckets (``pad`` and ``cut`` given)."""

    name: str
    dtypes: tuple[str, ...]
    shape: dict[str, int]
    traffic: tuple[tuple[dict[str, int], float], ...]
    bucketable: bool

    @classmethod
    def of(cls, wl: Workload) -> WorkloadFacts:
        return cls(wl.name, tuple(wl.dtypes), wl.shape,
                   tuple((dict(dims), float(w)) for dims, w in wl.traffic), wl.pad is not None)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtypes": list(self.dtypes), "shape": self.shape,
                "traffic": [[dims, w] for dims, w in self.traffic], "bucketable": self.bucketable}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WorkloadFacts:
        return cls(str(d["name"]), tuple(d["dtypes"]), dict(d["shape"]),
                   tuple((dict(dims), float(w)) for dims, w in d["traffic"]),
                   bool(d["bucketable"]))


@dataclass(frozen=True)
class DescribedWorkload:
    """A workload's facts together with where they came from: the file (resolved) and the
    sha256 of the bytes the child imported (`LoadedWorkload`'s, without the workload)."""

    workload: WorkloadFacts
    path: Path
    source_sha256: str


# path (resolved) -> the sha256 this process checked the file holds: what its children, which
# import the file again, check it still holds (`pin_sha256`, `checked_sha256`)
_CHECKED: dict[str, str] = {}


def _source(path: str | Path) -> bytes:
    """The file's bytes, read as this user and bounded (`advisor.paths.WORKLOAD_MAX_BYTES`)."""
    from advisor import paths

    paths.readable_file(path, "workload file", WorkloadError, missing=f"{path}: cannot be read "
                        "(No such file or directory); pass the path of a .py file")
    return paths.read_bounded(path, "workload file", paths.WORKLOAD_MAX_BYTES,
                              error=WorkloadError, fix="a workload file defines how to build "
                              "the model; keep weights and data in files it loads")


def workload_sha256(path: str | Path) -> str:
    """The sha256 of a workload file's bytes (`LoadedWorkload.source_sha256`), without
    importing it."""
    return hashlib.sha256(_source(path)).hexdigest()


def pin_sha256(path: str | Path, sha256: str) -> None:
    """Say that this process checked that ``path`` holds the bytes of ``sha256``: a child it
    starts on that file imports it only with those bytes (`checked_sha256`)."""
    _CHECKED[str(Path(path).resolve())] = sha256


def checked_sha256(path: str | Path) -> str | None:
    """The sha256 this process last checked ``path`` holds (imported it with, or compared with
    a stored hash); None when it never did."""
    return _CHECKED.get(str(Path(path).resolve()))


def trusted_path(path: str | Path | None, source_sha256: str | None, what: str) -> Path:
    """A workload path read from the results database, checked BEFORE anything imports it:
    the file must exist and hold the bytes that were measured (``source_sha256``, stored with
    the trials). Whoever can write the database can point ``path`` anywhere; only a file with
    the measured bytes is imported. Raises WorkloadError (one line) otherwise."""
    if not path or not os.path.isfile(path):  # a folder this user cannot enter: not here
        raise WorkloadError(f"the workload file of {what} is not here ({path}); pass it yourself")
    if not source_sha256:
        raise WorkloadError(f"{path}: the results database holds no source hash for {what}; "
                            "not imported: pass the workload file yourself")
    found = workload_sha256(path)
    if found != source_sha256:
        raise WorkloadError(
            f"{path} differs from the workload file {what} was measured with (sha256 "
            f"{found[:12]}, stored {str(source_sha256)[:12]}); not imported: pass the workload "
            "file yourself")
    pin_sha256(path, found)
    return Path(path)


def read_workload_file(file: Path) -> bytes:
    """The bytes of a workload file, checked as a file before anything imports it: it exists
    and is a ``.py`` file. Raises WorkloadError (one line) otherwise."""
    from advisor import paths

    found = paths.lookup(file, "workload file", WorkloadError)  # a folder it cannot enter
    if found is None or stat.S_ISDIR(found.st_mode):
        raise WorkloadError(f"{file}: no such workload file; pass the path of a .py file")
    if file.suffix != ".py":
        raise WorkloadError(f"{file}: a workload must be a Python file ending in .py")
    return _source(file)


def load_workload(path: str | Path, source_sha256: str | None = None) -> LoadedWorkload:
    """Import a workload file and check it honours the contract. The bytes read once are the
    bytes hashed and imported. ``source_sha256``: the hash the file must have (a child's, the
    one its parent checked); a file that no longer has it is refused before it is imported."""
    file = Path(path)
    source = read_workload_file(file)
    found = hashlib.sha256(source).hexdigest()
    if source_sha256 is not None and found != source_sha256:
        raise WorkloadError(
            f"{file} changed after advisor checked it (sha256 {found[:12]}, checked "
            f"{source_sha256[:12]}); not imported: leave the workload file as it is while "
            "advisor runs it")
    pin_sha256(file, found)
    digest = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:12]
    module_name = f"advisor_workload_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"{file}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:  # the bytes hashed above, not the file read again
        exec(compile(source, str(file), "exec", dont_inherit=True), module.__dict__)  # noqa: S102
    except WorkloadError as e:
        sys.modules.pop(module_name, None)
        raise WorkloadError(f"{file}: {e}") from e
    except BaseException as e:  # noqa: BLE001 - any failure of user code is a workload error
        sys.modules.pop(module_name, None)
        if isinstance(e, (KeyboardInterrupt, Terminated)):
            raise
        raise WorkloadError(
            f"{file}: import failed: {type(e).__name__}: {e}{_where(e, file)}"
        ) from e
    obj = getattr(module, "workload", None)
    if obj is None:
        raise WorkloadError(
            f"{file}: defines no `workload`; "
            "add `workload = advisor.Workload(...)` (see advisor.workload)"
        )
    if not isinstance(obj, Workload):
        raise WorkloadError(
            f"{file}: `workload` is a {type(obj).__name__}, not an advisor.Workload"
        )
    return LoadedWorkload(obj, file.resolve(), found)
