"""Input models: workload, model shapes, presets, catalog schema, stack, probe records, answers."""
