"""``rlsi explore MODEL_DIR [--corpus CORPUS] -o topics.html``: a self-contained HTML topic explorer.

The page (:func:`rlsi.explore`) shows the topic map, each topic's signed term bars with a relevance
slider, a term lookup, diagnostics and, with ``--corpus``, the topics' shares of the corpus, the documents
at both ends of each topic, NPMI coherence and a document map. One file, no network, the same bytes for
the same model and corpus; about 1 MB at 500 topics.

This module only parses and prints; it imports nothing heavy before the command runs.
"""

from __future__ import annotations

DISTANCES = ("topics", "documents")


def _positive_int(text):
    from ._common import positive_int

    return positive_int(text)


def _non_negative_int(text):
    from ._common import non_negative_int

    return non_negative_int(text)


def register(sub):
    p = sub.add_parser("explore", help="write an HTML explorer of a model's topics (one offline file)",
                       description="Write one self-contained HTML file to explore a saved model's topics: a topic "
                                   "map (classical MDS, bubble area = share of the corpus, colour = sign balance), "
                                   "signed term bars with a weight/exclusivity slider, a term lookup, diagnostics, "
                                   "and with --corpus the documents at both ends of each topic, NPMI coherence and "
                                   "a document map. Topics are T1..TK as 'rlsi topics' prints them. The file loads "
                                   "nothing from the network.")
    p.add_argument("model_dir", help="model directory written by 'rlsi fit' (or 'rlsi fit-stc')")
    p.add_argument("-o", "--output", required=True, help="HTML file to write (e.g. topics.html)")
    p.add_argument("--corpus", default=None,
                   help="documents (JSON lines, .jsonl.gz, or a folder of .txt) for shares, the documents at both "
                        "ends, coherence and the document map; usually the corpus the model was fitted on")
    p.add_argument("--text-fields", default="title,text",
                   help="comma-separated JSON fields joined into the document text (default: title,text); a "
                        "document's title is the first line of its text")
    p.add_argument("--label-field", default=None, metavar="FIELD",
                   help="group models: the corpus field with each document's class (default: the class the "
                        "model predicts for each document)")
    p.add_argument("-n", "--terms", type=_positive_int, default=30,
                   help="terms shown per topic, both signs together (default: 30)")
    p.add_argument("--ends", type=_non_negative_int, default=5,
                   help="documents shown at each end of a topic (default: 5)")
    p.add_argument("--map-docs", type=_non_negative_int, default=2000,
                   help="documents drawn on the document map, a seeded sample beyond it (default: 2000)")
    p.add_argument("--distance", choices=DISTANCES, default="topics",
                   help="distances of the topic map: topics (cosine of the topic weights, default) or documents "
                        "(correlation of the document vectors; needs --corpus)")
    p.add_argument("--title", default=None, help="the page's title (default: from the model folder's name)")
    p.set_defaults(func=run)


def run(args):
    import sys
    from pathlib import Path

    from ..errors import RLSIError
    from ..explorer import explore
    from . import _common, _output

    quiet = bool(getattr(args, "quiet", False))
    reads = [args.model_dir] + ([args.corpus] if args.corpus else [])
    _output.file_destination(args.output, reads=reads)
    if args.distance == "documents" and not args.corpus:
        raise RLSIError("--distance documents needs --corpus (the document vectors come from it)")
    if args.label_field and not args.corpus:
        raise RLSIError("--label-field needs --corpus (the classes are a field of its documents)")
    model, vectorizer, _ = _common.load_model_dir(args.model_dir)
    corpus = labels = None
    if args.corpus:
        from ..text import read_corpus

        if vectorizer is None:
            raise RLSIError(f"{args.model_dir} has no vectorizer: the corpus cannot be read into its terms")
        corpus = read_corpus(args.corpus, text_fields=_common.text_fields(args))
        if args.label_field:
            labels = _labels(model, corpus, args.label_field)
    elif vectorizer is None:
        print(f"rlsi: note: {args.model_dir} has no vectorizer; terms are shown by column index", file=sys.stderr)
    title = args.title or f"rlsi topics: {Path(args.model_dir).resolve().name}"
    page = explore(model, vectorizer=vectorizer, docs=corpus, y=labels, n_terms=args.terms, n_ends=args.ends,
                   max_map_docs=args.map_docs, distance=args.distance, title=title, verbose=0 if quiet else 1)
    page.save(args.output)
    if not quiet:
        facts = page.data["model"]
        docs = f", {page.data['docs']['n']:,} documents" if page.data["docs"] else ""
        print(f"wrote {args.output} ({page.size / 1e6:.2f} MB): {facts['kind']}, {facts['n_topics']} topics"
              f"{docs}; open it in a browser")
    return 0


def _labels(model, corpus, field):
    from ..errors import RLSIError
    from ..text.labels import corpus_labels

    if not getattr(model, "topic_groups_", None) or not hasattr(model, "predict"):
        raise RLSIError(f"--label-field: document classes are used by the group models only (GroupRLSI, GroupNMF, "
                        f"CRLSI, CNMF); the model is a {type(model).__name__}")
    return corpus_labels(corpus, field, remedy="label them, or leave out --label-field to let the model assign "
                                               "each document its predicted class")
