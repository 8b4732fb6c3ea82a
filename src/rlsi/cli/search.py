"""``rlsi search MODEL_DIR "query" [-k 10]``: rank documents by term + topic matching (TOIS §7).

MODEL_DIR is a model directory as written by ``rlsi fit`` (components ``model`` and ``vectorizer``) and,
once built, ``index``. Without an index the documents to search must be given with ``--corpus FILE``
(the corpus the model was fitted on, or any other in the same format), or with ``--matrix DIR``, a matrix
directory of ``rlsi synth`` / ``rlsi ingest`` (the one ``rlsi fit --matrix`` fitted the model on): its
index is built block by block, in float32, for corpora of millions of documents. ``--save-index`` then
stores the index in MODEL_DIR so later searches start at once (the index is memory-mapped on load).
``--candidates N`` reranks only the term model's N best documents with the topic score (fast on large
indexes; ``rlsi.retrieval.searcher``).

``rlsi index MODEL_DIR (--matrix DIR | --corpus FILE)`` builds the index and saves it in MODEL_DIR
without running a query (for a corpus of millions of documents, once).

Group models (GRLSI, GNMF, CRLSI, CNMF) match a query with a document on the topics of the document's class
(Wang et al., SIGIR 2012, §7.3): ``--label-field FIELD`` takes each document's class from the corpus;
without it every document takes the class the model predicts for it (smallest reconstruction error).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from ..errors import RLSIError

log = logging.getLogger(__name__)


LABEL_HELP = ("group models: the corpus field with each document's class, on whose topics a query is matched "
              "with the document (§7.3); default: the class the model predicts for each document")


def register(subparsers):
    p = subparsers.add_parser(
        "search", help="search documents with a fitted topic model (BM25 + topic matching)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model_dir", metavar="MODEL_DIR", help="model directory (model + vectorizer [+ index])")
    p.add_argument("queries", metavar="QUERY", nargs="+", help="query text (several queries: several arguments)")
    p.add_argument("-k", type=int, default=10, help="number of results per query (default 10)")
    p.add_argument("--alpha", type=float, default=None,
                   help="weight of the topic score in [0, 1] (default: the index's, or 0.5 for a new index)")
    p.add_argument("--corpus", metavar="FILE",
                   help="documents to index when MODEL_DIR has no index (JSON lines, optionally .gz)")
    p.add_argument("--text-fields", default="title,text",
                   help="comma-separated JSON fields joined as the document text (default title,text)")
    p.add_argument("--matrix", metavar="DIR",
                   help="index the documents of this matrix directory (rlsi synth / rlsi ingest) when MODEL_DIR "
                        "has no index; built block by block, float32")
    p.add_argument("--save-index", action="store_true",
                   help="store the index built from --corpus or --matrix in MODEL_DIR")
    p.add_argument("--candidates", type=int, default=None, metavar="N",
                   help="rerank only the term model's N best documents with the topic score (e.g. 1000; "
                        "default: score every document)")
    p.add_argument("--term-model", choices=["bm25", "vsm"], default=None,
                   help="term matching model of a new index (default bm25)")
    p.add_argument("--folding", choices=["model", "projection"], default=None,
                   help="folding-in of a new index: the model's own transform, or the projection on its "
                        "topics (default: projection for RLSI models, model otherwise)")
    p.add_argument("--label-field", default=None, metavar="FIELD", help=LABEL_HELP)
    p.add_argument("--json", action="store_true", help="print results as JSON lines")
    p.add_argument("-q", "--quiet", dest="quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no info messages")
    p.set_defaults(func=run)

    q = subparsers.add_parser(
        "index", help="build the search index of a model directory (from a corpus or a matrix directory)",
        description="Build the search index (BM25 or VSM + topic vectors) of the documents of --matrix DIR "
                    "(rlsi synth / rlsi ingest; block by block, float32) or --corpus FILE, and save it in "
                    "MODEL_DIR for 'rlsi search' (which memory-maps it).")
    q.add_argument("model_dir", metavar="MODEL_DIR", help="model directory (model [+ vectorizer]); the index is "
                                                          "added to it")
    src = q.add_mutually_exclusive_group(required=True)
    src.add_argument("--matrix", metavar="DIR", help="matrix directory of the documents to index")
    src.add_argument("--corpus", metavar="FILE", help="documents to index (JSON lines, optionally .gz)")
    q.add_argument("--text-fields", default="title,text",
                   help="comma-separated JSON fields joined as the document text (default title,text)")
    q.add_argument("--term-model", choices=["bm25", "vsm"], default=None, help="term matching model (default bm25)")
    q.add_argument("--folding", choices=["model", "projection"], default=None,
                   help="folding-in (default: projection for RLSI models, model otherwise)")
    q.add_argument("--label-field", default=None, metavar="FIELD", help=LABEL_HELP)
    q.add_argument("-q", "--quiet", dest="quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no info messages")
    q.set_defaults(func=run_index)
    return p


def _fields(text):
    fields = [f.strip() for f in text.split(",") if f.strip()]
    if not fields:
        raise RLSIError("--text-fields names no field")
    return fields


def run_index(args):
    """``rlsi index MODEL_DIR (--matrix DIR | --corpus FILE)``."""
    import time

    from ._output import index_destination

    fields = _fields(args.text_fields)
    index_destination(args.model_dir, reads=[args.corpus, args.matrix])
    start = time.perf_counter()
    searcher = load_searcher(args.model_dir, corpus=args.corpus, text_fields=fields, term_model=args.term_model,
                             folding=args.folding, save_index=True, matrix=args.matrix, text=False,
                             label_field=args.label_field, show_progress=not getattr(args, "quiet", False))
    if not getattr(args, "quiet", False):
        print(f"indexed {searcher.n_docs_} documents ({searcher.term_model}"
              f"{' + topics' if searcher.topic_index_ is not None else ''}) in "
              f"{time.perf_counter() - start:.1f}s; saved in {args.model_dir}")
    return 0


NEW_INDEX_ALPHA = 0.5


def default_folding(model):
    """The projection for RLSI models (what the benchmark found best), the model's own transform else."""
    return "projection" if model is not None and hasattr(model, "topic_penalty") else "model"


def load_searcher(model_dir, *, corpus=None, text_fields=("title", "text"), alpha=None, term_model=None,
                  folding=None, save_index=False, matrix=None, text=True, label_field=None, show_progress=False):
    """A ready :class:`~rlsi.retrieval.Searcher` from a model directory (building the index if needed,
    from the documents of ``corpus`` or of the matrix directory ``matrix``); ``text``: text queries will
    follow (so a vectorizer is required before any work); ``label_field``: group models, the corpus field
    with each document's class (module docstring)."""
    from .. import io as rio
    from ..retrieval import Searcher
    from ._output import require_model_folder

    require_model_folder(model_dir)
    if matrix is not None or corpus is not None:  # a new index: an old one in MODEL_DIR is not even read
        from ..io.store import read_manifest

        present = read_manifest(model_dir)["components"]
        bundle = rio.load(model_dir, mmap=True, only=[c for c in ("model", "vectorizer") if c in present])
    else:
        bundle = rio.load(model_dir, mmap=True)  # a large index costs page cache, not private memory
    if matrix is not None:
        if corpus is not None:
            raise RLSIError("give either --corpus FILE or --matrix DIR, not both")
        if label_field is not None:
            raise RLSIError("--label-field needs --corpus FILE: a matrix directory keeps no labels (without "
                            "--label-field each document takes the class the model predicts for it)")
        if text and bundle.get("vectorizer") is None:
            raise RLSIError(f"{model_dir} has no vectorizer (a synthetic corpus): text queries cannot be mapped "
                            "to its terms; build the index with 'rlsi index' and rank vectorised queries with "
                            "Searcher.search_vectors")
        return _matrix_searcher(model_dir, bundle, matrix, alpha=alpha, term_model=term_model, folding=folding,
                                save_index=save_index, show_progress=show_progress)
    if "vectorizer" not in bundle:
        raise RLSIError(f"{model_dir} has no 'vectorizer' component (it has {', '.join(sorted(bundle))}); "
                        "write the model with `rlsi fit`, which saves the model and its vectorizer together")
    model = bundle.get("model")
    if "index" in bundle and corpus is None:
        if label_field is not None:
            raise RLSIError(f"{model_dir} already has an index: --label-field applies when it is built; rebuild "
                            "it with --corpus FILE --label-field FIELD --save-index")
        searcher = bundle["index"]
        searcher.attach(model, bundle["vectorizer"])
        if term_model is not None and term_model != searcher.term_model:
            raise RLSIError(f"the index of {model_dir} uses {searcher.term_model}; rebuild it with --corpus to "
                            f"use {term_model}")
        saved = "model" if searcher.fold_lambda2 is None else "projection"
        if folding is not None and folding != saved:
            raise RLSIError(f"the index of {model_dir} was built with --folding {saved}; rebuild it with --corpus "
                            f"to use {folding}")
    else:
        if corpus is None:
            raise RLSIError(f"{model_dir} has no search index: give the documents to search with --corpus FILE "
                            "(add --save-index to keep the index for later searches)")
        docs = read_documents(corpus, text_fields)
        labels = _document_classes(model, docs, label_field)
        import math

        folding = folding or default_folding(model)
        searcher = Searcher(model, bundle["vectorizer"], alpha=NEW_INDEX_ALPHA if model is not None else 0.0,
                            term_model=term_model or "bm25",
                            fold_lambda2=math.inf if folding == "projection" and model is not None else None)
        searcher.index(docs.texts, docs.ids, labels=labels)
        if save_index:
            searcher.save(model_dir)
    return _with_alpha(searcher, alpha, model_dir)


def _document_classes(model, docs, label_field):
    """The documents' class labels from ``label_field`` (group models; None: the model predicts them)."""
    from ..models.group_base import GroupModel

    if not isinstance(model, GroupModel):
        if label_field is not None:
            raise RLSIError(f"--label-field: document classes are used by group models only (grlsi, gnmf, crlsi, "
                            f"cnmf); the model is a {type(model).__name__ if model is not None else 'term index'}")
        return None
    if label_field is None:
        log.info("group model: each document is matched on the topics of the class the model predicts for it "
                 "(give --label-field to use the corpus's classes)")
        return None
    if label_field not in docs.fields:
        raise RLSIError(f"the corpus has no field {label_field!r} (fields: {', '.join(sorted(docs.fields)) or 'none'})")
    from .group import document_labels

    values = docs.fields[label_field]
    missing = [i for i, v in enumerate(values)
               if v is None or (isinstance(v, str) and not v.strip()) or (isinstance(v, (list, tuple)) and not v)]
    if missing:
        raise RLSIError(f"{len(missing)} of {len(values)} documents have no {label_field!r} value (first: document "
                        f"{missing[0] + 1}); label them, or leave out --label-field to let the model assign each "
                        "document its predicted class")
    return document_labels(values, label_field)


def _with_alpha(searcher, alpha, model_dir):
    """``--alpha`` over the index's own weight; a topic weight needs a topic model."""
    if alpha is not None:
        searcher.alpha = alpha
    if searcher.model is None and searcher.alpha > 0:
        raise RLSIError(f"{model_dir} has no topic model: only term matching is possible (use --alpha 0)")
    return searcher


def _matrix_searcher(model_dir, bundle, matrix, *, alpha, term_model, folding, save_index, show_progress):
    """``--matrix DIR``: the index of a matrix directory (float32), with MODEL_DIR's model."""
    import math

    import numpy as np

    from ..retrieval import Searcher

    model = bundle.get("model")
    folding = folding or default_folding(model)
    searcher = Searcher.from_matrix(
        matrix, model, bundle.get("vectorizer"), alpha=NEW_INDEX_ALPHA if model is not None else 0.0,
        term_model=term_model or "bm25", dtype=np.float32,
        fold_lambda2=math.inf if folding == "projection" and model is not None else None,
        show_progress=show_progress)
    if save_index:
        searcher.save(model_dir)
    return _with_alpha(searcher, alpha, model_dir)


def read_documents(path, text_fields=("title", "text")):
    """A corpus from a JSON-lines file (``text_fields`` joined) or a folder of text files."""
    from ..text import read_corpus

    return read_corpus(path, text_fields=tuple(text_fields))


def run(args):
    if args.k < 1:
        raise RLSIError(f"-k {args.k}: the number of results must be at least 1")
    if args.alpha is not None and not 0.0 <= args.alpha <= 1.0:
        raise RLSIError(f"--alpha {args.alpha}: must be between 0 and 1")
    if args.save_index and args.corpus is None and args.matrix is None:
        raise RLSIError("--save-index needs --corpus FILE or --matrix DIR (the documents to index)")
    if args.candidates is not None and args.candidates < 1:
        raise RLSIError(f"--candidates {args.candidates}: must be at least 1")
    fields = _fields(args.text_fields)
    if args.save_index:  # the index is written into MODEL_DIR at the end: check it can be, first
        from ._output import index_destination

        index_destination(args.model_dir, reads=[args.corpus, args.matrix])
    searcher = load_searcher(args.model_dir, corpus=args.corpus, text_fields=fields, alpha=args.alpha,
                             term_model=args.term_model, folding=args.folding, save_index=args.save_index,
                             matrix=args.matrix, label_field=args.label_field,
                             show_progress=not getattr(args, "quiet", False))
    results = searcher.search_many(args.queries, k=args.k, candidates=args.candidates)
    from ._output import printable

    out = sys.stdout
    for query, hits in zip(args.queries, results):
        if args.json:
            out.write(json.dumps({"query": query, "results": [h._asdict() for h in hits]}) + "\n")
            continue
        if len(args.queries) > 1:
            out.write(f"# {printable(query)}\n")
        if not hits:
            out.write("no result: none of the query's terms is in the model's vocabulary\n")
            continue
        shown = [printable(h.doc_id) for h in hits]  # ids read from the index: control characters escaped
        width = max(6, max(map(len, shown)))
        out.write(f"{'rank':>4}  {'doc':<{width}}  {'score':>8}  {'term':>8}  {'topic':>8}\n")
        for rank, (h, doc_id) in enumerate(zip(hits, shown), 1):
            out.write(f"{rank:>4}  {doc_id:<{width}}  {h.score:8.4f}  {h.term_score:8.4f}  {h.topic_score:8.4f}\n")
    return 0
