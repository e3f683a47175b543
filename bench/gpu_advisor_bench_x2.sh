# Two H200s of one host, calls on the same kind of machine, each GPU with half of the host's
# cores (every grid part alone on its GPU: its wall is what one H200 with those cores takes; the
# grid's wall is the sum of the parts'). The grid's parts are every 2nd config from the 2nd
# (2/2) and every 4th from the 1st and from the 3rd (1/4, 3/4): together, the whole space once.
# PHASE=grid: parts 1/2 (GPU 0) and 2/2 (GPU 1): 1/2 holds the fp32 max-autotune compiles and
#   does not fit in one call, so its configs are measured again as the parts 1/4 and 3/4;
# PHASE=grid-rest: parts 1/4 (GPU 0) and 3/4 (GPU 1), then the local LM's library sweep on GPU 1;
# PHASE=advisor: `advisor sweep` with its defaults against the parts put together (GPU 0);
#   meanwhile on GPU 1: the measurement-fidelity check, then the reranker's sweep with --confirm.
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
case ${PHASE:?grid, grid-rest or advisor} in
grid)
    rm -rf $R; mkdir -p $R
    on 0 $HALF0 timeout ${GRID_S:-560} python3 bench/advisor_bench.py $W $SPACE --grid-part 1/2 \
        > $R/grid1.txt 2>&1 &
    on 1 $HALF1 timeout ${GRID_S:-560} python3 bench/advisor_bench.py $W $SPACE --grid-part 2/2 \
        > $R/grid2.txt 2>&1 &
    wait; echo "grid parts done $(date +%T)"
    tail -n 14 $R/grid1.txt $R/grid2.txt | cut -c1-250
    tar czf $OUT/grid.tgz -C .gpu results ;;
grid-rest)
    on 0 $HALF0 timeout ${GRID_S:-540} python3 bench/advisor_bench.py $W $SPACE --grid-part 1/4 \
        > $R/grid1of4.txt 2>&1 &
    (on 1 $HALF1 timeout ${GRID_S:-540} python3 bench/advisor_bench.py $W $SPACE --grid-part 3/4 \
        > $R/grid3of4.txt 2>&1; echo "part 3/4 rc=$? $(date +%T)"
     on 1 $HALF1 timeout ${LIB_S:-200} python3 -m advisor sweep workloads/local_lm.py \
        --device cuda --modes eager,default,reduce-overhead --dtypes bf16 --no-warm \
        --db sqlite:///.gpu/lib-local_lm.db > $R/lib-local_lm.txt 2>&1
     echo "local_lm rc=$? $(date +%T)") &
    wait; echo "end $(date +%T)"
    python3 bench/gpu_summary.py .gpu/lib-local_lm.db > $R/summary-local_lm.txt 2>&1
    tail -n 8 $R/grid1of4.txt $R/grid3of4.txt $R/lib-local_lm.txt | cut -c1-250
    cp .gpu/*.db $R/; tar czf $OUT/grid-rest.tgz -C .gpu results ;;
advisor)
    PARTS=$(ls $R/*_grid2of2.json $R/*_grid1of4.json $R/*_grid3of4.json | paste -sd,) || exit 1
    (on 0 $HALF0 timeout ${BENCH_S:-500} python3 bench/advisor_bench.py $W $SPACE \
        --grid-from $PARTS --keep-db .gpu/bench.db > $R/bench.txt 2>&1
     echo "bench rc=$? $(date +%T)") &
    (on 1 $HALF1 timeout ${FID_S:-270} python3 bench/fidelity.py --workload workloads/reranker.py \
        --device cuda --shape batch=50,seq=128 --repeats 5 --out $R \
        --configs fp32:eager,fp16:eager,bf16:default,fp16:default,bf16:reduce-overhead,bf16:max-autotune-no-cudagraphs \
        > $R/fidelity.txt 2>&1; echo "fidelity rc=$? $(date +%T)"
     on 1 $HALF1 timeout ${CONFIRM_S:-220} python3 -m advisor sweep workloads/reranker.py \
        --device cuda --shape batch=50,seq=128 --modes eager,default,reduce-overhead \
        --dtypes bf16 --confirm --db sqlite:///.gpu/confirm.db > $R/confirm.txt 2>&1
     echo "confirm rc=$? $(date +%T)") &
    wait; echo "end $(date +%T)"
    python3 bench/gpu_summary.py .gpu/bench.db .gpu/confirm.db > $R/summary.txt 2>&1
    tail -n 40 $R/bench.txt | cut -c1-250; tail -n 12 $R/fidelity.txt $R/confirm.txt
    cp .gpu/*.db $R/; tar czf $OUT/advisor.tgz -C .gpu results ;;
esac
