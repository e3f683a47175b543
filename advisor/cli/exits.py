"""The exit codes of every `advisor` command, in one table (`advisor --help` prints it)."""

from __future__ import annotations

OK = 0  # the command did what was asked
FAILURE = 1  # it ran, but failed: no config passed, a trial failed, a doctor check failed
BAD_INPUT = 2  # a user mistake (bad file, flag or value, unreachable database); nothing written
SLOWER = 3  # `advisor check`: the recommended config got slower than the baseline allows
CANNOT_TELL = 4  # `advisor check`: noise or overlapping intervals: neither a pass nor a failure
INTERRUPTED = 130  # Ctrl-C: finished trials are kept, `--resume` continues
TERMINATED = 143  # SIGTERM: the same as Ctrl-C, with the conventional code

EPILOG = (
    f"Exit codes: {OK} ok; {FAILURE} failure (no config passed, a trial or doctor check failed); "
    f"{BAD_INPUT} bad input (one line on stderr, nothing written); {SLOWER} `advisor check`: "
    f"slower than the baseline by more than the threshold; {CANNOT_TELL} `advisor check`: cannot "
    f"tell (noisy timings or overlapping intervals; not a pass); {INTERRUPTED} interrupted; "
    f"{TERMINATED} terminated (SIGTERM)."
)
