"""A site's scores as text: per metric its mean, its 5th percentile and its worst pages."""

from __future__ import annotations

from .metrics import LOWER_IS_BETTER
from .site import SITE_METRICS, SiteResult
from .targets import TARGETS


def format_report(result: SiteResult, worst: int = 3) -> str:
    label = "generic fallback gold" if result.gold.generic else f"gold: {result.gold.name}"
    lines = [f"pages: {len(result.pages)}   ({label})", _row("metric", "mean", "p5", "target")]
    for metric in SITE_METRICS:
        agg = result.metrics[metric]
        sign = "<=" if metric in LOWER_IS_BETTER else ">="
        ok = _meets(metric, agg.mean, TARGETS[metric])
        target = f"{sign} {TARGETS[metric]:g}{'' if ok else '  MISSED'}"
        lines.append(_row(metric, f"{agg.mean:.4f}", f"{agg.tail:.4f}", target))
    lines.append("worst pages:")
    for metric in SITE_METRICS:
        if _meets(metric, result.metrics[metric].mean, TARGETS[metric]):
            continue
        for url, value in result.worst(metric, worst):
            lines.append(f"  {metric:<16} {value:.3f}  {url}")
    return "\n".join(lines)


def _meets(metric: str, value: float, target: float) -> bool:
    return value <= target if metric in LOWER_IS_BETTER else value >= target


def _row(*cells: str) -> str:
    return f"  {cells[0]:<16} {cells[1]:>8} {cells[2]:>8}  {cells[3]}"
