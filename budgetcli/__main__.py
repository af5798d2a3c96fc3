"""`python -m budgetcli`: the `budgetlearn` command, as the installed script runs it."""

from budgetcli.entry import run

run()
