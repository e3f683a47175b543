python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.is_available())"
cat > /tmp/adv <<'X'
#!/bin/sh
exec python3 -c "from advisor.cli.main import main; main()" "$@"
X
chmod +x /tmp/adv
for m in eager default reduce-overhead; do /tmp/adv trial workloads/reranker.py --mode $m --dtype bf16 --json > $OUT/trial_$m.json 2>$OUT/trial_$m.err; echo "$m rc=$?"; python3 -c "
import json,sys; r=json.load(open('$OUT/trial_$m.json')); print(r['status'], r['failure_reason'], r['median_ms'], r['p99_ms'], r['cold_compile_s'], r['warm_compile_s'], r['kernels_per_call'], r['launches_per_call'], r['eager_kernels_per_call'], r['eager_launches_per_call'], r['method'], r['quality_value'], r['max_abs_err'], r['telemetry'], r['fingerprint']['driver_version'], r['fingerprint']['device_uuid'], (r['error_tail'] or '')[-1500:])"; done
/tmp/adv trial workloads/pointwise.py --mode reduce-overhead --json > $OUT/pw.json 2>$OUT/pw.err; python3 -c "
import json; r=json.load(open('$OUT/pw.json')); print(r['status'], r['median_ms'], r['kernel_names'], r['eager_kernel_names'], r['launches_per_call'], (r['error_tail'] or '')[-1500:])"
for f in $OUT/*.err; do echo "== $f"; tail -n 5 "$f"; done
