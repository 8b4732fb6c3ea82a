"""``rlsi fit CORPUS -o MODEL_DIR``: vectorize a corpus and fit a topic model, then save both.

``--model`` chooses among the learners of :mod:`rlsi.cli.learners`: RLSI (batch, ``--online``, on a Dask cluster
or a device), the group models, and the STC family (``stc``, ``cstc``, ``ostc``, ``medstc``, ``omedstc``: fitted
on word counts, :mod:`rlsi.cli.stc_fit`; ``rlsi fit-stc`` is the same under its older name).

``rlsi fit MORE --resume MODEL_DIR [-o OUT]`` continues the online model of MODEL_DIR (written by
``rlsi fit --online``, or the ``model/`` of ``rlsi track``) on more documents: they are streamed once, in
order, in mini-batches of the model's size, through the saved vectorizer (new terms become new columns)
and the saved model; both are saved, so a later ``--resume`` continues where this one stopped.
"""

from __future__ import annotations

import logging
import os
import time

from ..errors import RLSIError
from . import _common, _output, scale as _scale
from ._dask import add_dask_arguments, fit_dask, fit_dask_files
from ._online import add_online_arguments, fit_online_from_args, load_resumable, resume_online
from .learners import (births_note, check_modes, check_not_empty, check_options, fit_modes, get_learner, learners,
                       model_help, option_adders, option_defaults, report_fit)
from .stc_fit import fit_counts

log = logging.getLogger(__name__)


def register(sub):
    p = sub.add_parser("fit", help="fit a topic model on a corpus and save it",
                       description="Fit RLSI on a corpus (JSON lines, gzip or not, or a folder of .txt "
                                   "files) and save the model and its vectorizer to MODEL_DIR. With "
                                   "--resume, continue a saved online model on more documents.")
    p.add_argument("corpus", nargs="*",
                   help="corpus file (.jsonl / .jsonl.gz) or folder of .txt files; several .jsonl(.gz) files "
                        "with --backend dask are read and vectorized on the Dask workers")
    p.add_argument("-o", "--output", help="model directory to write (with --resume: default MODEL_DIR)")
    p.add_argument("--model", choices=list(learners("fit")), default="rlsi", help=model_help("fit"))
    _common.add_model_arguments(p)
    _common.add_batch_arguments(p)
    _common.add_text_arguments(p)
    for add_options in option_adders("fit"):  # the learners' own options (rlsi.cli.learners)
        add_options(p)
    online = p.add_argument_group("online learning")
    online.add_argument("--online", action="store_true", help="stream the corpus through OnlineRLSI")
    online.add_argument("--resume", metavar="MODEL_DIR",
                        help="continue the online model of MODEL_DIR on CORPUS (implies --online; the "
                             "model's and the vectorizer's saved settings apply, not the options here)")
    add_online_arguments(online)
    add_dask_arguments(p)
    _scale.add_matrix_arguments(p)  # --matrix DIR, --memory-limit (rlsi.cli.scale)
    p.set_defaults(func=run, option_defaults=option_defaults(p))


def run(args):
    from ..text import read_corpus

    output = args.output or args.resume
    if output is None:
        raise RLSIError("give the model directory to write with -o MODEL_DIR")
    if args.resume and _common.seed_params(args):  # not ignored as the other options: they would relabel topics
        raise RLSIError("--seed-terms and --seed-strength do not apply with --resume: the saved model goes on with "
                        "the seed words it was fitted with; fit a new model to seed other words")
    _output.model_destination(output, reads=_output.fit_inputs(args, output))
    if not (args.resume and os.path.realpath(output) == os.path.realpath(args.resume)):  # else: resumed in place
        _output.replacing_notice(output, quiet=args.quiet)
    if not args.resume:  # a resume goes on with the saved settings (documented): its options are not checked
        check_options(get_learner(args.model), args, args.option_defaults)
        if get_learner(args.model).counts:
            return _fit_counts(args, output)
    if args.matrix or not args.corpus:
        return _scale.fit_matrix(args, output)
    fields = _common.text_fields(args)
    if args.resume:
        return _resume(args, output, fields)
    learner = get_learner(args.model)
    check_modes(learner, fit_modes(args))
    model = learner.build(args)  # options are checked before the corpus is read
    start = time.perf_counter()
    if len(args.corpus) > 1:  # read, vectorized and fitted on the Dask workers (rlsi.cli._dask)
        model, vectorizer, (n_docs, n_terms) = fit_dask_files(args, args.corpus, fields, model)
        return report_fit(learner, output, {"model": model, "vectorizer": vectorizer}, n_docs, n_terms, start,
                          quiet=args.quiet)
    corpus = read_corpus(args.corpus[0], text_fields=fields)
    vectorizer = _common.make_vectorizer(args)
    X = vectorizer.fit_transform(_common.reading(corpus.texts, args))
    log.info("vectorized %d documents x %d terms (%d non-zeros)", X.shape[0], X.shape[1], X.nnz)
    _common.check_learnable(X, X.shape[0])
    y = learner.targets(args, corpus)
    if getattr(args, "backend", "local") == "dask":
        model = fit_dask(args, X, model)
    else:
        if learner.preflight:  # the peak memory of the fit, checked before it starts
            _scale.preflight(args, model, X)
        vocab = _common.fit_vocabulary(model, vectorizer)  # seed words are looked up in it
        model = fit_online_from_args(args, X, model=model, **vocab) if args.online else model.fit(X, y, **vocab)
    return report_fit(learner, output, {"model": model, "vectorizer": vectorizer}, X.shape[0], X.shape[1], start,
                      quiet=args.quiet, X=X)


def _fit_counts(args, output):
    """``--model stc|cstc|ostc|medstc|omedstc``: the word counts of one corpus file (:mod:`rlsi.cli.stc_fit`)."""
    learner = get_learner(args.model)
    check_modes(learner, fit_modes(args))
    if len(args.corpus) != 1:
        raise RLSIError(f"--model {learner.name} fits one corpus file; give one (got {len(args.corpus)})")
    model = learner.build(args)  # options are checked before the corpus is read
    start = time.perf_counter()
    model, vectorizer, (n_docs, n_terms) = fit_counts(args, learner, model, args.corpus[0])
    return report_fit(learner, output, {"model": model, "vectorizer": vectorizer}, n_docs, n_terms, start,
                      quiet=args.quiet)


def _resume(args, output, fields):
    from .. import io
    from ..text import read_corpus

    start = time.perf_counter()
    if len(args.corpus) > 1:
        raise RLSIError("--resume continues on one corpus file; concatenate the files or resume once per file")
    seen = _output.resume_fingerprint(args.resume, output)  # taken before reading: a later writer is seen
    model, stream = load_resumable(args.resume)
    if args.device is not None:  # a placement, not a setting: the saved stream goes on where it is asked to
        model.set_params(device=args.device)
    corpus = read_corpus(args.corpus[0], text_fields=fields)
    before = model.n_docs_seen_
    resume_online(model, stream, corpus.texts, quiet=args.quiet)
    check_not_empty(model, model.n_docs_seen_)
    io.save(output, model=model, vectorizer=stream, unchanged_since=seen)
    if not args.quiet:
        print(f"resumed {type(model).__name__} from {args.resume}: {model.n_docs_seen_ - before} more "
              f"documents ({model.n_docs_seen_} in all), {stream.n_terms_} terms, "
              f"K={model.n_components_}{births_note(model)}, "
              f"{len(model.dead_topics())} empty topic(s), {time.perf_counter() - start:.1f}s")
        print(f"saved to {output}")
    return 0
