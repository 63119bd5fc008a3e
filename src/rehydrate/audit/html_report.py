"""`rehydrate audit --html FILE`: one self-contained page (no network needed to view it) with, per session, a chart of
the context's size by turn with each compaction marked, the symptoms that followed it and a table of what stood
before it and what the harness's summary and rehydrate's capture kept; at the top, those totals as a chart, and the
format drift.

Built on Plotly (`pip install 'rehydrate[html]'`), imported only here. Its JavaScript is embedded once in the page.
Everything that comes from a transcript (paths, triggers, times, file names) is cleaned of control, invisible and bidi
characters, then escaped: a transcript is other people's text.
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from rehydrate.audit.drift import line
from rehydrate.audit.text import FACT_NAMES, loss_rows, lost_by_both, percent, shown, symptom_lines

MAX_CHARTS = 60  # the sessions with the most symptoms first; the rest are listed in a table

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.05em; margin-top: 2.2em; word-break: break-all; }
.meta { color: #666; } .symptoms { margin: .3em 0 0 1.2em; } .bad { color: #a11; }
table { border-collapse: collapse; font-size: .9em; } td, th { padding: .2em .6em; border-bottom: 1px solid #ddd; }
table.loss { margin: .4em 0 0 1.2em; } table.loss td.n { text-align: right; } .lost { margin: .2em 0 0 1.2em; }
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


def _loss(c: dict[str, Any]) -> str:
    """A compaction's loss report: a small table by kind of fact, then what neither the summary nor the capture
    kept."""
    if "loss" not in c:
        return ""
    loss = c["loss"]
    if loss is None:
        return "<p class=meta>what stood before it: not read (the file changed or went away)</p>"
    rows = loss_rows(loss["totals"])
    if not rows:
        return "<p class=meta>what stood before it: no task, edit, failed command, request or number found</p>"
    kept = "the summary keeps" if loss["summary"] is not None else "no summary in the transcript"
    parts = [
        f"<table class=loss><tr><th>what stood before it</th><th>facts</th><th>{kept}</th>"
        "<th>the capture carries</th></tr>"
    ]
    parts += [
        f"<tr><td>{_e(name)}</td><td class=n>{n}</td><td class=n>{k}</td><td class=n>{carried}</td></tr>"
        for name, n, k, carried in rows
    ]
    parts.append("</table>")
    lost = lost_by_both(loss, 5)
    if lost:
        items = "".join(f"<li>{_e(FACT_NAMES[f['kind']])}: <code>{_e(f['text'])}</code></li>" for f in lost)
        parts.append(f"<p class=lost>lost by both:</p><ul class=lost>{items}</ul>")
    return "".join(parts)


def _totals(summary: dict[str, Any]) -> str:
    """The loss totals (a chart by kind, a table by harness) and the format drift, for the top of the page."""
    parts = []
    t = summary.get("loss")
    if t is not None and t["facts"]:
        rows = loss_rows(t)
        names = [name for name, *_ in rows]
        fig = go.Figure(
            [
                go.Bar(name="facts", x=names, y=[r[1] for r in rows], marker_color="#7f8c8d"),
                go.Bar(name="kept by the summary", x=names, y=[r[2] for r in rows], marker_color="#c0392b"),
                go.Bar(name="carried by the capture", x=names, y=[r[3] for r in rows], marker_color="#2980b9"),
            ]
        )
        fig.update_layout(
            barmode="group", height=280, margin={"l": 60, "r": 20, "t": 20, "b": 40}, template="plotly_white"
        )
        parts.append(
            f"<h2>What stood at a compaction, and what was kept</h2><p class=meta>{t['facts']} facts; the harness's "
            f"summary kept {t['kept_by_summary']} ({percent(t['kept_by_summary'], t['facts'])}), rehydrate's "
            f"capture carries {t['carried_by_capture']} ({percent(t['carried_by_capture'], t['facts'])}).</p>"
        )
        parts.append(str(fig.to_html(include_plotlyjs=False, full_html=False, div_id="chart-loss")))
        parts.append(
            "<table><tr><th>harness</th><th>facts</th><th>kept by the summary</th><th>carried by the capture</th></tr>"
        )
        parts += [
            f"<tr><td>{_e(h)}</td><td>{v['facts']}</td><td>{v['kept_by_summary']} "
            f"({percent(v['kept_by_summary'], v['facts'])})</td><td>{v['carried_by_capture']} "
            f"({percent(v['carried_by_capture'], v['facts'])})</td></tr>"
            for h, v in t["by_harness"].items()
        ]
        parts.append("</table>")
    versions = summary.get("drift")
    if versions is not None:
        drifted = [v for v in versions if v["unknown"]]
        parts.append("<h2>Format drift</h2>")
        if drifted:
            parts.append("<p class=meta>What rehydrate's transcript readers do not know, by harness version.</p><ul>")
            parts += [f"<li>{_e(line(v, shown, 20))}</li>" for v in drifted]
            parts.append("</ul>")
        parts.append(
            f"<p class=meta>Nothing unknown in {'the other ' if drifted else ''}{len(versions) - len(drifted)} "
            "harness version(s).</p>"
        )
    return "".join(parts)


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
        _totals(summary),
    ]
    for n, s in enumerate(charted):
        parts.append(f"<h2>{_e(s['path'])}</h2>")
        parts.append(
            f"<p class=meta>{_e(s['harness'])}, {s['user_turns']} user turns, {s['tool_calls']} tool calls "
            f"({s['tool_errors']} failed), symptom score {s['score']}</p>"
        )
        parts.append(_chart(s, n))
        parts += [_symptoms(c) + _loss(c) for c in s["compactions"]]
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
