"""The contract holds as written: a quality function receives the outputs as the component
returned them. A real Hugging Face ``ModelOutput`` stays one (moved to the CPU, fp32)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers.modeling_outputs import SequenceClassifierOutput

from advisor.child.tensors import to_cpu_fp32
from advisor.config import CompileConfig
from advisor.search.launcher import Launcher

HF_OUTPUT = Path(__file__).resolve().parents[1] / "workloads" / "hf_output.py"


def test_a_model_output_stays_one_on_the_cpu_in_fp32() -> None:
    out = SequenceClassifierOutput(logits=torch.ones(2, 3, dtype=torch.bfloat16))
    got = to_cpu_fp32(out)
    assert isinstance(got, SequenceClassifierOutput) and got.logits.dtype == torch.float32
    assert list(got.keys()) == ["logits"] and got["logits"] is got.logits
    assert type(to_cpu_fp32({"a": torch.ones(1)})) is dict


@pytest.mark.slow
def test_a_quality_function_reading_logits_passes_in_a_real_trial() -> None:
    record = Launcher(timeout_s=300).run(HF_OUTPUT, CompileConfig(mode="eager", dtype="bf16"),
                                         "cpu")
    assert record["status"] == "ok", record["error_tail"]
    assert record["quality_name"] == "same_top1" and record["quality_passed"] is True
