"""The headless renderer: what a command shows, built once as blocks (headings, verdict
lines, tables with units, charts) and drawn as text fitted to the terminal, Markdown,
HTML or SVG by `emit`. The command modules only gather input and pick the blocks."""
