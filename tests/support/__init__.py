"""What tests of several folders share (pytest's `pythonpath` puts `tests` on the path):
`support.backends` (the SQLite/PostgreSQL parametrization), `support.stores` (the database
fixtures the store's and the reliability tests use), `support.records` (hand-built records),
`support.seed` (the seeded databases) and `support.sweeps` (the real CLI in a subprocess, the
test workloads' paths)."""
