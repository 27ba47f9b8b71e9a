"""The two gates that run before any performance projection: dtype and software."""
