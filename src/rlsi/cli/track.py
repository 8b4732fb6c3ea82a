"""``rlsi track CORPUS --date-field date --period month -k 20 -o REPORT_DIR``: topics over time.

Reads the corpus, orders the documents by date (stable; documents without a usable date are skipped
and counted), streams them through :class:`rlsi.text.stream.StreamingTfidf` (growing vocabulary) and
:class:`rlsi.models.OnlineRLSI` in mini-batches that never straddle two periods, and writes to
REPORT_DIR (all or nothing: built in a temporary directory renamed into place):

* ``report.md`` — topic shares per period, largest rises, born/dead/reborn topics, top terms per period;
* ``report.txt`` — the same per topic, as plain text;
* ``report.html`` — the same in a browser (:func:`rlsi.explorer.tracking_page`): shares per period as
  lines or stacked areas, births and deaths marked, a topic's terms and drift period by period;
* ``shares.png`` — share of every topic per period; ``topic_NN.png`` — the topics that rise most, in
  the style of TOIS Figures 7–8 (share curve and top terms per period);
* ``shares.csv``, ``timeline.json`` — the numbers;
* ``model/`` — the online model and the stream vectorizer (``rlsi.io``), resumable.

Without ``--date-field`` the corpus order is the stream and a snapshot is taken every ``--every``
mini-batches. Defaults follow the paper's tracking setting (§8.2.3: ρ = 1, ξ = 10) with η = 100 documents.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

from ..errors import RLSIError
from . import _common, _output
from ._choices import IDF_MODES, PERIODS
from ._online import add_online_arguments, online_model_from_args
from .learners import births_note

log = logging.getLogger(__name__)

TRACK_DEFAULTS = {"batch_size": 100, "rho": 1.0, "n_inner": 10}
MARKER = "timeline.json"


def register(sub):
    p = sub.add_parser("track", help="track topics over time in a dated corpus (online RLSI)",
                       description="Fit online RLSI over a corpus in date order and report each topic's "
                                   "share and top terms per period (TOIS §8.2.3).")
    p.add_argument("corpus", help="corpus file (.jsonl / .jsonl.gz) or folder of .txt files")
    p.add_argument("-o", "--output", required=True, help="report directory to write")
    g = p.add_argument_group("time")
    g.add_argument("--date-field", default=None,
                   help="JSON field with an ISO date (YYYY, YYYY-MM, YYYY-MM-DD, or a datetime)")
    g.add_argument("--period", choices=PERIODS, default="month",
                   help="period of the report when --date-field is given (default: month)")
    g.add_argument("--every", type=_common.positive_int, default=None,
                   help="without --date-field: a snapshot every N mini-batches (default: 10)")
    _common.add_model_arguments(p)
    add_online_arguments(p.add_argument_group("online learning"), defaults=TRACK_DEFAULTS)
    t = p.add_argument_group("text")
    t.add_argument("--text-fields", default="title,text",
                   help="comma-separated JSON fields joined into the document text (default: title,text)")
    t.add_argument("--stem", action="store_true", help="stem terms with the Snowball English stemmer")
    t.add_argument("--no-stop-words", action="store_true", help="keep English stop words")
    t.add_argument("--extra-stop-words", default="",
                   help="comma-separated words to drop as well (e.g. 'reuter,said')")
    t.add_argument("--idf", choices=IDF_MODES, default="running",
                   help="running: idf from all documents so far (default); fixed: frozen after --warmup")
    t.add_argument("--warmup", type=_common.positive_int, default=1000,
                   help="with --idf fixed: the first N documents fix the idf (default: 1000)")
    r = p.add_argument_group("report")
    r.add_argument("--top-terms", type=_common.positive_int, default=5,
                   help="top terms per topic and period in the report (default: 5)")
    r.add_argument("--plot-topics", type=int, default=4,
                   help="topics with the largest rise plotted one by one, like Figures 7-8 (default: 4)")
    # also accepted after the sub-command; SUPPRESS keeps a top-level ``rlsi -q`` from being overridden
    r.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no progress bar or summary")
    p.set_defaults(func=run)


def _stop_words(args):
    extra = [w.strip().lower() for w in args.extra_stop_words.split(",") if w.strip()]
    if args.no_stop_words:
        return extra or None
    if not extra:
        return "english"
    from ..text import english_stop_words

    return sorted(english_stop_words() | set(extra))


def _check_output(path, reads=()):
    from ..io import kinds

    _output.report_destination(path, marker=MARKER, kind="an rlsi track report", reads=reads)
    kinds.check_nothing_nested(path, own=("model",))  # the report's own model/ is rewritten with it


def _order(corpus, args):
    """(document positions in stream order, their segment labels or None, number skipped)."""
    import numpy as np

    from ..tracking import period_of

    n = len(corpus)
    if args.date_field is None:
        return np.arange(n), None, 0
    if args.every is not None:
        raise RLSIError("--every applies without --date-field; with dates the snapshots are per --period")
    if args.date_field not in corpus.fields:
        have = ", ".join(sorted(corpus.fields)) or "none"
        raise RLSIError(f"the corpus has no field {args.date_field!r} (extra fields: {have})")
    dates = corpus.fields[args.date_field]
    keep, labels, bad = [], [], []
    for i, d in enumerate(dates):
        if d is None or (isinstance(d, str) and not d.strip()):
            bad.append(i)
            continue
        try:
            labels.append(period_of(d, args.period))
        except RLSIError:
            bad.append(i)
            continue
        keep.append(i)
    if not keep:
        raise RLSIError(f"no document has a usable {args.date_field!r} date for period={args.period!r}")
    if bad:
        msg = (f"{len(bad)} of {n} documents have no usable {args.date_field!r} date for --period "
               f"{args.period} and are skipped (first: id {corpus.ids[bad[0]]!r})")
        log.warning("%s", msg)
    keep = np.asarray(keep)
    keys = [str(dates[i]) for i in keep]
    order = np.asarray(sorted(range(len(keep)), key=lambda j: (labels[j], keys[j])), dtype=np.int64)
    return keep[order], [labels[j] for j in order], len(bad)


def _batches(texts, bounds, vectorizer, warmup):
    """Yield (X, segment): tf-idf of each mini-batch, vectorizing the warm-up block at once if asked."""
    import scipy.sparse as sp

    cache, cache_start = None, 0
    if warmup:
        end = min(warmup, len(texts))
        cache, cache_start = vectorizer.partial_fit_transform(texts[:end]), 0
    for a, b, seg in bounds:
        if cache is not None and b <= cache_start + cache.shape[0]:
            yield cache[a - cache_start: b - cache_start], seg
            continue
        if cache is not None and a < cache_start + cache.shape[0]:  # straddles the end of the warm-up
            head = cache[a - cache_start:]
            tail = vectorizer.partial_fit_transform(texts[cache_start + cache.shape[0]: b])
            head = sp.csr_matrix((head.data, head.indices, head.indptr), shape=(head.shape[0], tail.shape[1]))
            cache = None
            yield sp.vstack([head, tail], format="csr"), seg
            continue
        cache = None
        yield vectorizer.partial_fit_transform(texts[a:b]), seg


def run(args):
    from ..text import read_corpus
    from ..text.stream import StreamingTfidf
    from ..tracking import segments, track

    quiet = bool(getattr(args, "quiet", False))
    out = Path(args.output)
    _check_output(out, reads=[args.corpus])
    model = online_model_from_args(args, quiet=True)  # options checked before the corpus is read
    start = time.perf_counter()
    corpus = read_corpus(args.corpus, text_fields=_common.text_fields(args))
    order, labels, skipped = _order(corpus, args)
    if len(order) < 2:
        raise RLSIError(f"{args.corpus}: {len(order)} usable document; tracking topics needs at least 2 "
                        f"(with one, every term has idf 0)")
    texts = [corpus.texts[i] for i in order]
    vectorizer = StreamingTfidf(stop_words=_stop_words(args), stemmer="english" if args.stem else None,
                                idf=args.idf)
    if labels is not None:
        bounds = list(segments(len(texts), args.batch_size, labels=labels))
    else:
        bounds = list(segments(len(texts), args.batch_size, every=args.every or 10))
    bar = None
    if not quiet:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(texts), desc="rlsi track", unit="doc", unit_scale=True, smoothing=0.1)
    try:
        timeline = track(model, _batches(texts, bounds, vectorizer, args.warmup if args.idf == "fixed" else 0),
                         feature_names=lambda: vectorizer.feature_names_, n_top_terms=max(10, args.top_terms),
                         callback=None if bar is None else bar.update, doc_ids=[corpus.ids[i] for i in order])
    finally:
        if bar is not None:
            bar.close()
    if not getattr(model, "topics_initialized_", True):  # no document had a non-zero tf-idf weight
        _common.check_learnable(model.components_, len(texts))
    from .learners import check_not_empty

    check_not_empty(model, len(texts))
    _write_report(out, timeline, model, vectorizer, args)
    if not quiet:
        dead = len(model.dead_topics())
        print(f"tracked {len(texts)} documents ({skipped} skipped) in {len(timeline.segments)} segments, "
              f"{vectorizer.n_terms_} terms, K={model.n_components_}{births_note(model)}, {dead} empty topic(s), "
              f"{time.perf_counter() - start:.1f}s")
        print(f"report written to {out}")
    return 0


def _write_report(out, timeline, model, vectorizer, args):
    from .. import io
    from ..explorer import tracking_page

    with io.atomic_dir(out) as tmp:
        title = f"Topic tracking: {Path(args.corpus).name}"
        (tmp / "report.md").write_text(_header(args, model) + timeline.to_markdown(n_terms=args.top_terms, title=title),
                                       encoding="utf-8")
        (tmp / "report.txt").write_text(timeline.to_text(n_terms=args.top_terms), encoding="utf-8")
        (tmp / "shares.csv").write_text(timeline.to_csv(), encoding="utf-8")
        timeline.plot(tmp / "shares.png", title=title)
        for k, _, _ in timeline.rising(max(0, args.plot_topics)):
            timeline.plot_topic(tmp / f"topic_{k + 1:02d}.png", k, n_terms=args.top_terms)
        (tmp / "report.html").write_bytes(tracking_page(timeline, title=title).to_bytes())
        io.save(tmp / "model", model=model, vectorizer=vectorizer)
        (tmp / MARKER).write_text(json.dumps(timeline.to_dict(), indent=1), encoding="utf-8")


def _header(args, model):
    """The settings of the run as an HTML comment; λ1 and λ2 are the model's (defaults included)."""
    p = {k: getattr(args, k) for k in ("topics", "lambda1", "lambda2", "lambda1_scale", "rho", "batch_size",
                                        "n_inner", "idf", "period", "date_field", "seed")}
    if getattr(args, "birth", False):
        p["birth"], p["max_topics"] = True, model.max_components
    p["lambda1"], p["lambda2"] = model.lambda1, model.lambda2
    return "<!-- rlsi track " + ", ".join(f"{k}={v}" for k, v in p.items()) + " -->\n"
