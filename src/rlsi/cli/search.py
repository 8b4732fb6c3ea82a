"""``rlsi search MODEL_DIR "query" [-k 10]``: rank documents by term + topic matching (TOIS §7).

MODEL_DIR is a model directory as written by ``rlsi fit`` (components ``model`` and ``vectorizer``) and,
once built, ``index``. Without an index the documents to search must be given with ``--corpus FILE``
(the corpus the model was fitted on, or any other in the same format), or with ``--matrix DIR``, a matrix
directory of ``rlsi synth`` / ``rlsi ingest`` (the one ``rlsi fit --matrix`` fitted the model on): its
index is built block by block, in float32, for corpora of millions of documents. ``--save-index`` then
stores the index in MODEL_DIR so later searches start at once (the index is memory-mapped on load).
``--candidates N`` reranks only the term model's N best documents with the topic score (fast on large
indexes; ``rlsi.retrieval.searcher``). With ``--corpus`` each result shows the document's title and a
snippet of its text around the query's words (:mod:`rlsi.text.snippets`).

``rlsi index MODEL_DIR (--matrix DIR | --corpus FILE)`` builds the index and saves it in MODEL_DIR
without running a query (for a corpus of millions of documents, once). With ``--live`` the index takes
documents later: ``rlsi index MODEL_DIR --add more.jsonl.gz``, ``--update``, ``--delete ids.txt``,
``--merge`` and ``--update-model NEW_MODEL_DIR`` (``rlsi.retrieval.live``); ``rlsi search`` reads it as it is.

Group models (GRLSI, GNMF, CRLSI, CNMF) match a query with a document on the topics of the document's class
(Wang et al., SIGIR 2012, §7.3): ``--label-field FIELD`` takes each document's class from the corpus;
without it every document takes the class the model predicts for it (smallest reconstruction error).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import RLSIError
from ._choices import DEFAULT_FOLDING, FOLDINGS, TERM_MODELS


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
    p.add_argument("--term-model", choices=TERM_MODELS, default=None,
                   help="term matching model of a new index (default bm25)")
    p.add_argument("--folding", choices=FOLDINGS, default=None,
                   help="folding-in of a new index: the model's own transform (TOIS §7), or the projection on "
                        f"its topics (default: {DEFAULT_FOLDING})")
    p.add_argument("--label-field", default=None, metavar="FIELD", help=LABEL_HELP)
    p.add_argument("--json", action="store_true", help="print results as JSON lines")
    p.add_argument("-q", "--quiet", dest="quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no info messages")
    p.set_defaults(func=run)

    q = subparsers.add_parser(
        "index", help="build the search index of a model directory, or add, update and delete documents of a "
                      "live index",
        description="Build the search index (BM25 or VSM + topic vectors) of the documents of --matrix DIR "
                    "(rlsi synth / rlsi ingest; block by block, float32) or --corpus FILE, and save it in "
                    "MODEL_DIR for 'rlsi search' (which memory-maps it). With --live the index is live: it "
                    "takes --add, --update, --delete, --merge and --update-model later without a rebuild "
                    "(a model folder without an index becomes live at its first --add).")
    q.add_argument("model_dir", metavar="MODEL_DIR", help="model directory (model [+ vectorizer]); the index is "
                                                          "added to it")
    src = q.add_mutually_exclusive_group()
    src.add_argument("--matrix", metavar="DIR", help="matrix directory of the documents to index")
    src.add_argument("--corpus", metavar="FILE", help="documents to index (JSON lines, optionally .gz)")
    q.add_argument("--live", action="store_true",
                   help="build a live index (BM25 + topics) of --corpus or --matrix that takes documents later")
    q.add_argument("--add", metavar="FILE", help="live index: add the documents of FILE (JSON lines; new ids)")
    q.add_argument("--update", metavar="FILE",
                   help="live index: replace the documents of FILE with the same ids (new ids are added)")
    q.add_argument("--delete", metavar="IDS", help="live index: delete the documents whose ids FILE lists, one a line")
    q.add_argument("--merge", action="store_true", help="live index: merge its segments into one")
    q.add_argument("--update-model", metavar="DIR",
                   help="live index: serve the model of DIR (e.g. after 'rlsi fit --resume' or 'rlsi track'), "
                        "re-folding every document with it")
    q.add_argument("--text-fields", default="title,text",
                   help="comma-separated JSON fields joined as the document text (default title,text)")
    q.add_argument("--term-model", choices=TERM_MODELS, default=None, help="term matching model (default bm25)")
    q.add_argument("--folding", choices=FOLDINGS, default=None,
                   help=f"folding-in: the model's own transform (TOIS §7) or the projection (default: {DEFAULT_FOLDING})")
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
    """``rlsi index MODEL_DIR (--matrix DIR | --corpus FILE) [--live]`` or the changes of a live index."""
    import time

    from ..retrieval import open_searcher
    from ._output import index_destination

    fields = _fields(args.text_fields)
    changes = [args.add, args.update, args.delete, args.update_model]
    if any(c is not None for c in changes) or args.merge:
        if args.corpus is not None or args.matrix is not None or args.live:
            raise RLSIError("--add, --update, --delete, --merge and --update-model change a live index; build "
                            "one first (--live with --corpus or --matrix), in a separate call")
        return _run_live_changes(args, fields)
    if args.corpus is None and args.matrix is None:
        raise RLSIError("give the documents to index (--corpus FILE or --matrix DIR), or the changes of a live "
                        "index (--add, --update, --delete, --merge, --update-model)")
    if args.live:
        return _run_live_build(args, fields)
    index_destination(args.model_dir, reads=[args.corpus, args.matrix])
    start = time.perf_counter()
    searcher = open_searcher(args.model_dir, corpus=args.corpus, matrix=args.matrix, text_fields=fields,
                             term_model=args.term_model, folding=args.folding, label_field=args.label_field,
                             save_index=True, text_queries=False, show_progress=not getattr(args, "quiet", False))
    if not getattr(args, "quiet", False):
        print(f"indexed {searcher.n_docs_} documents ({searcher.term_model}"
              f"{' + topics' if searcher.topic_index_ is not None else ''}) in "
              f"{time.perf_counter() - start:.1f}s; saved in {args.model_dir}")
    return 0


def _run_live_build(args, fields):
    """``rlsi index MODEL_DIR --live (--corpus FILE | --matrix DIR)``."""
    from ..retrieval.directory import folding_lambda2
    from ..retrieval.live.maintain import build_live

    if args.term_model not in (None, "bm25"):
        raise RLSIError("--term-model: a live index ranks terms with bm25")
    if args.label_field is not None:
        raise RLSIError("--label-field: a live index folds every document on one set of topics (group models use a "
                        "static index)")
    stats = build_live(args.model_dir, corpus=args.corpus, matrix=args.matrix, text_fields=fields,
                       fold_lambda2=None if args.folding is None else folding_lambda2(args.folding),
                       show_progress=not getattr(args, "quiet", False))
    if not getattr(args, "quiet", False):
        print(f"live index of {stats['documents']} documents in {len(stats['segments'])} segment(s), generation "
              f"{stats['generation']}, in {stats['seconds']:.1f}s; {args.model_dir} now takes --add, --update, "
              f"--delete and --merge")
    return 0


def _run_live_changes(args, fields):
    """``rlsi index MODEL_DIR --add/--update/--delete/--merge/--update-model``."""
    from ..retrieval.live.maintain import change_live

    r = change_live(args.model_dir, add=args.add, update=args.update, delete=args.delete, merge=args.merge,
                    update_model=args.update_model, text_fields=fields, show_progress=not getattr(args, "quiet", False))
    if not getattr(args, "quiet", False):
        done = [f"{r[k]} {k}" for k in ("added", "updated", "deleted") if r[k]]
        if r["not_found"]:
            done.append(f"{r['not_found']} ids to delete not found")
        if r.get("new_model_version") is not None:
            done.append(f"model version {r['new_model_version']} serving")
        prefix = f"{args.model_dir} is now a live index; " if r["converted"] else ""
        print(f"{prefix}{', '.join(done) or 'no change'}; generation {r['generation']}: {r['documents']} documents "
              f"in {len(r['segments'])} segment(s), {r['seconds']:.1f}s")
    return 0


def run(args):
    from ..retrieval import open_searcher

    if args.k < 1:
        raise RLSIError(f"-k {args.k}: the number of results must be at least 1")
    if args.alpha is not None and not 0.0 <= args.alpha <= 1.0:
        raise RLSIError(f"--alpha {args.alpha}: must be between 0 and 1")
    if args.corpus is not None and args.matrix is not None:
        raise RLSIError("give either --corpus FILE or --matrix DIR, not both")
    if args.save_index and args.corpus is None and args.matrix is None:
        raise RLSIError("--save-index needs --corpus FILE or --matrix DIR (the documents to index)")
    if args.candidates is not None and args.candidates < 1:
        raise RLSIError(f"--candidates {args.candidates}: must be at least 1")
    fields = _fields(args.text_fields)
    if args.save_index:  # the index is written into MODEL_DIR at the end: check it can be, first
        from ._output import index_destination

        index_destination(args.model_dir, reads=[args.corpus, args.matrix])
    corpus = None
    if args.corpus is not None:  # read here: its texts give the results their titles and snippets
        from ..text import read_corpus

        corpus = read_corpus(args.corpus, text_fields=tuple(fields))
    searcher = open_searcher(args.model_dir, corpus=corpus, matrix=args.matrix, text_fields=fields,
                             alpha=args.alpha, term_model=args.term_model, folding=args.folding,
                             label_field=args.label_field, save_index=args.save_index,
                             show_progress=not getattr(args, "quiet", False))
    results = searcher.search_many(args.queries, k=args.k, candidates=args.candidates)
    texts = dict(zip(corpus.ids, corpus.texts)) if corpus is not None else {}
    for query, hits in zip(args.queries, results):
        _print_hits(query, hits, texts, args, several=len(args.queries) > 1)
    return 0


def _print_hits(query, hits, texts, args, *, several):
    """One query's results: a table of ranks, ids and scores, each hit followed by the document's title and
    a snippet when its text is known (``--corpus``); with ``--json`` one JSON line."""
    from ..text.snippets import title_and_snippet
    from ._output import printable

    out = sys.stdout
    shown = {h.doc_id: title_and_snippet(texts[h.doc_id], query) for h in hits if h.doc_id in texts}
    if args.json:
        rows = [dict(h._asdict(), **(dict(zip(("title", "snippet"), shown[h.doc_id])) if h.doc_id in shown else {}))
                for h in hits]
        out.write(json.dumps({"query": query, "results": rows}) + "\n")
        return
    if several:
        out.write(f"# {printable(query)}\n")
    if not hits:
        out.write("no result: none of the query's terms is in the model's vocabulary\n")
        return
    ids = [printable(h.doc_id) for h in hits]  # ids read from the index: control characters escaped
    width = max(6, max(map(len, ids)))
    out.write(f"{'rank':>4}  {'doc':<{width}}  {'score':>8}  {'term':>8}  {'topic':>8}\n")
    for rank, (h, doc_id) in enumerate(zip(hits, ids), 1):
        out.write(f"{rank:>4}  {doc_id:<{width}}  {h.score:8.4f}  {h.term_score:8.4f}  {h.topic_score:8.4f}\n")
        title, snippet = shown.get(h.doc_id, ("", ""))
        for line in (title, snippet):
            if line:
                out.write(f"      {printable(line)}\n")
