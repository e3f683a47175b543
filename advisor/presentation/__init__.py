"""What the surfaces show, made from the one answer: figures and warnings in words, chart rows,
the report, the regression gate. Read by the CLI and the dashboard; nothing below them (the
search, the recommendation, the store, the child) imports it.

report   the shareable report of one workload on one device (`advisor report`)
charts   the rows the report and the dashboard plot
check    the regression gate (`advisor check`)
noise    when the host or the intervals make an answer unsafe, in words

`advisor.units` (figures in human units) is not here: `advisor.serving`, which the search, the
recommendation and the child import, prints a pruned trial's bound with it.
"""
