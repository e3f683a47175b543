"""What a serving process records and watches (advisor.child.capture), with real torch calls."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch

import advisor
from advisor.child.capture import ServingMonitor, ServingWarning, TrafficRecorder
from advisor.errors import ConfigError
from advisor.runtime import RecommendationWarning
from advisor.traffic import load_traffic
from advisor.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]
TINY_SEQ = ROOT / "tests" / "workloads" / "tiny_seq.py"
WL = load_workload(TINY_SEQ).workload
SHAPES = [{"batch": 2, "seq": 5}, {"batch": 3, "seq": 7}, {"batch": 2, "seq": 5},
          {"batch": 4, "seq": 30}]


def _served(tmp_path: Path, log: Path) -> advisor.runtime.Applied:
    torch.manual_seed(0)
    model = WL.build("cpu", torch.float32)
    with pytest.warns(RecommendationWarning, match="no advisor results database"):
        return advisor.apply(model, workload=TINY_SEQ, db=f"sqlite:///{tmp_path / 'no.db'}",
                             device="cpu", record_traffic=log)


def test_recorded_traffic_is_a_log_that_sweep_reads(tmp_path: Path) -> None:
    log = tmp_path / "traffic.csv"
    served = _served(tmp_path, log)
    for dims in SHAPES:
        served(**WL.inputs(dims, "cpu"))  # plain calls: dims read off the tensors
    served.request({"batch": 3, "seq": 33}, **WL.inputs({"batch": 3, "seq": 33}, "cpu"))
    assert served.recorder is not None
    served.recorder.close()
    traffic = load_traffic(log, list(WL.shape))
    assert traffic.log is not None
    order = [traffic.shapes[i][0] for i in traffic.log]
    assert order == [*SHAPES, {"batch": 3, "seq": 33}]  # every request, in order
    assert not (tmp_path / "no.db").exists()

    again = _served(tmp_path, log)  # a second process appends under the same header
    again(**WL.inputs(SHAPES[0], "cpu"))
    assert again.recorder is not None
    again.recorder.close()
    assert log.read_text().count("batch,seq") == 1
    assert len(load_traffic(log, list(WL.shape)).log or ()) == 6


def test_recording_is_bounded_and_says_so(tmp_path: Path) -> None:
    recorder = TrafficRecorder(tmp_path / "t.csv", WL, "cpu", max_rows=2)
    with pytest.warns(ServingWarning, match="recording stops"):
        for dims in SHAPES:
            recorder.record(dims)
    recorder.close()
    assert (tmp_path / "t.csv").read_text().splitlines() == ["batch,seq", "2,5", "3,7"]


def test_recording_into_another_log_or_without_a_workload_is_one_clear_error(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other.csv"
    other.write_text("rows,cols\n1,2\n")
    with pytest.raises(ConfigError, match="another header"):
        TrafficRecorder(other, WL, "cpu")
    torch.manual_seed(0)
    with pytest.raises(ConfigError, match="pass workload=FILE.py"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RecommendationWarning)
        advisor.apply(WL.build("cpu", torch.float32), workload="tiny-seq",
                      db=f"sqlite:///{tmp_path / 'no.db'}", device="cpu",
                      record_traffic=tmp_path / "t.csv")


@pytest.mark.slow
def test_a_served_process_that_hits_the_recompile_limit_is_told() -> None:
    """Real compiles: with the limit at 1, the second new length runs eagerly, and the monitor
    says so once. (The limit is set through the config's own patch(): pytest 9's monkeypatch
    restores a module attribute it did not find in the module's __dict__ by deleting it, and
    deleting a torch config entry hides it from every later compile in the process.)"""
    import torch._dynamo

    torch._dynamo.reset()
    torch.manual_seed(0)
    fn = torch.compile(WL.build("cpu", torch.float32), dynamic=False)
    monitor = ServingMonitor(compiled=True, cudagraphs=False, bucketed=False, cuda=False)
    monitor.started()
    with (torch._dynamo.config.patch(recompile_limit=1),
          pytest.warns(ServingWarning, match="recompile limit"), torch.inference_mode()):
        for dims in SHAPES:
            args = WL.inputs(dims, "cpu")
            new = monitor.is_new(args)
            fn(**args)
            if new:
                monitor.after_new_shape()
    assert [e["flag"] for e in monitor.events] == ["recompile_limit"]
    assert len(monitor.seen) == 3
    torch._dynamo.reset()
