"""One-off experiments whose findings are written up in docs/: kept runnable, not maintained
as the core benches are (bench/README.md)."""
