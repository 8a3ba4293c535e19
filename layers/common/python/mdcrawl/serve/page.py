"""The web page as this server sends it: ``static/index.html`` with the number fields'
hints (placeholder = the default a job gets here, max = this server's cap, min = the
option's lower bound) taken from the options model and this server's limits, so the page
never advertises a number the server would refuse or not use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..options import CrawlOptionsModel, OptionLimits, bounds

STATIC_DIR = Path(__file__).parent / "static"
HINTS_MARKER = "<!--option-hints-->"
# The form's number fields: each input's id is the option's name.
NUMBER_FIELDS = ("max_pages", "max_depth", "budget_s", "concurrency")


def option_hints(limits: OptionLimits) -> dict[str, dict[str, Any]]:
    """option -> {"placeholder": default here, "min": lower bound, "max": cap here}."""
    hints = {}
    for name in NUMBER_FIELDS:
        info = CrawlOptionsModel.model_fields[name]
        found = bounds(info)
        hint: dict[str, Any] = {"placeholder": _plain(limits.default(name))}
        if "ge" in found:
            hint["min"] = _plain(found["ge"])
        cap = limits.caps.get(name, found.get("le"))
        if cap is not None:
            hint["max"] = _plain(cap)
        hints[name] = hint
    return hints


def render_page(limits: OptionLimits) -> bytes:
    """index.html with the hints in a JSON script block that app.js applies."""
    # "</" inside a script block would end it early: JSON allows "<\/" for "</".
    payload = json.dumps(option_hints(limits), sort_keys=True).replace("</", "<\\/")
    block = f'<script id="option-hints" type="application/json">{payload}</script>'
    page = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    if HINTS_MARKER not in page:
        raise RuntimeError(f"index.html lost its {HINTS_MARKER} marker")
    return page.replace(HINTS_MARKER, block, 1).encode("utf-8")


def _plain(value: float) -> int | float:
    """300.0 -> 300: a placeholder reads as the number a person would type."""
    return int(value) if float(value).is_integer() else value
