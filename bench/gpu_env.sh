# The one shared setup step of a lent GPU machine, sourced by bench/run_bench.sh when .whl/ is
# here: the carried wheels of the packages the machine lacks (skipped where they are installed,
# as on the development machine), and the environment.
if ! python3 -c "import optuna, sqlalchemy, alembic, typer" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
fi
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
