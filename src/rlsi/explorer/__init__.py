"""The topic explorer: a self-contained HTML page of a topic model (:func:`explore`), of a topic
timeline (:func:`tracking_page`) and of a choice of K and λ₁ (:func:`selection_page`).

Modules: :mod:`~rlsi.explorer.models` (what each model kind records), :mod:`~rlsi.explorer.terms` (signed
top terms, exclusivity, relevance, term lookup), :mod:`~rlsi.explorer.layout` (topic distances and
classical MDS), :mod:`~rlsi.explorer.documents` (shares, the documents at both ends, the document map),
:mod:`~rlsi.explorer.data` (the page's data), :mod:`~rlsi.explorer.tracking` (the tracking page's data),
:mod:`~rlsi.explorer.selection` (the selection page),
:mod:`~rlsi.explorer.page` (templates, assets, one HTML file) and :mod:`~rlsi.explorer.build`.
"""

from .build import explore, tracking_page
from .page import Page
from .selection import selection_page

__all__ = ["explore", "tracking_page", "selection_page", "Page"]
