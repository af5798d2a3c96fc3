"""budgetlearn: budgeted online kernel learning."""

__version__ = "0.1.0"
