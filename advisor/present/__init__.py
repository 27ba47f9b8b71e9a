"""What both front ends say and show, in one place: the wording of core's facts (which input
to give, named as a flag, an answers key or a wizard field), numbers and units as a person
reads them, and the blocks a report is drawn from (verdict lines, tables, charts as data).
No Textual, no rich: the CLI and the wizard each draw these in their own toolkit, so the same
report reads the same in both."""
