# One bench script, whole, in one call of the lent machine (or here, on the CPU):
#   bash bench/run_bench.sh SCRIPT.py [ARGS...]
# The carried wheels are installed first when .whl/ is here (bench/gpu_env.sh); the host, its
# cores, load average and GPUs are printed; SCRIPT runs with --out $R (default .gpu/results)
# and --deadline set so that it ends, results written, within CALL_S seconds of this script's
# start (default 570: a 600 s call less the copy); a script still running 15 s past that is
# stopped with SIGINT (the search bench keeps what it measured). Its .md results are printed;
# everything in $R is copied to $OUT when set (the lent machine's return folder).
# On the CPU (no .whl/): activate the project's virtual environment first.
# .whl/ (git-ignored; carry it): the packages the lent machine lacks, for its Python 3.12:
#   pip download --dest .whl --only-binary=:all: --no-deps --python-version 3.12 \
#     --implementation cp --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
#     optuna sqlalchemy alembic typer rich click shellingham markdown-it-py mdurl pygments \
#     colorlog Mako MarkupSafe greenlet psutil tqdm PyYAML
set -u
T0=$(date +%s)
SCRIPT=${1:?bench script, e.g. search_bench.py}; shift
CALL_S=${CALL_S:-570}
if [ -d .whl ]; then . bench/gpu_env.sh; fi
R=${R:-.gpu/results}; mkdir -p "$R"
echo "host $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), start $(date -u +%T)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
LEFT=$(( CALL_S - ($(date +%s) - T0) ))
timeout --signal=INT --kill-after=20 $(( LEFT + 15 )) \
    python3 "bench/$SCRIPT" "$@" --deadline "$LEFT" --out "$R"
echo "$SCRIPT rc=$? after $(( $(date +%s) - T0 )) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
for f in "$R"/*.md; do [ -e "$f" ] && cut -c1-400 "$f"; done
if [ -n "${OUT:-}" ]; then cp -r "$R"/. "$OUT"/; fi
