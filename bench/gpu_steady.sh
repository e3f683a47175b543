# One H200 (kind nvidia-h200): the host's launch-rate noise, and the reranker's confirmation.
# PHASE=noise-confirm: bench/launch_noise.py unpinned and pinned to a few cores, then
#   `advisor sweep ... --confirm` alone on the machine and its recommendations under two policies;
# PHASE=fidelity: bench/fidelity.py over 15 rounds, then bench/paired_regret.py on the
#   committed advisor bench report (its pick and the grid's best side by side);
# PHASE=advisor: bench/advisor_bench.py (its advisor side, against the committed grid parts),
#   then bench/paired_regret.py on what it wrote;
# PHASE=measure-core: a 12-config sweep with every core shared, then with one kept for measuring;
# PHASE=b2b: bench/fidelity.py on three configs, 5 rounds (the back-to-back figure vs do_bench);
# PHASE=window: bench/window_cv.py, the latency median's CV over rounds with 1 s and 4 s windows;
# PHASE=sweep: `advisor sweep` with its defaults over the whole space, timed, alone, and the
#   confirmation it made of its leaders;
# PHASE=tie-advisor: the GPU test of a sweep's tie confirmed from the kept caches, then
#   bench/advisor_bench.py (its advisor side, against run 4's grid parts), then
#   bench/paired_regret.py on what it wrote;
# PHASE=fidelity-tie: bench/fidelity.py with the advisor's sampling window over 10 rounds, then a
#   sweep of the max-autotune leaders alone (a near-tie), timed, with its tie confirmation.
. bench/gpu_env.sh
R=.gpu/results; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
nvidia-smi topo -m 2>&1 | head -4; nproc; lscpu | grep -i -E 'model name|numa|thread|socket'
echo "start $(date +%T)"
confirmations() {  # the stored confirmations of the reranker in database $1, entry by entry
    python3 -c "import sys; from advisor.db.store import ResultStore as S
for c in S.from_url('sqlite:///' + sys.argv[1], create=False).confirmations('reranker'):
    print(c['status'], c['created_at'], c['rounds'])
    for e in c['entries']: print(' ', e['label'], e.get('median_ms'), e.get('speedup_ci'),
                                 e.get('compile_s'), e.get('compile_cache'), e.get('failure'))" "$1"
}
FID="--workload workloads/reranker.py --device cuda --shape batch=50,seq=128"
case ${PHASE:?noise-confirm or fidelity} in
noise-confirm)
    python3 bench/launch_noise.py --device cuda --seconds 6 --cores ${CORES:-0,1,7,8,15} \
        --out $R > $R/noise.txt 2>&1; echo "noise rc=$? $(date +%T)"; cat $R/noise.txt
    timeout ${CONFIRM_S:-420} python3 -m advisor sweep workloads/reranker.py --device cuda \
        --shape batch=50,seq=128 --modes eager,default,reduce-overhead --dtypes bf16 --confirm \
        --db sqlite:///.gpu/confirm.db > $R/confirm.txt 2>&1; echo "confirm rc=$? $(date +%T)"
    for policy in latency "break-even --calls-per-process 1000"; do
        echo "== policy $policy"
        python3 -m advisor recommend reranker --db sqlite:///.gpu/confirm.db --policy $policy
    done > $R/policies.txt 2>&1
    tail -n 30 $R/confirm.txt | cut -c1-250; cut -c1-250 $R/policies.txt ;;
fidelity)
    timeout ${FID_S:-440} python3 bench/fidelity.py $FID --repeats ${REPEATS:-15} --out $R \
        --configs ${CONFIGS:-fp32:eager,fp16:eager,bf16:default,tf32:reduce-overhead,bf16:reduce-overhead,fp16:max-autotune-no-cudagraphs,bf16:max-autotune} \
        > $R/fidelity.txt 2>&1; echo "fidelity rc=$? $(date +%T)"
    cp bench/results/advisor_bench_cuda_reranker.json $R/
    timeout ${PAIRED_S:-130} python3 bench/paired_regret.py $R/advisor_bench_cuda_reranker.json \
        --workload workloads/reranker.py > $R/paired.txt 2>&1; echo "paired rc=$? $(date +%T)"
    tail -n 10 $R/fidelity.txt | cut -c1-250; cat $R/paired.txt ;;
advisor)
    P=bench/results/advisor_bench_cuda_reranker_grid
    timeout ${BENCH_S:-450} python3 bench/advisor_bench.py $FID --out $R --startup-runs 1 \
        --modes eager,default,reduce-overhead,max-autotune-no-cudagraphs,max-autotune \
        --dtypes fp32,tf32,bf16,fp16 --grid-from ${P}2of2.json,${P}1of4.json,${P}3of4.json \
        --keep-db .gpu/bench.db > $R/bench.txt 2>&1; echo "bench rc=$? $(date +%T)"
    timeout ${PAIRED_S:-120} python3 bench/paired_regret.py $R/advisor_bench_cuda_reranker.json \
        > $R/paired.txt 2>&1; echo "paired rc=$? $(date +%T)"
    grep -v '^  advisor|' $R/bench.txt | tail -n 8 | cut -c1-250; cat $R/paired.txt ;;
measure-core)
    # The same 12-config sweep twice: without a core kept for measurements, then with one.
    S="workloads/reranker.py --device cuda --shape batch=50,seq=128 --no-warm
       --modes eager,default,reduce-overhead --dtypes fp32,tf32,bf16,fp16"
    ADVISOR_MEASURE_CORE=none timeout ${SWEEP_S:-140} python3 -m advisor sweep $S \
        --db sqlite:///.gpu/shared-cores.db > $R/shared-cores.txt 2>&1; echo "A rc=$? $(date +%T)"
    timeout ${SWEEP_S:-140} python3 -m advisor sweep $S \
        --db sqlite:///.gpu/measure-core.db > $R/measure-core.txt 2>&1; echo "B rc=$? $(date +%T)"
    python3 bench/gpu_summary.py .gpu/shared-cores.db .gpu/measure-core.db > $R/summary.txt 2>&1
    python3 -c "from advisor.db.store import ResultStore as S
for db in ('shared-cores', 'measure-core'):
    ts = S.from_url(f'sqlite:///.gpu/{db}.db', create=False).trials(workload='reranker')
    print(db, 'measure cores:', sorted({str((t.get('telemetry') or {}).get('measure_core')) for t in ts}))"
    cut -c1-150 $R/summary.txt ;;
b2b)
    timeout ${FID_S:-90} python3 bench/fidelity.py $FID --repeats ${REPEATS:-5} --out $R \
        --configs ${CONFIGS:-fp32:eager,bf16:default,bf16:reduce-overhead} \
        > $R/fidelity-b2b.txt 2>&1; echo "fidelity rc=$? $(date +%T)"
    tail -n 6 $R/fidelity-b2b.txt | cut -c1-250; cat $R/fidelity_cuda_reranker.md ;;
window)
    timeout ${WINDOW_S:-420} python3 bench/window_cv.py $FID --repeats ${REPEATS:-10} --out $R \
        --windows ${WINDOWS:-1,4} --configs ${CONFIGS:-fp16:eager,bf16:default,bf16:reduce-overhead} \
        > $R/window.txt 2>&1; echo "window rc=$? $(date +%T)"; tail -n 14 $R/window.txt ;;
sweep)
    t0=$(date +%s.%N)
    timeout ${SWEEP_S:-280} python3 -m advisor sweep workloads/reranker.py --device cuda \
        --shape batch=50,seq=128 --db sqlite:///.gpu/sweep.db \
        --modes eager,default,reduce-overhead,max-autotune-no-cudagraphs,max-autotune \
        --dtypes fp32,tf32,bf16,fp16 > $R/sweep.txt 2>&1; rc=$?
    echo "sweep rc=$rc wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
    python3 bench/gpu_summary.py .gpu/sweep.db > $R/summary.txt 2>&1
    tail -n 4 $R/sweep.txt | cut -c1-250; cut -c1-150 $R/summary.txt
    confirmations .gpu/sweep.db ;;
tie-advisor)
    [ "${TEST_S:-160}" = 0 ] || { timeout ${TEST_S:-160} python3 -m pytest -q -p no:cacheprovider \
        -m gpu tests/gpu/test_gpu_tie.py > $R/gpu-tie-test.txt 2>&1; echo "tie test rc=$? $(date +%T)"
        tail -n 15 $R/gpu-tie-test.txt | cut -c1-300; }
    P=bench/results/advisor_bench_cuda_reranker_run4_grid
    timeout ${BENCH_S:-330} python3 bench/advisor_bench.py $FID --out $R --startup-runs 1 \
        --modes eager,default,reduce-overhead,max-autotune-no-cudagraphs,max-autotune \
        --dtypes fp32,tf32,bf16,fp16 --grid-from ${P}1of4.json,${P}2of4.json,${P}3of4.json,${P}4of4.json \
        --keep-db .gpu/bench.db > $R/bench.txt 2>&1; echo "bench rc=$? $(date +%T)"
    timeout ${PAIRED_S:-100} python3 bench/paired_regret.py $R/advisor_bench_cuda_reranker.json \
        > $R/paired.txt 2>&1; echo "paired rc=$? $(date +%T)"
    python3 bench/gpu_summary.py .gpu/bench.db > $R/summary.txt 2>&1
    grep -v '^  advisor|' $R/bench.txt | tail -n 8 | cut -c1-250; cat $R/paired.txt ;;
fidelity-tie)
    timeout ${FID_S:-300} python3 bench/fidelity.py $FID --repeats ${REPEATS:-10} --out $R \
        --configs ${CONFIGS:-fp32:eager,fp16:eager,bf16:default,bf16:reduce-overhead} \
        > $R/fidelity.txt 2>&1; echo "fidelity rc=$? $(date +%T)"
    tail -n 6 $R/fidelity.txt | cut -c1-250; cat $R/fidelity_cuda_reranker.md
    t0=$(date +%s.%N)
    timeout ${SWEEP_S:-270} python3 -m advisor sweep workloads/reranker.py --device cuda \
        --shape batch=50,seq=128 --db sqlite:///.gpu/tie.db --modes max-autotune \
        --dtypes bf16,fp16 --no-warm --jobs 3 --json > $R/tie-sweep.json 2> $R/tie-sweep.txt; rc=$?
    echo "tie sweep rc=$rc wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s"
    python3 bench/gpu_summary.py .gpu/tie.db > $R/tie-summary.txt 2>&1
    tail -n 5 $R/tie-sweep.txt | cut -c1-250; cut -c1-150 $R/tie-summary.txt
    confirmations .gpu/tie.db ;;
esac
cp .gpu/*.db $R/ 2>/dev/null; tar czf $OUT/steady.tgz -C .gpu results
