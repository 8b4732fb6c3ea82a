"""Pickle-free persistence: one directory format for every model, vectorizer and index.

See :mod:`rlsi.io.store` for the format. Public API: :func:`save`, :func:`load`, :func:`register`.
"""

from .store import FORMAT_VERSION, Bundle, load, register, save  # noqa: F401
