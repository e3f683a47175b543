# nvidia-h200-x2: the same reranker space swept by two workers (one per GPU), then by one.
. bench/gpu_env.sh
nvidia-smi --query-gpu=index,name --format=csv,noheader
S="--device cuda --modes eager --dtypes fp32,tf32,bf16,fp16 --no-warm"
rm -f .gpu/two.db* .gpu/one.db*
t0=$(date +%s.%N)
python3 -m advisor sweep workloads/reranker.py $S --workers 2 --db sqlite:///.gpu/two.db \
    --json > "$OUT/two.json" 2> "$OUT/two.err"; echo "two workers rc=$?"
t1=$(date +%s.%N)
python3 -m advisor sweep workloads/reranker.py $S --db sqlite:///.gpu/one.db \
    --json > "$OUT/one.json" 2> "$OUT/one.err"; echo "one worker rc=$?"
t2=$(date +%s.%N)
python3 - "$t0" "$t1" "$t2" <<'PY'
import json, os, sys
t0, t1, t2 = map(float, sys.argv[1:])
out = os.environ["OUT"]
for name in ("two", "one"):
    d = json.load(open(f"{out}/{name}.json"))
    rows = [(t["config_key"], round(t["median_ms"], 3), t["fingerprint"]["device_uuid"])
            for t in d["trials"]]
    print(name, d["status"], rows)
print(f"wall: two workers {t1 - t0:.1f} s, one worker {t2 - t1:.1f} s, "
      f"ratio {(t1 - t0) / (t2 - t1):.2f}")
PY
cp .gpu/two.db .gpu/one.db "$OUT"/
