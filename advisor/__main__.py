"""`python -m advisor` is the `advisor` command."""

from advisor.cli.app import main

main()
