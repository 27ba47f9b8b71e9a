"""Money, time and power: cost, the verdict, GPU-count configurations and pipeline balance."""
