# H200, one call: the advisor benchmark alone on the GPU (grid vs `advisor sweep` defaults),
# then, sharing the GPU through the device lock, the interleaved confirmation of the
# benchmark sweep's leaders and the local LM's library sweep.
. bench/gpu_env.sh
R=.gpu/results; mkdir -p $R; rm -f .gpu/*.db*
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
echo "start $(date +%T)"
timeout ${BENCH_S:-430} python3 bench/advisor_bench.py --workload workloads/reranker.py \
    --device cuda --shape batch=50,seq=128 --dtypes bf16 --out $R --keep-db .gpu/bench.db \
    --modes ${MODES:-eager,default,reduce-overhead,max-autotune-no-cudagraphs} > $R/bench.txt 2>&1
echo "bench rc=$? $(date +%T)"
export ADVISOR_DEVICE_LOCK=/tmp/advisor-device-cuda0.lock TORCHINDUCTOR_COMPILE_THREADS=2
timeout ${REST_S:-120} python3 -m advisor recommend reranker --db sqlite:///.gpu/bench.db \
    --device cuda --confirm --top 2 --format json > $R/confirm.json 2> $R/confirm.err &
timeout ${REST_S:-120} python3 -m advisor sweep workloads/local_lm.py --device cuda \
    --modes eager,default,reduce-overhead --dtypes bf16 --jobs 4 --no-warm \
    --db sqlite:///.gpu/lib-local_lm.db > $R/lib-local_lm.txt 2>&1 &
wait; echo "end $(date +%T)"
python3 bench/gpu_summary.py .gpu/*.db
tail -n 30 $R/bench.txt; tail -n 5 $R/confirm.err; head -c 3000 $R/confirm.json
cp .gpu/*.db* $R/; tar czf $OUT/bench.tgz -C .gpu results
