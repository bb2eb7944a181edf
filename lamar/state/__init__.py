"""The folded state: what the engine folds from the log, apart from the engine that fronts it."""
