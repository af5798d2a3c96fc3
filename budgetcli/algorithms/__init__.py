"""One module per algorithm or small family; each registers its learners in budgetcli.registry."""
