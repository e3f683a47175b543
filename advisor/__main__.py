"""`python -m advisor` is the `advisor` command."""

from advisor.cli.main import main

main()
