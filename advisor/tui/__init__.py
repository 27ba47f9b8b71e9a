"""The Textual wizard. Imported only by `advisor` with no subcommand, so the headless
commands never pay for Textual at startup."""
