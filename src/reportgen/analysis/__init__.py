"""ValidatedRun -> ExperimentAnalysis: the statistics of every design."""
