"""The selection page: a :class:`rlsi.selection.SelectionResult` (``rlsi select``) as one self-contained HTML
file, :func:`selection_page`.

It shows what ``selection.md`` and ``selection.png`` show, in the explorer's style: the rule that chose the
recommended point, in words; the four panels of the plot (completion score with its standard error, NPMI
coherence, stability across the two seeds with its threshold, terms per topic; one line per λ₁ over K) drawn as
inline SVG, the recommended point marked; and the table, the recommended row highlighted. Clicking a row or a
point marks that point on every panel. Numbers reach the page as JSON (:mod:`rlsi.explorer.page`).
"""

from __future__ import annotations

import math

from ..selection.result import COLUMNS
from .page import Page, render

__all__ = ["selection_data", "selection_page"]


def _plain(value):
    if value is None or isinstance(value, (bool, str)):
        return value
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def selection_data(result):
    """The page's data of ``result``: the columns (key, header), the rows (their values, NaN as null), the
    panels (column, label), the recommended row's index, the rule, and the stability threshold."""
    from ..selection.plot import PANELS  # with matplotlib: imported when a page is built, not with the explorer

    keys = [key for key, _, _ in COLUMNS]
    return {"format": "rlsi-selection",
            "columns": [[key, header] for key, header, _ in COLUMNS],
            "rows": [[_plain(row.get(key)) for key in keys] for row in result.rows],
            "panels": [[column, label] for column, label in PANELS],
            "recommended": int(result.recommended), "rule": str(result.rule),
            "best": {k: _plain(v) for k, v in result.best_params.items()},
            "stability_threshold": _plain(result.settings.get("stability_threshold")),
            "settings": {str(k): _plain(v) for k, v in result.settings.items()
                         if _plain(v) is None or isinstance(_plain(v), (bool, int, float, str))},
            "seconds": _plain(result.seconds)}


def selection_page(result, *, title="Choosing K and λ1"):
    """An HTML page of a :class:`rlsi.selection.SelectionResult` (the module docstring); returns a
    :class:`~rlsi.explorer.page.Page` (``.save(path)``, shown inline in Jupyter)."""
    data = selection_data(result)
    return Page(render("selection.html.j2", "selection.js", data, title), data)
