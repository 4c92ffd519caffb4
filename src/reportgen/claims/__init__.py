"""ExperimentAnalysis + findings -> claims, each with its typed result and evidence."""
