"""``rlsi evaluate``: the TOIS retrieval comparison (term baseline vs baseline + topic models).

A collection is a folder in the shared format (``corpus.jsonl.gz`` or ``corpus.jsonl``, ``queries.jsonl``
or ``queries.tsv``, ``qrels.tsv``) given with ``--collection DIR``, or three files given with
``--corpus``, ``--queries`` and ``--qrels`` (each of these also overrides the folder's file).

For every topic model of ``--methods`` and every setting of its grid (``--k-grid``, and ``--lambda1-grid``
for RLSI) the model is fitted once, and Eq. 9 is evaluated for every α of the grid. ``--protocol best``
reports the best setting by NDCG@1 on the test queries (the paper's protocol, optimistic);
``--protocol cv`` tunes the setting and α on training folds of queries and reports held-out scores (the
honest one); ``both`` prints both. Stars mark p < 0.05 against the term baseline (one-sided paired t-test,
or ``--test randomization``). A tuned setting on the edge of its grid (the smallest or largest K, λ1 or
fold λ of the grid, or α at 0 or 1) is printed as a warning under the table, and saved in the JSON
(``edge_warnings``) and the Markdown: the optimum may lie beyond the grid, so extend it.

Grids (``--grid``): ``default`` is K in 10, 20, 50, 100 for every method and lambda1 in 0.0003, 0.001,
0.003, 0.01 (per 1000 documents) for RLSI: 4 K x 4 baselines + 16 RLSI models with the default methods,
the answer inside the grid on MED (RLSI, LSI and NMF choose K = 50; RLSI lambda1 = 0.001 or 0.003).
``paper`` is the paper's K range 10..50 with lambda1 in 0.001..0.02 (the ranking benchmark's grid);
``extended`` reaches K = 300 for every method and lambda1 = 1e-5 for RLSI (K 10,20,50,100,200,300; lambda1
1e-5,1e-4,0.001,0.01), for when a grid's optimum is on its edge (the warning says so); its RLSI fits at
K >= 200 and lambda1 <= 1e-4 take minutes each. Each (method, setting) is fitted once and shared by both
protocols, every alpha and every fold. ``--k-grid`` and ``--lambda1-grid`` override the preset.

Existing TREC runs can be evaluated instead: ``rlsi evaluate --qrels QRELS --run A.run --run B.run``
prints the metrics of each run, with stars for p < 0.05 against the first run.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..errors import RLSIError
from ._choices import GRID_NAMES
from ._common import non_negative_int

DEFAULT_METHODS = "bm25,lsi,plsi,lda,nmf,rlsi"
TERM_BASELINES = ("bm25", "vsm")


def _floats(text, name):
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise RLSIError(f"{name} {text!r}: expected comma-separated numbers") from None
    if not values:
        raise RLSIError(f"{name} {text!r} names no value: give comma-separated values, or leave the option out "
                        f"for the preset's")
    return values


def _ints(text, name):
    values = _floats(text, name)
    if any(v != int(v) or v < 1 for v in values):
        raise RLSIError(f"{name} {text!r}: expected comma-separated positive integers")
    return [int(v) for v in values]


def register(subparsers):
    p = subparsers.add_parser(
        "evaluate", help="compare BM25 with BM25 + topic models on a test collection (MAP, NDCG)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_argument_group("collection")
    src.add_argument("--collection", metavar="DIR",
                     help="folder with corpus, queries and qrels, or the name of a collection shipped with rlsi "
                          "(med)")
    src.add_argument("--corpus", metavar="FILE", help="documents (JSON lines, optionally .gz)")
    src.add_argument("--queries", metavar="FILE", help="queries (JSON lines {id, text} or qid<TAB>text)")
    src.add_argument("--qrels", metavar="FILE", help="TREC qrels 'qid 0 docid rel'")
    src.add_argument("--run", metavar="FILE", action="append",
                     help="evaluate this TREC run against --qrels (repeatable) instead of fitting models")
    src.add_argument("--text-fields", default="title,text", help="JSON fields joined as document text")
    m = p.add_argument_group("methods and grids")
    m.add_argument("--methods", default=DEFAULT_METHODS,
                   help=f"comma-separated: the term baseline (bm25 or vsm) and topic models among "
                        f"lsi, plsi, lda, nmf, rlsi, rlsi-l2l1, rlsi-l1l1, rlsi-l2l2, and the group models "
                        f"grlsi, crlsi, gnmf, cnmf (K = topics of one class, on --classes k-means classes; a "
                        f"query is scored on each document's class) (default {DEFAULT_METHODS})")
    m.add_argument("--classes", type=int, default=None, metavar="P",
                   help="number of k-means classes of the group models (default 8)")
    m.add_argument("--protocol", choices=["cv", "best", "both"], default="both",
                   help="cv: settings tuned on training folds of queries, held-out scores; best: the best "
                        "setting on the test queries (the paper's, optimistic); both (default)")
    m.add_argument("--grid", choices=GRID_NAMES, default="default",
                   help="named K and lambda1 grids: 'default' (K 10..100), 'paper' (K 10..50) or 'extended' (K up "
                        "to 300, "
                        "lambda1 down to 1e-5; far slower, see above)")
    m.add_argument("--k-grid", default=None, help="numbers of topics K (default: the --grid preset's, 10,20,50,100)")
    m.add_argument("--lambda1-grid", default=None,
                   help="RLSI lambda1 values, per 1000 documents (default: the --grid preset's)")
    m.add_argument("--fold-grid", default=None,
                   help="RLSI folding-in lambda values, 'model' = the model's own ridge, 'inf' = projection "
                        "(default: the protocol's choice)")
    m.add_argument("--alpha-step", type=float, default=0.05, help="step of the alpha grid in [0, 1]")
    m.add_argument("--folds", type=int, default=5, help="cross-validation folds over queries (default 5)")
    m.add_argument("--repeats", type=int, default=1, help="cross-validation repetitions (default 1)")
    m.add_argument("--k1", type=float, default=1.2, help="BM25 k1 (default 1.2)")
    m.add_argument("--b", type=float, default=0.75, help="BM25 b (default 0.75)")
    m.add_argument("--stemmer", choices=["none", "english", "porter"], default=None,
                   help="stemming of documents and queries (default: the protocol's choice)")
    m.add_argument("--norm", default=None, help="per-query score normalisation: minmax, zscore, max, none")
    m.add_argument("--test", choices=["ttest", "randomization"], default="ttest",
                   help="significance test against the term baseline: one-sided paired t-test (default) or "
                        "randomization test")
    m.add_argument("--seed", type=non_negative_int, default=0, help="seed of the folds and of the models (>= 0)")
    o = p.add_argument_group("output")
    o.add_argument("--json", metavar="OUT", help="write all results (with per-query values) as JSON")
    o.add_argument("--markdown", metavar="OUT", help="write the tables as Markdown")
    o.add_argument("-q", "--quiet", dest="quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no progress bars")
    p.set_defaults(func=run)
    return p


def _parse_methods(text):
    from ..experiments import METHODS

    names = [x.strip().lower() for x in text.split(",") if x.strip()]
    if not names:
        raise RLSIError("--methods is empty")
    term = [n for n in names if n in TERM_BASELINES]
    if len(set(term)) > 1:
        raise RLSIError("--methods names both bm25 and vsm; choose one term baseline")
    unknown = [n for n in names if n not in TERM_BASELINES and n not in METHODS]
    if unknown:
        raise RLSIError(f"unknown method {unknown[0]!r}; choose among {', '.join([*TERM_BASELINES, *METHODS])}")
    topic = list(dict.fromkeys(n for n in names if n in METHODS))
    return (term[0] if term else "bm25"), topic


def _write(path, text):
    from ..io import write_text

    write_text(path, text, make_parents=False)


def _check_outputs(args):
    """--json and --markdown must be writable before any work (one line, nothing computed in vain)."""
    from ._output import file_destination

    for option, path in (("--json", args.json), ("--markdown", args.markdown)):
        if path:
            file_destination(path, what=f"{option} output")
            if not Path(path).parent.is_dir():
                raise RLSIError(f"cannot write {option} output {path}: folder {Path(path).parent} does not exist")


def _evaluate_runs(args, quiet):
    from ..evaluation import compare, evaluate, mean_scores, read_qrels, read_run

    if not args.qrels:
        raise RLSIError("--run needs --qrels (the judgements to evaluate the runs against)")
    qrels = read_qrels(args.qrels)
    if not qrels:
        raise RLSIError(f"qrels file {args.qrels} holds no judgement")
    metrics = ["map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10"]
    runs = []
    for r in args.run:
        run_scores = read_run(r)
        if not any(run_scores.values()):
            raise RLSIError(f"run file {r} holds no result")
        runs.append((Path(r).name, run_scores))
    per = [(name, evaluate(run_scores, qrels, metrics)) for name, run_scores in runs]
    lines = [f"{'Run':<30}" + "".join(f"{x.upper():>10}" for x in metrics)]
    md = ["| Run | " + " | ".join(x.upper() for x in metrics) + " |", "|---|" + "---:|" * len(metrics)]
    out = {"metrics": metrics, "runs": []}
    for i, (name, values) in enumerate(per):
        means = mean_scores(values)
        ps = compare(values, per[0][1], test=args.test) if i else None
        cells = [f"{means[x]:9.4f}" + ("*" if ps and ps[x].p_value < 0.05 else " ") for x in metrics]
        lines.append(f"{name:<30}" + "".join(cells))
        md.append(f"| {name} | " + " | ".join(c.strip() for c in cells) + " |")
        out["runs"].append({"run": name, "means": means, "per_query": values,
                            "p_values": {x: ps[x].p_value for x in metrics} if ps else None})
    print("\n".join(lines))
    print(f"(* p < 0.05 against {per[0][0]}, one-sided paired {args.test})")
    if args.json:
        import json

        _write(args.json, json.dumps(out, indent=1))
    if args.markdown:
        _write(args.markdown, "\n".join(md) + "\n")
    return 0


def _collection(name):
    """``--collection``: a folder, else the packaged collection of that name (``med``)."""
    from ..datasets import PACKAGED_COLLECTIONS, collection_dir

    if name is None or Path(name).exists() or str(name).lower() not in PACKAGED_COLLECTIONS:
        return name
    return collection_dir(name)


def run(args):
    quiet = bool(getattr(args, "quiet", False))
    _check_outputs(args)
    if args.run:
        return _evaluate_runs(args, quiet)
    from ..evaluation import load_collection
    from ..experiments import (DEFAULT_FIT_NORMALIZE, DEFAULT_FOLD_GRID, DEFAULT_STEMMER, GRID_PRESETS,
                               ProtocolConfig, prepare_collection, run_protocol)
    from ..retrieval.combine import NORMALIZERS
    from ..text import TfidfVectorizer

    if args.collection is None and not (args.corpus and args.queries and args.qrels):
        raise RLSIError("give --collection DIR, or all of --corpus, --queries and --qrels")
    term_model, topic = _parse_methods(args.methods)
    extra = _group_extra(topic, args.classes)
    preset = GRID_PRESETS[args.grid]
    k_grid = _ints(args.k_grid, "--k-grid") if args.k_grid is not None else list(preset["k_grid"])
    lambda1_grid = (_floats(args.lambda1_grid, "--lambda1-grid") if args.lambda1_grid is not None
                    else list(preset["lambda1_grid"]))
    if args.fold_grid is None:
        fold_grid = DEFAULT_FOLD_GRID
    else:
        fold_grid = []
        for x in args.fold_grid.split(","):
            x = x.strip().lower()
            if x:
                fold_grid.append(None if x == "model" else (math.inf if x == "inf" else _floats(x, "--fold-grid")[0]))
    if not 0 < args.alpha_step <= 1:
        raise RLSIError(f"--alpha-step {args.alpha_step}: must be in (0, 1]")
    n_steps = int(round(1.0 / args.alpha_step))
    if not math.isclose(n_steps * args.alpha_step, 1.0, abs_tol=1e-9):
        raise RLSIError(f"--alpha-step {args.alpha_step} must divide 1 (e.g. 0.05, 0.1, 0.25)")
    alphas = tuple(round(i * args.alpha_step, 10) for i in range(n_steps + 1))
    if args.norm is not None and args.norm not in NORMALIZERS:
        raise RLSIError(f"--norm {args.norm!r}: choose one of {', '.join(NORMALIZERS)}")
    if args.folds < 2:
        raise RLSIError(f"--folds {args.folds}: need at least 2")
    if args.repeats < 1:
        raise RLSIError(f"--repeats {args.repeats}: need at least 1")
    fields = tuple(f.strip() for f in args.text_fields.split(",") if f.strip())
    coll = load_collection(_collection(args.collection), corpus=args.corpus, queries=args.queries, qrels=args.qrels,
                           text_fields=fields)
    stemmer = DEFAULT_STEMMER if args.stemmer is None else (None if args.stemmer == "none" else args.stemmer)
    prepared = prepare_collection(coll, TfidfVectorizer(stemmer=stemmer))
    if len(prepared.query_ids) < args.folds and args.protocol in ("cv", "both"):
        raise RLSIError(f"cross-validation with {args.folds} folds needs at least {args.folds} evaluated queries; "
                        f"the collection has {len(prepared.query_ids)} (use --protocol best or fewer --folds)")
    empty = int(prepared.empty_queries.sum())
    if empty:
        print(f"rlsi: note: {empty} evaluated quer(y/ies) have no term in the vocabulary; they score 0",
              file=sys.stderr)
    protocols = ("cv", "best") if args.protocol == "both" else (args.protocol,)
    config = ProtocolConfig(protocols=protocols, k_grid=k_grid, lambda1_grid=lambda1_grid, fold_grid=fold_grid,
                            extra=extra, alphas=alphas, term_model=term_model, k1=args.k1, b=args.b,
                            topic_norm=args.norm, term_norm=args.norm, fit_normalize=DEFAULT_FIT_NORMALIZE,
                            n_folds=args.folds, n_repeats=args.repeats, test=args.test, seed=args.seed,
                            progress=not quiet, log_edges=False)
    report = run_protocol(coll, topic, config, prepared=prepared)
    report.settings["stemmer"] = stemmer
    report.settings["grid"] = args.grid
    print(report.to_text(edges=False))
    for protocol in () if quiet else protocols:  # once each, after the tables (and in --json / --markdown)
        for w in report.edge_warnings(protocol):
            print(f"rlsi: warning: {protocol}: {w['message']}", file=sys.stderr)
    if not quiet:
        for protocol in protocols:
            for sel in report.selections[protocol]:
                print(f"{protocol:>4} {sel.label}: {_chosen_summary(sel.chosen)}")
    if args.json:
        _write(args.json, report.to_json())
    if args.markdown:
        _write(args.markdown, report.to_markdown(show_p=True))
    return 0


def _group_extra(topic, classes):
    """``ProtocolConfig.extra``: the number of k-means classes for the group models named in --methods."""
    if classes is None:
        return None
    if classes < 1:
        raise RLSIError(f"--classes {classes}: the group models need at least 1 class")
    return {m: {"n_classes": classes} for m in topic if m in ("grlsi", "crlsi", "gnmf", "cnmf")}


def _chosen_summary(chosen):
    def fmt(c):
        s = c["setting"]
        parts = [f"K={s.get('n_components')}"]
        if "lambda1" in s:
            parts.append(f"lambda1={s['lambda1']:g}")
        if "fold_lambda2" in s:
            f = s["fold_lambda2"]
            parts.append("fold=" + ("model" if f is None else ("inf" if math.isinf(f) else f"{f:g}")))
        parts.append(f"alpha={c['alpha']:g}")
        return " ".join(parts)

    seen = {}
    for c in chosen:
        key = fmt(c)
        seen[key] = seen.get(key, 0) + 1
    return "; ".join(k if n == 1 else f"{k} (x{n})" for k, n in seen.items())
