"""A ready searcher from a model directory: :func:`open_searcher` (what ``rlsi search`` and ``rlsi index`` run).

::

    from rlsi.retrieval import open_searcher
    searcher = open_searcher("model_dir", corpus="corpus.jsonl.gz", save_index=True)  # build, keep
    searcher = open_searcher("model_dir")                                               # the saved index
    searcher.search("boundary layer transition", k=10)

A model directory (``rlsi fit``, :func:`rlsi.io.save`) holds ``model`` and ``vectorizer`` and, once built,
``index``. The policy:

* ``matrix=DIR`` (a matrix directory of ``rlsi synth`` / ``rlsi ingest``): a new index of its documents,
  built block by block in float32 (:meth:`~rlsi.retrieval.Searcher.from_matrix`); an index already in the
  model directory is not even read.
* ``corpus=`` (a corpus file or folder, or a :class:`~rlsi.text.Corpus`): a new index of its documents.
* a live index (``rlsi index --live`` / ``--add``, :mod:`rlsi.retrieval.live`): opened at its last
  commit; it takes documents through ``rlsi index``, never a corpus here.
* neither: the saved index, memory-mapped (a large index costs page cache, not private memory), with the
  directory's model and vectorizer attached; ``term_model`` and ``folding``, when given, must be the
  index's own (a saved index cannot change them).

``save_index=True`` writes a new index into the model directory. A new index takes ``term_model`` (default
``"bm25"``), ``folding`` (:data:`DEFAULT_FOLDING`) and, for the group models, each document's class from
the corpus field ``label_field`` (default: the class the model predicts for it; §7.3 of the GRLSI paper).
``alpha`` overrides the index's weight of the topic score (a new index: 0.5, or 0 without a model).
"""

from __future__ import annotations

import logging
import math
import os

import numpy as np

from ..errors import RLSIError
from .searcher import TERM_MODELS, Searcher

__all__ = ["open_searcher", "FOLDINGS", "DEFAULT_FOLDING", "folding_lambda2", "folding_name"]

log = logging.getLogger(__name__)

#: Folding-in of documents and queries by name -> :class:`~rlsi.retrieval.Searcher`'s ``fold_lambda2``:
#: ``"model"``, the model's own ``transform`` (for RLSI ``argmin_v ‖q − Uv‖² + λ₂‖v‖²``, the topic vector
#: of TOIS §7, or its lasso when V has the ℓ1 penalty); ``"projection"``, ``v = Uᵀq`` (the ridge's λ → ∞
#: limit up to scale, :class:`~rlsi.retrieval.topic.RidgeFolding`).
FOLDINGS = {"model": None, "projection": math.inf}
#: The folding of a new index, the same for ``Searcher()`` (``fold_lambda2=None``), :func:`open_searcher`
#: and ``rlsi search``: the model's own, as TOIS §7 defines the topic matching score.
DEFAULT_FOLDING = "model"
#: Default term matching model of a new index.
DEFAULT_TERM_MODEL = "bm25"
#: Weight of the topic score of a new index with a topic model (:class:`~rlsi.retrieval.Searcher`'s default).
NEW_INDEX_ALPHA = 0.5
#: Corpus fields joined as the document text by default.
DEFAULT_TEXT_FIELDS = ("title", "text")


def folding_lambda2(folding):
    """``fold_lambda2`` of a folding name of :data:`FOLDINGS`."""
    if folding not in FOLDINGS:
        raise RLSIError(f"folding={folding!r}: choose one of {', '.join(FOLDINGS)}")
    return FOLDINGS[folding]


def folding_name(fold_lambda2):
    """The name of :data:`FOLDINGS` of a ``fold_lambda2`` (a finite ridge λ: ``"ridge λ=..."``)."""
    if fold_lambda2 is None:
        return "model"
    return "projection" if math.isinf(fold_lambda2) else f"ridge λ={fold_lambda2:g}"


def open_searcher(model_dir, *, corpus=None, matrix=None, text_fields=DEFAULT_TEXT_FIELDS, alpha=None,
                  term_model=None, folding=None, label_field=None, save_index=False, text_queries=True,
                  show_progress=False):
    """A ready :class:`~rlsi.retrieval.Searcher` of the model directory ``model_dir`` (module docstring).

    Parameters
    ----------
    model_dir : path of a model directory (``model`` and ``vectorizer``, and ``index`` once built).
    corpus : documents of a new index: a corpus path (JSON lines, gzip'ed or not, or a folder of text
        files; ``text_fields`` joined as the text) or a :class:`~rlsi.text.Corpus`.
    matrix : a matrix directory (``rlsi synth`` / ``rlsi ingest``) whose documents a new index holds.
    alpha : weight of the topic score in [0, 1] (default: the index's; 0.5 for a new one with a model).
    term_model : ``"bm25"`` or ``"vsm"`` (default: the index's; ``"bm25"`` for a new one).
    folding : a name of :data:`FOLDINGS` (default: the index's; :data:`DEFAULT_FOLDING` for a new one).
    label_field : group models, a new index from ``corpus``: the field with each document's class.
    save_index : write a new index into ``model_dir``.
    text_queries : text queries will follow, so the directory must have a vectorizer (checked before any work).
    show_progress : progress bar while a matrix directory is indexed.

    Every refusal is an :class:`~rlsi.errors.RLSIError` (or ModelFormatError for a damaged directory).
    """
    from .. import io as rio
    from ..io.kinds import folder_kind, require_model_folder
    from ..io.store import read_manifest

    if alpha is not None and not 0.0 <= alpha <= 1.0:
        raise RLSIError(f"alpha={alpha}: must be between 0 and 1")
    if term_model is not None and term_model not in TERM_MODELS:
        raise RLSIError(f"term_model={term_model!r}: choose one of {', '.join(TERM_MODELS)}")
    if folding is not None:
        folding_lambda2(folding)
    if corpus is not None and matrix is not None:
        raise RLSIError("give the documents to index as a corpus or as a matrix directory, not both")
    if save_index and corpus is None and matrix is None:
        raise RLSIError("saving an index needs the documents to index: a corpus or a matrix directory")
    require_model_folder(model_dir)
    if folder_kind(model_dir) == "live":
        return _live_searcher(model_dir, corpus=corpus, matrix=matrix, alpha=alpha, term_model=term_model,
                              folding=folding, label_field=label_field)
    if matrix is not None or corpus is not None:  # a new index: an old one is not even read
        present = read_manifest(model_dir)["components"]
        bundle = rio.load(model_dir, mmap=True, only=[c for c in ("model", "vectorizer") if c in present])
    else:
        bundle = rio.load(model_dir, mmap=True)  # a large index costs page cache, not private memory
    if matrix is not None:
        if label_field is not None:
            raise RLSIError("a label field needs a corpus: a matrix directory keeps no labels (without a label field "
                            "each document takes the class the model predicts for it)")
        if text_queries and bundle.get("vectorizer") is None:
            raise RLSIError(f"{model_dir} has no vectorizer (a synthetic corpus): text queries cannot be mapped "
                            "to its terms; build the index without text queries (rlsi index) and rank "
                            "vectorised queries with Searcher.search_vectors")
        searcher = _matrix_searcher(bundle, matrix, term_model, folding, show_progress)
    else:
        if "vectorizer" not in bundle:
            raise RLSIError(f"{model_dir} has no 'vectorizer' component (it has {', '.join(sorted(bundle))}); "
                            "write the model with its vectorizer (rlsi fit saves them together)")
        if "index" in bundle and corpus is None:
            searcher = _saved_searcher(model_dir, bundle, term_model, folding, label_field)
        elif corpus is None:
            raise RLSIError(f"{model_dir} has no search index: give the documents to index (a corpus, or a matrix "
                            "directory; a saved index serves later searches at once)")
        else:
            searcher = _corpus_searcher(bundle, corpus, text_fields, term_model, folding, label_field)
    if save_index:
        searcher.save(model_dir)
    if alpha is not None:
        searcher.alpha = alpha
    if searcher.model is None and searcher.alpha > 0:
        raise RLSIError(f"{model_dir} has no topic model: only term matching is possible (alpha 0)")
    return searcher


def _live_searcher(model_dir, *, corpus, matrix, alpha, term_model, folding, label_field):
    """The live index of ``model_dir`` (:class:`rlsi.retrieval.live.LiveIndex`), which searches as a
    searcher does; it takes documents through ``rlsi index --add``, never here."""
    from .live import LiveIndex

    if corpus is not None or matrix is not None or label_field is not None:
        raise RLSIError(f"{model_dir} is a live index: add documents with 'rlsi index {model_dir} --add FILE', "
                        f"then search it as it is")
    if term_model not in (None, "bm25"):
        raise RLSIError(f"the live index of {model_dir} ranks terms with bm25, not {term_model}")
    index = LiveIndex.open(model_dir)
    saved = folding_name(index.fold_lambda2)
    if folding is not None and folding != saved:
        raise RLSIError(f"the live index of {model_dir} folds with {saved!r}, not {folding!r}")
    if alpha is not None:
        index.alpha = alpha
    return index


def _new_params(model, term_model, folding):
    """Constructor parameters of a new index."""
    return dict(alpha=NEW_INDEX_ALPHA if model is not None else 0.0, term_model=term_model or DEFAULT_TERM_MODEL,
                fold_lambda2=folding_lambda2(folding or DEFAULT_FOLDING) if model is not None else None)


def _saved_searcher(model_dir, bundle, term_model, folding, label_field):
    """The saved index of the model directory, with its model and vectorizer attached."""
    if label_field is not None:
        raise RLSIError(f"{model_dir} already has an index: a label field applies when an index is built; rebuild "
                        "it from the corpus with the label field")
    searcher = bundle["index"]
    searcher.attach(bundle.get("model"), bundle["vectorizer"])
    if term_model is not None and term_model != searcher.term_model:
        raise RLSIError(f"the index of {model_dir} uses {searcher.term_model}; rebuild it from the corpus to use "
                        f"{term_model}")
    saved = folding_name(searcher.fold_lambda2)
    if folding is not None and folding != saved:
        raise RLSIError(f"the index of {model_dir} was built with folding {saved!r}; rebuild it from the corpus to "
                        f"use {folding!r}")
    return searcher


def _corpus_searcher(bundle, corpus, text_fields, term_model, folding, label_field):
    """A new index of the documents of ``corpus``."""
    from ..text import Corpus, read_corpus

    if not isinstance(corpus, Corpus):
        if not isinstance(corpus, (str, os.PathLike)):
            raise RLSIError(f"corpus must be a path or an rlsi.text.Corpus, not {type(corpus).__name__}")
        corpus = read_corpus(corpus, text_fields=tuple(text_fields))
    model = bundle.get("model")
    labels = _document_classes(model, corpus, label_field)
    searcher = Searcher(model, bundle["vectorizer"], **_new_params(model, term_model, folding))
    return searcher.index(corpus.texts, corpus.ids, labels=labels)


def _document_classes(model, corpus, label_field):
    """The documents' classes from the field ``label_field`` (group models; None: the model predicts them)."""
    from ..models.group_base import GroupModel
    from ..text.labels import corpus_labels

    if not isinstance(model, GroupModel):
        if label_field is not None:
            raise RLSIError(f"label field: document classes are used by group models only (GroupRLSI, GroupNMF, "
                            f"CRLSI, CNMF); the model is a "
                            f"{type(model).__name__ if model is not None else 'term index'}")
        return None
    if label_field is None:
        log.info("group model: each document is matched on the topics of the class the model predicts for it "
                 "(give a label field to use the corpus's classes)")
        return None
    return corpus_labels(corpus, label_field, remedy="label them, or leave out the label field to let the "
                                                     "model assign each document its predicted class")


def _matrix_searcher(bundle, matrix, term_model, folding, show_progress):
    """A new index of the documents of a matrix directory (float32), with the directory's model."""
    model = bundle.get("model")
    return Searcher.from_matrix(matrix, model, bundle.get("vectorizer"), dtype=np.float32,
                                show_progress=show_progress, **_new_params(model, term_model, folding))
