"""The outcome of :func:`rlsi.select`: the table (one row per point of the path), the recommended point and
the rule that chose it, printable as Markdown, as JSON and as a PNG, and saved whole or not at all."""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["COLUMNS", "SelectionResult"]

#: (key of a row, Markdown header, format) of the table's columns, in order.
COLUMNS = (("n_components", "K", "{}"), ("lambda1", "λ1", "{:g}"), ("completion", "completion", "{:.4f}"),
           ("completion_se", "± SE", "{:.4f}"), ("npmi", "NPMI", "{:.3f}"), ("stability", "stability", "{:.3f}"),
           ("terms_per_topic", "terms/topic", "{:.1f}"), ("empty_topics", "empty", "{}"),
           ("n_iter", "iterations", "{}"), ("seconds", "seconds", "{:.1f}"), ("started_from", "from", "{}"))

#: The files :meth:`SelectionResult.save` writes.
FILES = ("selection.md", "selection.json", "selection.png")


@dataclass
class SelectionResult:
    """``rows``: one dict per point of the path (keys of :data:`COLUMNS`; ``started_from`` is the row the
    fit started from, None for the first); ``recommended``: the index of the recommended row; ``rule``: the
    rule that chose it, in words; ``settings``: how the path was run; ``seconds``: the wall clock of the
    whole selection (both seeds' paths and the scores)."""

    rows: list
    recommended: int
    rule: str
    settings: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def best_params(self):
        """``{"n_components": K, "lambda1": λ₁}`` of the recommended point (``BatchRLSI(**best_params)``)."""
        row = self.rows[self.recommended]
        return {"n_components": row["n_components"], "lambda1": row["lambda1"]}

    def to_markdown(self):
        """The table as Markdown, the recommended row in bold, followed by the rule."""
        lines = ["| " + " | ".join(h for _, h, _ in COLUMNS) + " |",
                 "|" + "|".join("---:" for _ in COLUMNS) + "|"]
        for i, row in enumerate(self.rows):
            cells = [_cell(row[key], fmt) for key, _, fmt in COLUMNS]
            if i == self.recommended:
                cells = [f"**{c}**" for c in cells]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + f"\n\nRecommended: {self.rule}.\n"

    def __str__(self):
        return self.to_markdown()

    def to_dict(self):
        """A JSON-ready dict: ``rows``, ``recommended``, ``rule``, ``settings``, ``seconds`` (NaN as None)."""
        return {"rows": [{k: _plain(v) for k, v in row.items()} for row in self.rows],
                "recommended": self.recommended, "rule": self.rule, "best_params": self.best_params,
                "settings": {k: _plain(v) for k, v in self.settings.items()}, "seconds": self.seconds}

    def plot(self, path):
        """Write the PNG of the table (:func:`rlsi.selection.plot.plot_selection`); returns ``path``."""
        from .plot import plot_selection  # matplotlib takes most of a second to import: only plotting pays

        return plot_selection(self, path)

    def save(self, out_dir):
        """Write ``selection.md``, ``selection.json`` and ``selection.png`` into ``out_dir`` (created if
        missing), each whole or not at all (:mod:`rlsi.io.atomic`); returns their paths."""
        from ..io.atomic import atomic_file, write_text

        out = Path(out_dir)
        paths = [out / name for name in FILES]
        png = io.BytesIO()  # drawn first: a plotting error leaves no file at all
        self.plot(png)
        write_text(paths[0], "# Choosing K and λ1\n\n" + self.to_markdown())
        write_text(paths[1], json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n")
        with atomic_file(paths[2], "wb") as handle:
            handle.write(png.getvalue())
        return paths


def _cell(value, fmt):
    if value is None:
        return "—"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return fmt.format(value)


def _plain(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):  # a numpy scalar
        return _plain(value.item())
    return value
