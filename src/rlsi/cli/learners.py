"""The learners the CLI fits: one registry, :data:`LEARNERS`, ``(command, name) -> Learner``.

A :class:`Learner` declares what the commands need of a model: the estimator it builds from the parsed
options (``build``), its own argument groups (``options``; the options every learner of a command shares —
the RLSI objective, batch learning, text — are added by the command), whether it is fitted on the corpus's
classes (``labels``), the ways it can fit (``modes``: ``batch`` on this machine, ``online``, on a Dask
cluster, on a matrix directory, on a ``device`` other than the host) and how its result prints (``summary``).
``rlsi fit --model NAME`` and ``rlsi fit-stc --model NAME`` choose among :func:`learners` of their command:
their ``--help`` choices, their refusals and :func:`get_learner`'s message derive from the registry's keys.

Adding a learner to the CLI is one :func:`register` call here (and, for a new option group, its adder).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ..errors import RLSIError
from . import _common
from ._online import online_model_from_args
from .group import add_group_arguments, group_labels_from_args, group_model_from_args
from .stc_fit import add_stc_arguments

__all__ = ["Learner", "LEARNERS", "MODES", "register", "learners", "get_learner", "option_adders", "model_help",
           "fit_modes", "check_modes", "check_not_empty", "check_options", "option_defaults", "report_fit",
           "topic_model_summary", "coding_summary", "stc_labels"]

#: The ways a learner can fit, with the option that asks for each.
MODES = {"batch": "in batch on this machine", "online": "--online", "dask": "--backend dask", "matrix": "--matrix DIR",
         "device": "--device DEVICE"}


def topic_model_summary(model, n_docs, n_terms, elapsed):
    """The lines ``rlsi fit`` prints after fitting a topic model (RLSI, online RLSI, group models)."""
    from ..quality import avg_compactness

    dead = len(model.dead_topics())
    steps = f"{model.n_batches_} mini-batches" if hasattr(model, "n_batches_") else \
        f"{getattr(model, 'n_iter_', '?')} iterations"
    lines = [f"fitted {type(model).__name__}: {n_docs} documents, {n_terms} terms, "
             f"K={model.components_.shape[0]}{births_note(model)}, {steps}, "
             f"AvgComp={avg_compactness(model.components_):.4f}, {dead} empty topic(s), {elapsed:.1f}s"]
    extra = []
    if getattr(model, "target_terms_per_topic", None) is not None:
        extra.append(f"λ1 = {model.lambda1_:.6g} ({model.lambda1_scale}) found for "
                     f"{model.target_terms_per_topic} terms per topic")
    if getattr(model, "topic_representation_", None) is not None:
        extra.append(f"topics held {model.topic_representation_} in the last iteration")
    if extra:
        lines.append("  " + "; ".join(extra))
    return lines


def births_note(model):
    """`` (3 born: T21 at mini-batch 40, ...)`` for an online model whose stream gave birth to topics, else ``""``."""
    births = getattr(model, "births_", None)
    if not births:
        return ""
    return f" ({len(births)} born: " + ", ".join(f"T{b['topic'] + 1} at mini-batch {b['batch']}" for b in births) + ")"


def coding_summary(model, n_docs, n_terms, elapsed):
    """The line ``rlsi fit-stc`` prints after fitting a sparse topical coding model."""
    return [f"fitted {type(model).__name__}: {n_docs} documents, {n_terms} terms, K={model.n_components}, "
            f"word-code sparsity {model.word_code_sparsity_:.3f}, {elapsed:.1f}s"]


@dataclass(frozen=True)
class Learner:
    """One learner of a command (see the module docstring).

    build : ``args -> estimator``, the unfitted estimator from the parsed options (checked: options fail
        before any work).
    options : adders of the learner's own argument groups (``adder(parser)``), added once per command.
    labels : ``(args, corpus) -> y`` for a learner fitted on the corpus's classes (None: ``fit(X)``).
    modes : the :data:`MODES` it fits in.
    preflight : its peak memory is estimated (:mod:`rlsi.models.memory`) and checked before a batch fit.
    summary : ``(model, n_docs, n_terms, seconds) -> lines`` printed after the fit.
    stc_kind : ``(online, max_margin)`` of an STC learner (which ``rlsi fit-stc`` options it takes).
    takes : ``args -> set`` of the ``rlsi fit`` options (their dests) the learner reads besides the shared ones
        (:func:`check_options` refuses the others); None: not checked.
    counts : fitted on the corpus's word counts (the STC family: :func:`rlsi.cli.stc_fit.fit_counts`), not on
        tf-idf.
    """

    command: str
    name: str
    help: str
    build: Callable
    options: tuple = ()
    labels: Callable | None = None
    modes: frozenset = frozenset({"batch"})
    preflight: bool = False
    summary: Callable = topic_model_summary
    stc_kind: tuple = (False, False)
    takes: Callable | None = None
    counts: bool = False

    def targets(self, args, corpus):
        """``y`` of ``fit(X, y)``: the corpus's classes for a learner with ``labels``, else None."""
        return None if self.labels is None else self.labels(args, corpus)


#: ``{(command, name): Learner}``, in the order ``--help`` lists them.
LEARNERS: dict = {}


def register(learner):
    """Add ``learner`` to :data:`LEARNERS` (its ``(command, name)`` must be new). Returns it."""
    key = (learner.command, learner.name)
    if key in LEARNERS:
        raise ValueError(f"learner {learner.name!r} of {learner.command!r} is registered twice")
    LEARNERS[key] = learner
    return learner


def learners(command="fit"):
    """``{name: Learner}`` of one command, in registry order."""
    return {name: lrn for (cmd, name), lrn in LEARNERS.items() if cmd == command}


def get_learner(name, command="fit"):
    """The learner ``name`` of ``command`` (RLSIError naming the choices)."""
    found = learners(command)
    if name not in found:
        raise RLSIError(f"--model {name!r}: choose among {', '.join(found)}")
    return found[name]


def option_adders(command="fit"):
    """The argument-group adders the learners of ``command`` declare, each once, in registry order."""
    return list(dict.fromkeys(a for lrn in learners(command).values() for a in lrn.options))


def model_help(command="fit"):
    """The ``--model`` help of ``command``: each learner's name and one line."""
    return "; ".join(f"{name}: {lrn.help}" for name, lrn in learners(command).items())


def fit_modes(args):
    """The :data:`MODES` a parsed ``rlsi fit`` asks for."""
    modes = {"online" if getattr(args, "online", False) or getattr(args, "resume", None) else "batch"}
    if getattr(args, "backend", "local") == "dask":
        modes.add("dask")
    if getattr(args, "matrix", None):
        modes.add("matrix")
    if getattr(args, "device", None) not in (None, "cpu"):
        modes.add("device")
    return modes


def check_modes(learner, modes):
    """Refuse (RLSIError) a mode ``learner`` does not fit in, naming the learners that do."""
    for mode in sorted(set(modes) - learner.modes):
        able = [n for n, lrn in learners(learner.command).items() if mode in lrn.modes]
        raise RLSIError(f"--model {learner.name} does not fit with {MODES[mode]}; {MODES[mode]} fits "
                        f"--model {' / '.join(able) or 'none'} (--model {learner.name} fits "
                        f"{', '.join(MODES[m] for m in sorted(learner.modes))})")


#: The ``rlsi fit`` options every learner takes: what it reads, where its output goes, how the text is made,
#: the fit's modes (refused by :func:`check_modes` where they do not apply) and the Dask cluster.
_FIT_SHARED = frozenset({"corpus", "output", "model", "online", "resume", "device", "matrix", "memory_limit",
                         "no_memory_check", "text_fields", "stem", "min_df", "no_stop_words", "no_norm", "dtype",
                         "backend", "workers", "scheduler", "scheduler_timeout", "checkpoint_dir", "resume_checkpoint", "seed", "jobs"})
_OBJECTIVE = frozenset({"lambda1", "lambda2", "lambda1_scale", "topic_penalty", "doc_penalty"})
_SEEDS = frozenset({"seed_terms", "seed_strength"})  # seed words (rlsi.models.seeds)
_RLSI_BATCH = _OBJECTIVE | _SEEDS | {"topics", "max_iter", "tol", "init", "terms_per_topic", "topic_representation",
                                     "topic_sweeps"}
_RLSI_ONLINE = _OBJECTIVE | _SEEDS | {"topics", "topic_sweeps", "batch_size", "rho", "n_inner", "n_passes", "shuffle",
                                      "reseed_dead"}
_GROUP = frozenset({"label_field", "classes", "shared_topics", "class_topics", "unlabeled", "max_iter", "tol"})


def _group_takes(name):
    takes = set(_GROUP) - ({"shared_topics"} if name in ("crlsi", "cnmf") else set())
    return takes | (_OBJECTIVE | {"init", "lambda1_class"} if name in ("grlsi", "crlsi") else set())


def option_defaults(parser):
    """``{dest: (option, default)}`` of a parser's options (for :func:`check_options`)."""
    return {a.dest: (a.option_strings[-1], a.default) for a in parser._actions if a.option_strings}


def check_options(learner, args, defaults):
    """Refuse (RLSIError) the first option given a value of its own that ``learner`` would ignore (``rlsi fit
    --model gnmf --lambda1 0.1``, ``--online --max-iter 50``), naming the learners that take it.
    ``defaults``: :func:`option_defaults` of the command's parser."""
    if learner.takes is None:
        return
    takes = learner.takes(args) | _FIT_SHARED
    written = getattr(args, "given_options", None)  # the options on the command line (rlsi.cli.main)
    for dest, (option, default) in defaults.items():
        given = dest in written if written is not None else hasattr(args, dest) and getattr(args, dest) != default
        if dest in takes or not given or dest in ("quiet", "sub_verbose", "verbose", "help"):
            continue
        online = getattr(args, "online", False)
        mode = " --online" if learner.name == "rlsi" and online else ""
        if learner.name == "rlsi" and dest in _RLSI_BATCH | _RLSI_ONLINE:
            hint = "it applies to the batch fit (drop --online)" if online else "it applies with --online"
        else:
            able = [n for n, lrn in learners(learner.command).items()
                    if lrn.takes is not None and dest in lrn.takes(args) | (_RLSI_BATCH if n == "rlsi" else set())]
            hint = f"it applies to --model {' / '.join(able) or 'none'}"
        raise RLSIError(f"--model {learner.name}{mode} does not take {option} (it would be ignored): {hint}; drop "
                        f"it")


def check_not_empty(model, n_docs, X=None):
    """Refuse (RLSIError, nothing saved) a fitted topic model whose every topic is empty, naming the λ1 to
    try: a tenth of the λ1 above which the fit starts with every topic empty (``BatchRLSI.lambda1_ceiling``
    of X), or of the one given where that is not known (or the λ2 to lower, when that is what emptied them)."""
    dead = getattr(model, "dead_topics", None)
    if dead is None or not hasattr(model, "lambda1"):  # STC: topics on the simplex, never empty
        return
    K = model.components_.shape[0]
    if len(dead()) < K:
        return
    if model.lambda2 >= 1e3:
        advice = f"--lambda2 {model.lambda2:g} shrinks every document vector to almost zero; try --lambda2 1"
    else:
        scale = "" if model.lambda1_scale == "per_doc" else " (paper scale)"
        per = " per 1000 documents" if model.lambda1_scale == "per_doc" else ""
        ceiling = model.lambda1_ceiling(X) if X is not None and hasattr(model, "lambda1_ceiling") else None
        start = "" if ceiling is None else f" (every topic starts empty above {ceiling:.2g})"
        advice = (f"--lambda1 {model.lambda1:g}{per}{scale} is too strong for these {n_docs} documents{start}; "
                  f"try --lambda1 {_tenth(model.lambda1 if ceiling is None else ceiling)}, or --terms-per-topic N "
                  f"to have the λ1 found")
        if getattr(model, "lambda1_class", None) is not None:
            advice += f" (and --lambda1-class {_tenth(model.lambda1_class)})"
    raise RLSIError(f"all {K} topics of the fit are empty (every weight zero), nothing is saved: {advice}")


def _tenth(value):
    """A tenth of ``value`` with two significant digits, as a user would type it (0.005, 100)."""
    return format(float(f"{value / 10:.2g}"), "g")


def report_fit(learner, output, components, n_docs, n_terms, start, *, quiet, X=None):
    """Save ``components`` into ``output`` and, unless quiet, print the learner's summary; a model whose
    every topic is empty is refused (:func:`check_not_empty`; X, the matrix fitted on, for its advice)."""
    from .. import io

    check_not_empty(components["model"], n_docs, X)
    io.save(output, **components)
    if not quiet:
        for line in learner.summary(components["model"], n_docs, n_terms, time.perf_counter() - start):
            print(line)
        print(f"saved to {output}")
    return 0


# ------------------------------------------------------------------ rlsi fit
def _rlsi(args):
    if getattr(args, "online", False):
        return online_model_from_args(args)
    return _common.batch_model_from_args(args, bool(getattr(args, "quiet", False)))


def _group(args):
    return group_model_from_args(args, bool(getattr(args, "quiet", False)))


register(Learner("fit", "rlsi", "BatchRLSI, or OnlineRLSI with --online (the default)", _rlsi,
                 options=(_common.add_device_arguments,),
                 modes=frozenset({"batch", "online", "dask", "matrix", "device"}), preflight=True,
                 takes=lambda args: _RLSI_ONLINE if getattr(args, "online", False) else _RLSI_BATCH))
for _name, _what in (("grlsi", "GroupRLSI, shared and class topics"), ("gnmf", "GroupNMF, shared and class topics"),
                     ("crlsi", "CRLSI, class topics only"), ("cnmf", "CNMF, class topics only")):
    register(Learner("fit", _name, _what, _group, options=(add_group_arguments,), labels=group_labels_from_args,
                     takes=lambda args, _n=_name: _group_takes(_n)))


# ------------------------------------------------------------------ rlsi fit-stc
def stc_labels(args, corpus):
    """The class label (str) of each document of ``corpus`` from ``--label-field`` (a list: its first label, as
    for the group models: :func:`rlsi.text.labels.document_labels`)."""
    from ..text.labels import document_labels

    values = corpus.fields.get(args.label_field)
    if values is None:
        raise RLSIError(f"the corpus has no field {args.label_field!r}; check --label-field")
    return document_labels(values, args.label_field, remedy="label them, or fit an unsupervised model (--model stc)")


#: The ``rlsi fit-stc`` options of some STC learners only: option -> (attribute, applies(online, max_margin)).
#: Given to another learner, each is refused in one line (not ignored). ``--lda-passes`` applies to a fit that
#: starts from LDA's topics (``--dictionary-init lda``, or a preset's).
STC_OPTIONS = {"--max-iter": ("max_iter", lambda online, mm: not online),
               "--batch-size": ("batch_size", lambda online, mm: online),
               "--epochs": ("epochs", lambda online, mm: online),
               "--tau0": ("tau0", lambda online, mm: online),
               "--svm-codes": ("svm_codes", lambda online, mm: online and mm),
               **{opt: (attr, lambda online, mm: mm) for opt, attr in (("--delta", "delta"), ("--C", "C"),
                                                                       ("--hinge", "hinge"), ("--refit-C", "refit_C"))}}


def _check_stc_options(name, online, max_margin, args, dictionary_init):
    """RLSIError naming the first option given on the command line that ``--model name`` does not take."""
    for option, (attr, applies) in STC_OPTIONS.items():
        if _given(args, attr) is not None and not applies(online, max_margin):
            able = [n for (cmd, n), lrn in LEARNERS.items() if cmd == "fit-stc" and applies(*lrn.stc_kind)]
            raise RLSIError(f"--model {name} does not take {option}: it applies to --model {' / '.join(able)}; "
                            f"drop it")
    if getattr(args, "lda_passes", None) is not None and dictionary_init != "lda":
        raise RLSIError(f"--lda-passes applies to a fit that starts from LDA's topics (--dictionary-init lda); "
                        f"--model {name} starts from {dictionary_init or 'documents'}: drop it or add "
                        f"--dictionary-init lda")


def _given(args, dest):
    """The value of option ``dest`` when the command line gave it, else None. ``rlsi fit`` shares -k, --rho,
    --max-iter, --batch-size and --seed with the RLSI learners, whose defaults are theirs, not STC's: an STC
    learner reads those only where they are written (``given_options``: :mod:`rlsi.cli.main`); the options of
    ``rlsi fit-stc`` all default to None."""
    written = getattr(args, "given_options", None)
    if getattr(args, "command", None) == "fit" and written is not None and dest not in written:
        return None
    return getattr(args, dest, None)


def _stc_builder(name, class_name, extra, online, max_margin):
    """``build`` of an STC learner: the estimator ``class_name`` of :mod:`rlsi.models.stc` from the options (the
    ``--settings`` preset first, then every option given on the command line; the rest the class's defaults).
    An option that does not apply to the learner is refused (:data:`STC_OPTIONS`). The option -> parameter
    map: -k (``rlsi fit-stc``: --n-components) -> n_components, --lam/--gamma/--rho/--eps -> lam/gamma/rho/eps,
    --dictionary-step/--dictionary-init/--lda-passes -> the same names, --max-iter -> max_iter (batch),
    --epochs/--batch-size/--tau0 -> n_epochs/batch_size/tau0 (online), --delta/--C/--hinge/--refit-C/--svm-codes
    -> delta/C/hinge/refit_C/svm_codes (max-margin), --seed -> random_state, --jobs -> n_jobs."""
    def build(args):
        from ..models import stc
        from ..models.stc.settings import stc_params

        cls = getattr(stc, class_name)
        k = _given(args, "n_components") if hasattr(args, "n_components") else _given(args, "topics")
        given = dict(n_components=k, lam=args.lam, gamma=args.gamma, rho=_given(args, "rho"), eps=args.eps,
                     dictionary_step=args.dictionary_step, dictionary_init=args.dictionary_init,
                     random_state=_given(args, "seed"))
        if not online:
            given["max_iter"] = _given(args, "max_iter")
        if max_margin:
            given.update(delta=args.delta, C=args.C, hinge=args.hinge)
        kw = stc_params(args.settings, cls) if args.settings else {}
        kw.update({k: v for k, v in given.items() if v is not None})
        if kw.get("dictionary_init") == "class" and not max_margin:
            raise RLSIError(f"--dictionary-init class needs labels; it is for --model "
                            f"{' or '.join(n for n, lrn in learners('fit-stc').items() if lrn.labels)}")
        _check_stc_options(name, online, max_margin, args, kw.get("dictionary_init"))
        if kw.get("dictionary_step") == "lbfgs" and not online:
            kw["keep_word_codes"] = True
        kw.update(n_jobs=args.jobs, verbose=0 if args.quiet else 1, **extra)
        optional = {"lda_passes": args.lda_passes}
        if online:
            optional.update(n_epochs=args.epochs, batch_size=_given(args, "batch_size"), tau0=args.tau0)
            if max_margin:
                optional["svm_codes"] = args.svm_codes
        if max_margin:
            optional["refit_C"] = args.refit_C
        kw.update({k: v for k, v in optional.items() if v is not None})  # the others: the preset's or the class's
        return cls(**kw)
    return build


#: The STC learners: name, estimator, online (mini-batches), max-margin (fitted on labels), extra parameters.
_STC = (("stc", "SparseTopicalCoding", False, False, {}),
        ("cstc", "SparseTopicalCoding", False, False, {"collapsed": True}),
        ("ostc", "OnlineSTC", True, False, {}),
        ("medstc", "MedSTC", False, True, {}),
        ("omedstc", "OnlineMedSTC", True, True, {}))
#: The ``rlsi fit`` options (dests) every STC learner reads, and those of some only (:data:`STC_OPTIONS`).
_STC_TAKES = frozenset({"topics", "rho", "settings", "lam", "gamma", "eps", "dictionary_step", "dictionary_init",
                        "lda_passes", "split_field", "train_split"})


def _stc_takes(online, max_margin):
    only = {attr for attr, applies in STC_OPTIONS.values() if applies(online, max_margin)}
    return _STC_TAKES | only | ({"label_field"} if max_margin else set()) | ({"epochs"} if online else set())


for _command in ("fit", "fit-stc"):  # rlsi fit-stc: the same learners under the older command
    for _name, _cls, _online, _max_margin, _extra in _STC:
        register(Learner(_command, _name, _cls + (" (collapsed)" if _extra else ""),
                         _stc_builder(_name, _cls, _extra, _online, _max_margin),
                         options=(add_stc_arguments,) if _command == "fit" else (),
                         labels=stc_labels if _max_margin else None, summary=coding_summary,
                         stc_kind=(_online, _max_margin), counts=True,
                         takes=lambda args, _o=_online, _m=_max_margin: _stc_takes(_o, _m)))
