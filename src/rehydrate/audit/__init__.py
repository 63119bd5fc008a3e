"""`rehydrate audit`: every compaction in a set of transcripts, what followed it that suggests lost context, and
what stood before it with whether the harness's summary and rehydrate's capture kept it.

For each compaction: the context's size before and after it, and the symptoms in the calls after it (up to the next
compaction) compared with the calls before it: files edited again that had been edited before, identical tool calls
repeated, tool errors on each side, and how many model turns passed before the first edit. Sessions are ranked by
these symptoms. Then its loss report: the facts that stood just before it (the task list, edited files, failed
commands, the last requests, ids and numbers) and whether the summary the harness wrote and the capture rehydrate's
PreCompact hook makes each kept them; and the format drift: what rehydrate's transcript readers met and do not know,
by harness version.

discover.py finds the files, symptoms.py reads a session's compactions, loss.py reads each compaction's facts and
judges them, drift.py tallies what the readers did not know, scan.py builds the report's data, text.py renders it for
a person and html_report.py as a page (Plotly, an optional extra). Nothing here prints.
"""

from __future__ import annotations

from rehydrate.audit.discover import discover
from rehydrate.audit.scan import report
from rehydrate.audit.symptoms import score, symptoms
from rehydrate.audit.text import render, shown

__all__ = ["discover", "render", "report", "score", "shown", "symptoms"]
