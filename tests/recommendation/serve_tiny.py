"""A serving process: `advisor.apply` the stored recommendation of a workload, compare every
traffic shape with the eager fp32 model, and print what happened as JSON.

    python serve_tiny.py DB_URL WORKLOAD_FILE
"""

from __future__ import annotations

import json
import sys
import warnings

import torch
import torch._dynamo.utils

import advisor
from advisor.workload import load_workload


def main(db: str, path: str) -> None:
    wl = load_workload(path).workload
    torch.manual_seed(0)
    eager = wl.build("cpu", torch.float32)
    torch.manual_seed(0)
    model = wl.build("cpu", torch.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        applied = advisor.apply(model, workload=path, db=db, device="cpu")
    counters = torch._dynamo.utils.counters
    hits = int(counters["inductor"]["fxgraph_cache_hit"])
    misses = int(counters["inductor"]["fxgraph_cache_miss"])
    graphs = int(counters["stats"]["unique_graphs"])
    diffs = []
    for dims, _weight in wl.traffic:
        torch.manual_seed(0)
        args = wl.inputs(dict(dims), "cpu")
        with torch.inference_mode():
            reference = eager(*args)
        out = applied(*args)
        diffs.append(float((out.float() - reference).abs().max()))
    print(json.dumps({
        "config": applied.config.to_dict(), "compiled": applied.compiled,
        "artifact": applied.artifact, "warmup_s": applied.warmup_s,
        "fxgraph_cache_hit": hits, "fxgraph_cache_miss": misses,
        "graphs": graphs,
        "graphs_after_warmup": int(counters["stats"]["unique_graphs"]) - graphs,
        "max_abs_diff": diffs,
        "warnings": [str(w.message) for w in caught if issubclass(w.category, advisor.runtime.
                                                                   RecommendationWarning)],
    }))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
