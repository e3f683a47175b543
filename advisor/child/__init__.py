"""The child side: everything that runs in a trial process (or a serving process) and imports
torch. `prepare` turns a config into what runs; `trial` is a trial process's entry point
(``python -m advisor.child.main SPEC RESULT``), with `replay` for traffic and shape strategies,
`measure` for timing, `confirm` for the leaders' paired re-measurement and the warm-start
artifact, `serve` for what `advisor.apply` returns, `capture` for what a serving process records.
The parent side (`advisor.search`) only starts these as processes; nothing here imports
`advisor.search`, `advisor.db` or `advisor.cli`."""
