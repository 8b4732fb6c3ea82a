"""One self-contained HTML file: a Jinja2 template, the hand-written CSS and JavaScript of
``rlsi/explorer/assets`` and the page's data as inline JSON.

The file loads nothing: no CDN, no ``fetch`` (its Content-Security-Policy forbids every request), so it
opens from disk, offline, for as long as browsers read HTML. Data and text from models and corpora reach
the page only as JSON, which the script reads and sets as text (never as HTML); the JSON is escaped so
that no string in it can end the script element. The same data give the same bytes (no dates, no
random ids), so a page can be compared, diffed and cached.

:class:`Page` holds the HTML string (what a web server returns) and writes it whole or not at all.
"""

from __future__ import annotations

import html as _html
import json
from functools import lru_cache
from importlib import resources

from ..io.atomic import atomic_file

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(data):
    """``data`` as compact JSON that is safe inside ``<script type="application/json">`` (deterministic:
    keys in insertion order, floats as Python writes them, no NaN)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escape in _ESCAPES.items():
        text = text.replace(char, escape)
    return text


@lru_cache(maxsize=None)
def asset(name):
    """The text of a file of ``rlsi/explorer/assets``."""
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def _environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.FunctionLoader(lambda name: asset(name)), autoescape=True,
                              keep_trailing_newline=True, undefined=jinja2.StrictUndefined)


def render(template, page_js, data, title, **context):
    """The HTML of ``template`` (a file of the assets) with the shared CSS and JS, ``page_js`` and ``data``."""
    from markupsafe import Markup

    from .. import __version__

    return _environment().get_template(template).render(
        title=title, version=__version__, css=Markup(asset("common.css")), common_js=Markup(asset("common.js")),
        page_js=Markup(asset(page_js)), data=Markup(script_json(data)), **context)


class Page:
    """A built page: ``html`` (the whole file as a string), ``data`` (what it shows, JSON-ready),
    ``save(path)``, and ``_repr_html_`` so that Jupyter shows it inline (in an isolated frame)."""

    def __init__(self, html, data):
        self.html = html
        self.data = data

    def save(self, path):
        """Write the page to ``path`` (whole or not at all); returns the path."""
        with atomic_file(path, "wb") as handle:
            handle.write(self.to_bytes())
        return path

    def to_bytes(self):
        """The file's bytes (UTF-8; a lone surrogate from a damaged text becomes ``?``)."""
        return self.html.encode("utf-8", errors="replace")

    @property
    def size(self):
        """Bytes of the file."""
        return len(self.to_bytes())

    def _repr_html_(self):
        return (f'<iframe srcdoc="{_html.escape(self.html, quote=True)}" style="width:100%;height:900px;'
                f'border:1px solid #d6dbe3" sandbox="allow-scripts" title="rlsi explorer"></iframe>')

    def __repr__(self):
        return f"<{type(self).__name__}: {self.size:,} bytes of HTML; .save(path) writes it>"
