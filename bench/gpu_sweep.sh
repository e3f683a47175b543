# H200: sweep the reranker over all modes x fp32/tf32/bf16/fp16 (TPE, bounded), keeping caches.
# Runs in the background (setsid) so that a following call can pick up its results.
. bench/gpu_env.sh
rm -rf .gpu/caches .gpu/h200.db* .gpu/sweep.*
setsid nohup python3 -m advisor sweep workloads/reranker.py --device cuda \
    --modes eager,default,reduce-overhead,max-autotune-no-cudagraphs,max-autotune \
    --dtypes fp32,tf32,bf16,fp16 --trials "${TRIALS:-12}" --budget "${BUDGET:-7m}" --no-warm \
    --keep-caches .gpu/caches --db sqlite:///.gpu/h200.db --json \
    > .gpu/sweep.json 2> .gpu/sweep.err < /dev/null &
echo $! > .gpu/sweep.pid
