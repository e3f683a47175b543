# The one runner: a bench script (or any command) run whole within one call of a lent GPU
# machine, or here on the CPU. bench/README.md lists the invocations the GPU runs used.
#   bash bench/run_bench.sh SCRIPT.py [ARGS...]     bench/SCRIPT.py (experiments/NAME.py too)
#   bash bench/run_bench.sh -- COMMAND [ARGS...]    any command: python3 -m advisor sweep ...
# The carried wheels are installed first when .whl/ is here (bench/gpu_env.sh, the one shared
# setup step). The kept log (below) starts with the host, its cores and load average, the GPUs
# (name, driver, clocks), torch, triton, python and the command, and ends with the exit code and
# the load at the end; all of it is printed too. A script that takes --out gets --out $R (default .gpu/results), one that takes --deadline gets the seconds left
# so that it ends, results written, within CALL_S seconds of this script's start (default 570:
# a 600 s call less the copy); whatever still runs 15 s past that is stopped with SIGINT (the
# search bench keeps what it measured). Its output is printed and kept in
# $R/<name>_<UTC yyyymmddThhmmssZ>.txt (name: the script's, or NAME=... for a command); the
# .md results it wrote are printed; everything in $R is copied to $OUT when set (the call's return
# folder). Environment prefixes pass through: CUDA_VISIBLE_DEVICES=1 taskset -c 16-31 bash
# bench/run_bench.sh ... pins a run to one GPU and half the cores; ADVISOR_DEVICE_LOCK=FILE
# makes several runs started with & (then `wait`) take turns measuring on one GPU.
# On the CPU (no .whl/): activate the project's virtual environment first.
# .whl/ (git-ignored; carry it): the packages the lent machine lacks, for its Python 3.12:
#   pip download --dest .whl --only-binary=:all: --no-deps --python-version 3.12 \
#     --implementation cp --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
#     optuna sqlalchemy alembic typer rich click shellingham markdown-it-py mdurl pygments \
#     colorlog Mako MarkupSafe greenlet psutil tqdm PyYAML pydantic pydantic-core annotated-types \
#     annotated-doc typing-extensions typing-inspection   (typer >= 0.29 imports pydantic)
set -u
T0=$(date +%s)
FIRST=${1:?a bench script (e.g. search_bench.py) or -- and a command}; shift
CALL_S=${CALL_S:-570}
if [ -d .whl ]; then . bench/gpu_env.sh; fi
R=${R:-.gpu/results}; mkdir -p "$R"
if [ "$FIRST" = -- ]; then NAME=${NAME:-command}; else NAME=$(basename "${FIRST%.py}"); fi
LOG="$R/${NAME}_$(date -u +%Y%m%dT%H%M%SZ).txt"; START=$(mktemp)
host_lines() {  # what the kept log starts with: the host, its load, GPUs, driver, torch, triton
    echo "host $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), start $(date -u +%FT%TZ)"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader \
            | sed 's/^/gpu /'
    else
        echo "gpu none (no nvidia-smi)"
    fi
    python3 - <<'PY'
import importlib.metadata as md
import platform


def version(package):
    try:
        return md.version(package)
    except md.PackageNotFoundError:
        return "not installed"


print(f"torch {version('torch')}, triton {version('triton')}, python {platform.python_version()}")
PY
    echo "commit ${GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo 'unknown (no .git: pass GIT_COMMIT)')}"
    echo "command: ${*}"
}
LEFT=$(( CALL_S - ($(date +%s) - T0) ))
if [ "$FIRST" = -- ]; then
    CMD=("$@")
else
    CMD=(python3 "bench/$FIRST" "$@")
    grep -q -- '"--deadline"' "bench/$FIRST" && CMD+=(--deadline "$LEFT")
    grep -q -- '"--out"' "bench/$FIRST" && CMD+=(--out "$R")
fi
host_lines "${CMD[@]}" 2>&1 | tee "$LOG"
timeout --signal=INT --kill-after=20 $(( LEFT + 15 )) "${CMD[@]}" 2>&1 | tee -a "$LOG"
RC=${PIPESTATUS[0]}
echo "$NAME rc=$RC after $(( $(date +%s) - T0 )) s, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$LOG"
for f in "$R"/*.md; do [ "$f" -nt "$START" ] && cut -c1-400 "$f"; done; rm -f "$START"
if [ -n "${OUT:-}" ]; then cp -r "$R"/. "$OUT"/; fi
exit $RC
