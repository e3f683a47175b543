# H200, one call: sweep the reranker over all modes x fp32/tf32/bf16/fp16 (TPE, bounded by
# TRIALS and BUDGET), then time every config it measured with the article's plain harness.
. bench/gpu_env.sh
rm -rf .gpu/caches .gpu/h200.db*
python3 -m advisor sweep workloads/reranker.py --device cuda \
    --modes eager,default,reduce-overhead,max-autotune-no-cudagraphs,max-autotune \
    --dtypes fp32,tf32,bf16,fp16 --trials "${TRIALS:-10}" --budget "${BUDGET:-5m}" --no-warm \
    --keep-caches .gpu/caches --db sqlite:///.gpu/h200.db > "$OUT/sweep.txt" 2> "$OUT/sweep.err"
echo "sweep rc=$?"
tail -n 25 "$OUT/sweep.txt"
python3 bench/trial_vs_plain.py --db sqlite:///.gpu/h200.db --sweep 1 --caches .gpu/caches \
    --out "$OUT"
cp .gpu/h200.db "$OUT"/
