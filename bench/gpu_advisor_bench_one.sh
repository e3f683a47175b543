# One H200 (kind nvidia-h200) held across consecutive calls, each made within the time the
# machine stays warm after the last: the exhaustive grid and the advisor on one host and one GPU,
# one after another, as a user's one GPU would run them. The grid's parts (--grid-part K/8: every
# 8th config from the K-th) live in .gpu/results on the machine between calls.
# PHASE=grid: the parts not yet written, one after another, while they fit in CALL_S seconds
#   (default 540): a part starts only when the longest part so far (at least 150 s) would still
#   end in time. Prints the parts left; call again until none are. With TEST=1, first the GPU
#   test of the sweep's tie, re-measurement and warm start (tests/gpu/test_gpu_tie.py).
# PHASE=advisor: `advisor sweep` with its defaults against the eight parts (its wall against
#   theirs summed), then bench/paired_regret.py on its report when its pick is not the grid's best.
# Every call prints the host (hostname, boot id, GPU UUID) and stops when it is not the host
# that ran the first part: a grid of parts from two hosts is no grid of one host.
. bench/gpu_env.sh
R=.gpu/results; mkdir -p $R; N=8; T0=$(date +%s)
W="--workload workloads/reranker.py --device cuda --shape batch=50,seq=128 --out $R"
SPACE="--modes eager,default,reduce-overhead,max-autotune-no-cudagraphs,max-autotune --dtypes fp32,tf32,bf16,fp16"
HOST="$(hostname) $(cat /proc/sys/kernel/random/boot_id) $(nvidia-smi --query-gpu=uuid --format=csv,noheader)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
echo "host: $HOST; $(nproc) cores; start $(date +%T)"
if [ -f $R/host.txt ] && [ "$(cat $R/host.txt)" != "$HOST" ]; then
    echo "another host: the parts so far ran on $(cat $R/host.txt)"; exit 3; fi
echo "$HOST" > $R/host.txt
part() { echo $R/advisor_bench_cuda_reranker_grid$1of$N.json; }
case ${PHASE:?grid or advisor} in
grid)
    if [ -n "${TEST:-}" ]; then
        timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/gpu/test_gpu_tie.py \
            > $R/gpu-tie-test.txt 2>&1; echo "tie test rc=$? $(( $(date +%s) - T0 )) s"
        tail -n 15 $R/gpu-tie-test.txt | cut -c1-300; fi
    LONGEST=150
    for k in $(seq 1 $N); do
        if [ -f $R/done$k ]; then continue; fi
        left=$(( ${CALL_S:-540} - ($(date +%s) - T0) ))
        if [ $(( LONGEST * 11 / 10 )) -gt $left ]; then echo "part $k/$N: $left s left, stop"; break; fi
        t=$(date +%s)
        timeout $left python3 bench/advisor_bench.py $W $SPACE --grid-part $k/$N \
            > $R/grid$k.txt 2>&1 && touch $R/done$k
        echo "part $k/$N rc=$? $(( $(date +%s) - t )) s $(date +%T)"
        tail -n 4 $R/grid$k.txt | cut -c1-200
        LONGEST=$(( $(date +%s) - t > LONGEST ? $(date +%s) - t : LONGEST ))
    done
    echo "parts left: $(for k in $(seq 1 $N); do [ -f $R/done$k ] || printf '%s ' $k; done)" ;;
advisor)
    PARTS=$(for k in $(seq 1 $N); do [ -f $R/done$k ] && part $k; done | paste -sd,)
    python3 bench/advisor_bench.py $W $SPACE --startup-runs 1 --grid-from $PARTS \
        --keep-db .gpu/bench.db > $R/bench.txt 2>&1; echo "bench rc=$? $(date +%T)"
    grep -v '^  advisor|' $R/bench.txt | tail -n 6 | cut -c1-250
    python3 bench/gpu_summary.py .gpu/bench.db > $R/summary.txt 2>&1
    python3 -m advisor recommend reranker --db sqlite:///.gpu/bench.db --device cuda \
        --format json > $R/recommend.json 2>&1
    # exits 0 (and the pick is re-measured beside the grid's best) when they differ
    if python3 -c "import json, sys; r = json.load(open('$R/advisor_bench_cuda_reranker.json'))
sys.exit(bool(r.get('pick_is_grid_best')))"; then
        timeout ${PAIRED_S:-150} python3 bench/paired_regret.py \
            $R/advisor_bench_cuda_reranker.json > $R/paired.txt 2>&1
        echo "paired rc=$? $(date +%T)"; cat $R/paired.txt
    fi ;;
esac
echo "end $(date +%T)"
cp .gpu/*.db $R/ 2>/dev/null; tar czf $OUT/$PHASE.tgz -C .gpu results
