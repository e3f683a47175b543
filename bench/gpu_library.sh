# H200, one call: the workload library (eager vs the advisor's pick), the reranker's shape
# strategies, its recommendations (policies, interleaved confirmation, warm-start artifact) and
# the measurement-fidelity check, all at once: every process takes turns on the GPU through
# one device lock (advisor.device_lock), so measurements never overlap while compiles do.
# PARTS, LIB1, LIB2 and STRATEGIES choose what runs; a reranker sweep database left in
# .gpu/seed/ (carried) lets the recommendations start at once.
. bench/gpu_env.sh
export ADVISOR_DEVICE_LOCK=/tmp/advisor-device-cuda0.lock TORCHINDUCTOR_COMPILE_THREADS=2
DEADLINE=${DEADLINE:-500}; export R=.gpu/results DEADLINE
mkdir -p $R; rm -f .gpu/*.db* .gpu/*.done
PARTS=${PARTS:-lib recs shapes fidelity}
LIB1=${LIB1:-reranker embedder guardrail vision_encoder local_lm reward_train}
LIB2=${LIB2:-pointwise reduction gemm_epilogue cast_prologue horizontal}
export STRATEGIES=${STRATEGIES:-static,dynamic,mark_dynamic,buckets:pow2,buckets:fitted-4}
[ -e .gpu/seed/lib-reranker.db ] && cp .gpu/seed/lib-reranker.db .gpu/ && touch .gpu/reranker.done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
lib() {  # sweep each workload: eager fp32 baseline, bf16 eager/default/reduce-overhead
    for w in "$@"; do
        python3 -m advisor sweep workloads/$w.py --device cuda --modes eager,default,reduce-overhead \
            --dtypes bf16 --jobs 4 --no-warm --db sqlite:///.gpu/lib-$w.db > $R/lib-$w.txt 2>&1
        echo "lib $w rc=$? $(date +%T)"; touch .gpu/$w.done
    done
}
recs() {  # issue 6: policies on the reranker's sweep, then the interleaved confirmation
    while [ ! -e .gpu/reranker.done ]; do sleep 2; done
    D="--db sqlite:///.gpu/lib-reranker.db --device cuda"
    for p in "latency" "tail" "throughput" "break-even --calls-per-process 1000" \
             "break-even --calls-per-process 1000000"; do
        echo "== policy $p"; python3 -m advisor recommend reranker $D --policy $p
    done > $R/recs.txt 2>&1
    python3 -m advisor recommend reranker $D --confirm --top 2 --format json \
        > $R/confirm.json 2> $R/confirm.err; echo "confirm rc=$? $(date +%T)"
    python3 bench/warm_start_bench.py --workload workloads/reranker.py --device cuda \
        --mode reduce-overhead --dtype bf16 --repeats 2 --out $R > $R/warm.txt 2>&1
    echo "warm-start bench rc=$? $(date +%T)"
}
shapes() {  # issue 5: the reranker's shape strategies over its traffic
    python3 -m advisor sweep workloads/reranker.py --device cuda --modes reduce-overhead \
        --dtypes bf16 --shapes $STRATEGIES \
        --jobs 3 --no-warm --db sqlite:///.gpu/shapes.db > $R/shapes.txt 2>&1
    echo "shapes rc=$? $(date +%T)"
}
fidelity() {  # issues 2 and 10: advisor vs plain vs do_bench, one process, 5 rounds
    python3 bench/fidelity.py --workload workloads/reranker.py --device cuda \
        --shape batch=50,seq=128 --repeats 5 --out $R \
        --configs fp32:eager,fp16:eager,bf16:default,fp16:default,bf16:reduce-overhead,bf16:max-autotune-no-cudagraphs \
        > $R/fidelity.txt 2>&1; echo "fidelity rc=$? $(date +%T)"
}
export -f lib recs shapes fidelity
echo "start $(date +%T)"
for part in $PARTS; do
    case $part in
        lib) timeout $DEADLINE bash -c "lib $LIB1" &
             [ -n "$LIB2" ] && timeout $DEADLINE bash -c "lib $LIB2" & ;;
        *) timeout $DEADLINE bash -c $part & ;;
    esac
done
wait; echo "end $(date +%T)"
python3 bench/gpu_summary.py .gpu/*.db
tail -n 12 $R/*.txt $R/confirm.err 2>/dev/null | cut -c1-300
cp .gpu/*.db* $R/; tar czf $OUT/library.tgz -C .gpu results
