"""The headless drawing: the blocks `advisor.present` builds for a command (headings, verdict
lines, tables with units, charts as data), drawn by `emit` as text fitted to the terminal,
HTML or SVG (Markdown is `advisor.present.markdown`, the wizard's too). The command modules
only gather input and pick the blocks."""
