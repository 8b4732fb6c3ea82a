"""The search page at ``/``: a Jinja2 template and the hand-written CSS and JavaScript of
``rlsi/serve/assets``, served as they are.

The page loads its own script and stylesheet from the server and asks the JSON API; its
Content-Security-Policy (:data:`PAGE_CSP`) allows nothing else (no inline script, no other origin). What
it knows at load time (the index's size, whether it has topics, the default α) is inline JSON that the
script reads, escaped so that no string can end the element (:func:`rlsi.explorer.page.script_json`).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

__all__ = ["render_page", "asset", "ASSETS", "PAGE_CSP"]

#: The files ``/static/NAME`` serves, and their media types.
ASSETS = {"search.js": "text/javascript; charset=utf-8", "search.css": "text/css; charset=utf-8",
          "favicon.svg": "image/svg+xml"}
#: What the page may load: its own script, style and API answers, nothing else.
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
            "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


@lru_cache(maxsize=None)
def asset(name):
    """The text of a file of ``rlsi/serve/assets``."""
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def _template():
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(asset("search.html.j2"))


def render_page(title, config, *, max_query):
    """The HTML of the search page; ``config`` is what the script starts from (JSON-ready)."""
    from markupsafe import Markup

    from .. import __version__
    from ..explorer.page import script_json

    return _template().render(title=title, version=__version__, config=Markup(script_json(config)),
                              max_query=max_query)
