"""`rehydrate audit --html FILE`: one self-contained page (no network needed to view it) with, per session, a chart of
the context's size by turn with each compaction marked, and the symptoms that followed it.

Built on Plotly (`pip install 'rehydrate[html]'`), imported only here. Its JavaScript is embedded once in the page.
Everything that comes from a transcript (paths, triggers, times, file names) is cleaned of control, invisible and bidi
characters, then escaped: a transcript is other people's text.
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from rehydrate.audit.text import shown, symptom_lines

MAX_CHARTS = 60  # the sessions with the most symptoms first; the rest are listed in a table

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.05em; margin-top: 2.2em; word-break: break-all; }
.meta { color: #666; } .symptoms { margin: .3em 0 0 1.2em; } .bad { color: #a11; }
table { border-collapse: collapse; font-size: .9em; } td, th { padding: .2em .6em; border-bottom: 1px solid #ddd; }
"""


def _e(value: object) -> str:
    """A field as HTML text: one line, no control, invisible or bidi characters (audit.shown), then escaped."""
    return html.escape(shown(value), quote=True)


def _chart(session: dict[str, Any], n: int) -> str:
    sizes = session["context"]
    turns = list(range(1, len(sizes) + 1))
    mode = "lines" if len(sizes) >= 30 else "lines+markers"
    fig = go.Figure(go.Scatter(x=turns, y=sizes, mode=mode, name="context", line={"width": 2}))
    for c in session["compactions"]:
        x = c["turn"] + 0.5
        before = f"{c['tokens_before']:,}" if c["tokens_before"] is not None else "?"
        after = f"{c['tokens_after']:,}" if c["tokens_after"] is not None else "?"
        fig.add_vline(x=x, line={"color": "#c0392b", "dash": "dash"})
        fig.add_annotation(
            x=x,
            y=1,
            yref="paper",
            text=_e(f"{c['trigger'] or 'compaction'}: {before} → {after}"),
            showarrow=False,
            xanchor="left",
            font={"color": "#c0392b", "size": 11},
        )
    fig.update_layout(
        height=300,
        margin={"l": 60, "r": 20, "t": 20, "b": 40},
        showlegend=False,
        xaxis_title="model turn",
        yaxis_title="context (tokens)",
        template="plotly_white",
        yaxis={"rangemode": "tozero"},
    )
    return str(fig.to_html(include_plotlyjs=False, full_html=False, div_id=f"chart-{n}"))


def _symptoms(c: dict[str, Any]) -> str:
    items = [f"<li{' class=bad' if bad else ''}>{line}</li>" for line, bad in symptom_lines(c, _e, 12)]
    when = _e((c["time"] or "")[:16].replace("T", " "))
    return f"<p>compaction at line {c['line']} {when}</p><ul class=symptoms>{''.join(items)}</ul>"


def render(data: dict[str, Any]) -> str:
    """The page, as one string."""
    ranked = sorted(data["sessions"], key=lambda s: (-len(s["compactions"]), -int(s["score"])))
    charted = [s for s in ranked if s["compactions"]][:MAX_CHARTS]
    rest = [s for s in ranked if s not in charted]
    summary = data["summary"]
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<title>rehydrate audit</title>",
        f"<style>{STYLE}</style>",
        f"<script>{get_plotlyjs()}</script>",
        "</head><body>",
        "<h1>rehydrate audit</h1>",
        f"<p class=meta>{summary['files']} file(s), {summary['sessions']} session(s), "
        f"{summary['compactions']} compaction(s). Each chart is the context's size at each model turn; "
        "a dashed line marks a compaction, with the tokens before and after it.</p>",
    ]
    for n, s in enumerate(charted):
        parts.append(f"<h2>{_e(s['path'])}</h2>")
        parts.append(
            f"<p class=meta>{_e(s['harness'])}, {s['user_turns']} user turns, {s['tool_calls']} tool calls "
            f"({s['tool_errors']} failed), symptom score {s['score']}</p>"
        )
        parts.append(_chart(s, n))
        parts += [_symptoms(c) for c in s["compactions"]]
    if rest:
        parts.append(
            "<h2>Other sessions</h2><table><tr><th>file</th><th>harness</th><th>compactions</th>"
            "<th>tool calls</th></tr>"
        )
        parts += [
            f"<tr><td>{_e(s['path'])}</td><td>{_e(s['harness'])}</td><td>{len(s['compactions'])}</td>"
            f"<td>{s['tool_calls']}</td></tr>"
            for s in rest[:500]
        ]
        parts.append("</table>")
    if data["errors"]:
        parts.append("<h2>Unreadable</h2><ul>")
        parts += [f"<li>{_e(e['path'])}: {_e(e['message'])}</li>" for e in data["errors"]]
        parts.append("</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)
