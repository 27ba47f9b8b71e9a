"""Everything that touches disk, the network or this box: files, stores, pulls, detection."""
