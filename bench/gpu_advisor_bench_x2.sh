# Two H200s of one host (kind nvidia-h200-x2), each GPU with half of the host's cores, so that
# every process sees what a one-H200, 16-core machine gives; the grid and the advisor measured on
# the same host. The grid's parts: every 4th config from the 1st, 2nd, 3rd and 4th (1/4 .. 4/4),
# together the whole space once; its wall is the sum of the parts' walls.
# PHASE=fidelity: the GPU tests of the back-to-back figure, then bench/fidelity.py over 15
#   rounds on GPU 0 alone (GPU 1 idle);
# PHASE=grid-a: parts 1/4 (GPU 0) and 3/4 (GPU 1) side by side;
# PHASE=grid-b: parts 2/4 (GPU 0) and 4/4 (GPU 1) side by side, then the GPU test of a sweep's
#   tie confirmed from the kept caches (GPU 0);
# PHASE=advisor: `advisor sweep` with its defaults against the four parts on GPU 0, then
#   bench/paired_regret.py on its report; beside it on GPU 1, bench/fidelity.py (FID_REPEATS
#   rounds, FID_CONFIGS) with the sampling window the advisor uses now.
# Parts written by earlier calls travel in .gpu/results (carried).
. bench/gpu_env.sh
R=.gpu/results; mkdir -p $R
W="--workload workloads/reranker.py --device cuda --shape batch=50,seq=128 --out $R"
SPACE="--modes eager,default,reduce-overhead,max-autotune-no-cudagraphs,max-autotune --dtypes fp32,tf32,bf16,fp16"
read -r HALF0 HALF1 < <(python3 -c "import os; c = sorted(os.sched_getaffinity(0)); h = len(c) // 2
print(','.join(map(str, c[:h])), ','.join(map(str, c[h:])))")
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
nproc; echo "halves: $HALF0 | $HALF1"; echo "start $(date +%T)"
on() { local gpu=$1 cores=$2; shift 2; CUDA_VISIBLE_DEVICES=$gpu taskset -c $cores "$@"; }
case ${PHASE:?fidelity, grid-a, grid-b or advisor} in
fidelity)
    on 0 $HALF0 timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu \
        -k "back_to_back or mark_step" > $R/gpu-tests.txt 2>&1; echo "tests rc=$? $(date +%T)"
    on 0 $HALF0 timeout ${FID_S:-450} python3 bench/fidelity.py $W --repeats ${REPEATS:-15} \
        --configs ${CONFIGS:-fp32:eager,fp16:eager,bf16:default,tf32:reduce-overhead,bf16:reduce-overhead,fp16:max-autotune-no-cudagraphs,bf16:max-autotune} \
        > $R/fidelity.txt 2>&1; echo "fidelity rc=$? $(date +%T)"
    tail -n 4 $R/gpu-tests.txt; tail -n 10 $R/fidelity.txt | cut -c1-250
    cat $R/fidelity_cuda_reranker.md ;;
grid-a|grid-b)
    [ $PHASE = grid-a ] && set -- 1 3 || set -- 2 4
    on 0 $HALF0 timeout ${GRID_S:-560} python3 bench/advisor_bench.py $W $SPACE --grid-part $1/4 \
        > $R/grid$1of4.txt 2>&1 &
    on 1 $HALF1 timeout ${GRID_S:-560} python3 bench/advisor_bench.py $W $SPACE --grid-part $2/4 \
        > $R/grid$2of4.txt 2>&1 &
    wait; echo "grid parts done $(date +%T)"
    tail -n 8 $R/grid$1of4.txt $R/grid$2of4.txt | cut -c1-250
    if [ $PHASE = grid-b ]; then
        on 0 $HALF0 timeout ${TEST_S:-200} python3 -m pytest -q -p no:cacheprovider -m gpu \
            tests/gpu/test_gpu_tie.py > $R/gpu-tie-test.txt 2>&1; echo "tie test rc=$? $(date +%T)"
        tail -n 15 $R/gpu-tie-test.txt | cut -c1-300
    fi ;;
advisor)
    PARTS=$(ls $R/*_grid[1-4]of4.json | paste -sd,) || exit 1
    on 1 $HALF1 timeout ${FID_S:-540} python3 bench/fidelity.py $W --repeats ${FID_REPEATS:-10} \
        --configs ${FID_CONFIGS:-fp32:eager,fp16:eager,bf16:default,bf16:reduce-overhead,fp16:max-autotune-no-cudagraphs} \
        > $R/fidelity.txt 2>&1 &
    on 0 $HALF0 timeout ${BENCH_S:-420} python3 bench/advisor_bench.py $W $SPACE --startup-runs 1 \
        --grid-from $PARTS --keep-db .gpu/bench.db > $R/bench.txt 2>&1
    echo "bench rc=$? $(date +%T)"
    on 0 $HALF0 timeout ${PAIRED_S:-120} python3 bench/paired_regret.py \
        $R/advisor_bench_cuda_reranker.json > $R/paired.txt 2>&1; echo "paired rc=$? $(date +%T)"
    python3 bench/gpu_summary.py .gpu/bench.db > $R/summary.txt 2>&1
    grep -v '^  advisor|' $R/bench.txt | tail -n 8 | cut -c1-250; cat $R/paired.txt
    wait; echo "fidelity done $(date +%T)"; tail -n 3 $R/fidelity.txt | cut -c1-250
    cat $R/fidelity_cuda_reranker.md ;;
esac
echo "end $(date +%T)"
cp .gpu/*.db $R/ 2>/dev/null; tar czf $OUT/$PHASE.tgz -C .gpu results
