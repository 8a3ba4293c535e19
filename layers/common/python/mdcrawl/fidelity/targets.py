"""The fidelity targets of issue 8, on a site's mean (lower is better for chrome leak and
raw-HTML lines). ``P5_RECALL`` is the target for the 5th-percentile page's word recall."""

from __future__ import annotations

TARGETS = {
    "recall": 0.97,
    "precision": 0.95,
    "chrome_leak": 0.01,
    "code_verbatim": 0.97,
    "code_language": 0.95,
    "code_unnumbered": 0.99,
    "headings": 0.95,
    "table_cells": 0.90,
    "links": 0.95,
    "order": 0.95,
    "raw_html": 0.005,
    "titles": 0.95,
}
P5_RECALL = 0.90
