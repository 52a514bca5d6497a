"""The report's charts as inline SVG text: the same numbers always give the same bytes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#1f5fa8", "#b3541e", "#2e7d32", "#6b3fa0", "#a33a1a", "#0b6e4f", "#8a6d00", "#555d66")
"""Line colours of the progress chart, in entry order (then round again)."""


@dataclass(frozen=True)
class Interval:
    """One entry's Elo and its interval, as the error-bar chart draws it."""

    name: str
    elo: float
    low: float
    high: float


def _n(x: float) -> str:
    """A coordinate with one decimal at most: ``12``, ``12.5``; never ``-0``."""
    text = f"{x:.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _whole(x: float) -> str:
    """A rating as a whole number; never ``-0``."""
    text = f"{x:.0f}"
    return "0" if text == "-0" else text


def _ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Round numbers from ``low`` to ``high``: steps of 1, 2 or 5 times a power of ten."""
    span = max(high - low, 1e-9)
    raw = span / most
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    out = []
    x = first
    while x <= high + step * 1e-9:
        out.append(round(x, 9))
        x += step
    return out


def _range(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    pad = max((high - low) * 0.08, 10.0)
    return low - pad, high + pad


def elo_error_bars(rows: Sequence[Interval], *, level: float = 0.95) -> str:
    """Each entry's Elo as a dot on its ``level`` interval, one row per entry, best first."""
    if not rows:
        return ""
    label_w, value_w, plot_w, row_h, top, bottom = 170, 150, 460, 28, 14, 34
    width = label_w + plot_w + value_w
    height = top + row_h * len(rows) + bottom
    low, high = _range([v for r in rows for v in (r.low, r.high, r.elo)])

    def x(elo: float) -> float:
        return label_w + (elo - low) / (high - low) * plot_w

    percent = f"{level * 100:g}%"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart elo-chart" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="Elo with {percent} intervals">',
        f"<title>Elo with {percent} intervals</title>",
    ]
    axis_y = top + row_h * len(rows) + 4
    for t in _ticks(low, high):
        tx = _n(x(t))
        out.append(
            f'<line x1="{tx}" y1="{top - 6}" x2="{tx}" y2="{axis_y}" stroke="#e3e7eb" '
            'stroke-width="1"/>'
        )
        out.append(
            f'<text x="{tx}" y="{axis_y + 16}" font-size="11" text-anchor="middle" '
            f'fill="#5c6670">{_n(t)}</text>'
        )
    for i, r in enumerate(rows):
        cy = top + row_h * i + row_h / 2
        y = _n(cy)
        lo, hi, mid = _n(x(r.low)), _n(x(r.high)), _n(x(r.elo))
        out.append(f'<g class="elo-row" data-entry="{escape(r.name)}">')
        out.append(
            f'<text x="{label_w - 10}" y="{_n(cy + 4)}" font-size="13" text-anchor="end" '
            f'fill="#1d232a">{escape(r.name)}</text>'
        )
        out.append(
            f'<line x1="{lo}" y1="{y}" x2="{hi}" y2="{y}" stroke="#1f5fa8" stroke-width="2"/>'
        )
        for end in (lo, hi):
            out.append(
                f'<line x1="{end}" y1="{_n(cy - 6)}" x2="{end}" y2="{_n(cy + 6)}" '
                'stroke="#1f5fa8" stroke-width="2"/>'
            )
        out.append(f'<circle cx="{mid}" cy="{y}" r="4.5" fill="#1d232a"/>')
        out.append(
            f'<text x="{label_w + plot_w + 12}" y="{_n(cy + 4)}" font-size="12" fill="#1d232a">'
            f"{_whole(r.elo)} [{_whole(r.low)}, {_whole(r.high)}]</text>"
        )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def rating_progress(
    rounds: Sequence[int], series: Sequence[tuple[str, Sequence[float | None]]]
) -> str:
    """Each entry's Elo after each round, one line per entry (a gap where it had no game)."""
    points = [v for _, values in series for v in values if v is not None]
    if not rounds or not points:
        return ""
    left, right, top, bottom, plot_w, plot_h = 56, 170, 14, 40, 560, 260
    width, height = left + plot_w + right, top + plot_h + bottom
    low, high = _range(points)
    first, last = rounds[0], rounds[-1]

    def x(r: int) -> float:
        return left + (plot_w / 2 if last == first else (r - first) / (last - first) * plot_w)

    def y(elo: float) -> float:
        return top + (high - elo) / (high - low) * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart progress-chart" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        'aria-label="Elo after each round">',
        "<title>Elo after each round</title>",
    ]
    for t in _ticks(low, high, 6):
        ty = _n(y(t))
        out.append(
            f'<line x1="{left}" y1="{ty}" x2="{left + plot_w}" y2="{ty}" stroke="#e3e7eb" '
            'stroke-width="1"/>'
        )
        out.append(
            f'<text x="{left - 8}" y="{_n(y(t) + 4)}" font-size="11" text-anchor="end" '
            f'fill="#5c6670">{_n(t)}</text>'
        )
    step = max(1, math.ceil(len(rounds) / 12))
    for r in rounds[::step]:
        out.append(
            f'<text x="{_n(x(r))}" y="{top + plot_h + 18}" font-size="11" text-anchor="middle" '
            f'fill="#5c6670">{r}</text>'
        )
    out.append(
        f'<text x="{_n(left + plot_w / 2)}" y="{top + plot_h + 34}" font-size="11" '
        'text-anchor="middle" fill="#5c6670">round</text>'
    )
    for i, (name, values) in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        out.append(f'<g class="progress-line" data-entry="{escape(name)}">')
        run: list[str] = []
        runs: list[list[str]] = []
        for r, v in zip(rounds, values, strict=True):
            if v is None:
                if run:
                    runs.append(run)
                run = []
                continue
            run.append(f"{_n(x(r))},{_n(y(v))}")
            out.append(f'<circle cx="{_n(x(r))}" cy="{_n(y(v))}" r="2.5" fill="{colour}"/>')
        if run:
            runs.append(run)
        for part in runs:
            out.append(
                f'<polyline points="{" ".join(part)}" fill="none" stroke="{colour}" '
                'stroke-width="2"/>'
            )
        ly = top + 8 + 18 * i
        out.append(
            f'<line x1="{left + plot_w + 14}" y1="{ly}" x2="{left + plot_w + 34}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="3"/>'
        )
        out.append(
            f'<text x="{left + plot_w + 40}" y="{ly + 4}" font-size="12" fill="#1d232a">'
            f"{escape(name)}</text>"
        )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)
