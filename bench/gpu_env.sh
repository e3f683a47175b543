# Sourced by the GPU scripts: wheels the lent GPU machine lacks, and the environment.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
advisor() { python3 -m advisor "$@"; }
mkdir -p .gpu
