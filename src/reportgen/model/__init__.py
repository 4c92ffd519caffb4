"""The records handed from stage to stage: configuration, contract, calls, findings, artifacts."""
