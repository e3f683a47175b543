# H200: wait for bench/gpu_sweep.sh's sweep, then time its configs with the plain harness.
. bench/gpu_env.sh
while kill -0 "$(cat .gpu/sweep.pid)" 2>/dev/null; do sleep 5; done
cp .gpu/sweep.json .gpu/sweep.err "$OUT"/ 2>/dev/null
tr '\r' '\n' < .gpu/sweep.err | grep -v '^\s*$' | tail -n 30
python3 bench/trial_vs_plain.py --db sqlite:///.gpu/h200.db --sweep 1 --caches .gpu/caches \
    --out "$OUT"
cp .gpu/h200.db "$OUT"/
