"""advisor's benchmarks: scripts run as ``python bench/NAME.py`` and modules importable as
``bench.NAME`` (the repository root on ``sys.path``). What each measures: bench/README.md."""
