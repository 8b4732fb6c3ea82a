"""Making a live index and changing its model: a new folder, a model folder turned live in place, a new
model version registered, and the commit that switches the index to it.

* :func:`new_index` — an empty index folder (generation 0) serving a model and vectorizer as version 1;
* :func:`convert_model_dir` — a model folder of ``rlsi fit`` becomes a live index in place: its model and
  vectorizer files are kept as they are (their checksums recorded) and become version 1; a static search
  index it holds is dropped after the swap. Killed before the swap, the folder is the model folder it was;
* :func:`register_version` / :func:`switch_version` — :meth:`LiveIndex.update_model`'s two commits.
"""

from __future__ import annotations

import copy
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from ...errors import RLSIError
from ...io.integrity import file_entries
from .lock import WriterLock
from .manifest import LOCK_FILE, MANIFEST, new_manifest, remove_orphans, write_manifest
from .models import ModelVersion, add_digests, check_model, tokenizer_params, write_version
from .snapshot import SegmentView
from .vocabulary import Vocabulary

__all__ = ["params_of", "new_index", "convert_model_dir", "register_version", "switch_version"]


def params_of(model, *, alpha=None, k1=1.2, b=0.75, topic_norm=None, term_norm=None, fold_lambda2=None,
              dtype=np.float64):
    """The searcher parameters of a new index, checked, in :meth:`rlsi.retrieval.Searcher.get_params` form."""
    from ..combine import DEFAULT_TERM_NORM, DEFAULT_TOPIC_NORM
    from ..searcher import Searcher

    if alpha is None:  # a new Searcher's (rlsi search's for a new index), 0 without a model
        alpha = Searcher().alpha if model is not None else 0.0
    s = Searcher(model, None, alpha=alpha, term_model="bm25", k1=k1, b=b,
                 topic_norm=topic_norm or DEFAULT_TOPIC_NORM, term_norm=term_norm or DEFAULT_TERM_NORM,
                 fold_lambda2=fold_lambda2, dtype=dtype)
    s._validate()
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise RLSIError(f"dtype={dtype!r}: use numpy.float32 or numpy.float64")
    return s.get_params()


def new_index(path, model, vectorizer, params, *, n_terms=None):
    """Write an empty live index (generation 0) into the new folder ``path``."""
    path = Path(path)
    vectorizer = check_model(model, vectorizer)
    if os.path.lexists(path) and (not path.is_dir() or any(os.scandir(path))):
        raise RLSIError(f"{path} exists and is not an empty folder: a new live index needs a folder of its own")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RLSIError(f"cannot create {path}: {exc.strerror or exc}") from None
    lock = WriterLock(path, LOCK_FILE)
    lock.acquire()
    try:
        if vectorizer is not None:
            vocab = Vocabulary(vectorizer.feature_names_)
        else:
            comps = getattr(model, "components_", None)
            width = n_terms if n_terms is not None else (comps.shape[1] if comps is not None else 0)
            vocab = Vocabulary(None, width)
        manifest = new_manifest(params, tokenizer_params(vectorizer) if vectorizer is not None else None,
                                vocab.append_to(path, None))
        if model is not None or vectorizer is not None:
            entry = write_version(path, 1, model, vectorizer)
            _install(manifest, 1, entry, serving=model is not None)
        write_manifest(path, manifest)
    finally:
        lock.release()


def _install(manifest, version, entry, *, serving):
    live = manifest["live"]
    live["models"][str(version)] = entry
    if serving:
        live["model_version"] = version
    manifest["components"] = copy.deepcopy(entry["components"])


def convert_model_dir(path, *, alpha=None, fold_lambda2=None, dtype=np.float64, **params):
    """Turn the model folder ``path`` into an empty live index in place (see the module docstring)."""
    from ... import io as rio
    from ...io.kinds import folder_kind
    from ...io.store import read_manifest as read_store_manifest

    path = Path(path)
    kind = folder_kind(path)
    if kind == "live":
        raise RLSIError(f"{path} is a live index already")
    if kind not in ("model", "index"):
        raise RLSIError(f"{path} is not a model folder (rlsi fit writes one)")
    old = read_store_manifest(path)
    comps = {name: old["components"][name] for name in ("model", "vectorizer") if name in old["components"]}
    if "vectorizer" not in comps:
        raise RLSIError(f"{path} has no vectorizer: a live index of text needs the model's vectorizer")
    bundle = rio.load(path, mmap=True, only=list(comps))
    model, vectorizer = bundle.get("model"), check_model(bundle.get("model"), bundle["vectorizer"])
    if vectorizer is not bundle["vectorizer"]:
        raise RLSIError(f"{path} holds a stream vectorizer: save its plain vectorizer (to_vectorizer()) first")
    settings = params_of(model, alpha=alpha, fold_lambda2=fold_lambda2, dtype=dtype, **params)
    lock = WriterLock(path, LOCK_FILE)
    lock.acquire()
    try:
        vocab = Vocabulary(vectorizer.feature_names_)
        manifest = new_manifest(settings, tokenizer_params(vectorizer), vocab.append_to(path, None))
        entry = {"components": add_digests(path, copy.deepcopy(comps)), "info": {"source": "rlsi fit"}}
        _install(manifest, 1, entry, serving=model is not None)
        dropped = [e["file"] for name, _, e in file_entries(old) if name not in comps]
        write_manifest(path, manifest)
        remove_orphans(path, manifest, also=set(dropped) - {MANIFEST})
    finally:
        lock.release()


def register_version(index, model, vectorizer, info=None):
    """Store ``model`` as the next version of ``index`` (writer lock held, buffer committed) and commit
    it: serving at once when the index has no documents or no model, else pending a re-fold."""
    live = index._manifest["live"]
    tok = live["tokenizer"]
    if vectorizer is None and tok is not None:
        raise RLSIError("the index tokenizes text: give the vectorizer of the new model")
    if vectorizer is not None:
        if tok is None:
            raise RLSIError("this index holds vectorised documents: a new model version comes without a vectorizer")
        if tokenizer_params(vectorizer) != tok:
            raise RLSIError(f"the new vectorizer tokenizes differently ({tokenizer_params(vectorizer)} vs the index's "
                            f"{tok}): a live index keeps one tokenizer; build a new index for another")
    version = max([int(v) for v in live["models"]] + [0]) + 1
    entry = write_version(index.path, version, model, vectorizer, info=_info(model, info))
    params = index._manifest["live"]["params"]
    from ..searcher_state import params_from_state

    checked = params_from_state(params)
    index._models[version] = ModelVersion(version, model, vectorizer, fold_lambda2=checked["fold_lambda2"],
                                          dtype=checked["dtype"], weigh=index.weigh, info=entry["info"])
    if vectorizer is not None:
        index._vocab.extend(vectorizer.feature_names_)
    old_pending = live["pending_version"]

    def record(manifest, views):
        lv = manifest["live"]
        lv["models"][str(version)] = entry
        if old_pending is not None:  # a re-fold superseded before it finished
            _drop_version(manifest, views, old_pending)
        if not lv["segments"]:  # nothing to re-fold
            switch_version(index, version)(manifest, views)
        else:
            lv["pending_version"] = version

    index._commit_buffer(extra=record)
    return version


def _info(model, info):
    out = {"class": type(model).__name__} if model is not None else {}
    for attr in ("n_docs_seen_", "n_batches_", "n_iter_"):
        v = getattr(model, attr, None)
        if isinstance(v, (int, np.integer)):
            out[attr.rstrip("_")] = int(v)
    out.update(info or {})
    return out


def _drop_version(manifest, views, version):
    """Forget ``version``: its model entry and every segment's vectors of it (files go as orphans)."""
    lv = manifest["live"]
    lv["models"].pop(str(version), None)
    for seg in lv["segments"]:
        if seg["topics"].pop(str(version), None) is not None:
            old = views[seg["name"]]
            topics = {v: V for v, V in old.seg.topics.items() if v != version}
            views[seg["name"]] = SegmentView(replace(old.seg, topics=topics), old.deleted, seg)


def switch_version(index, version):
    """The manifest edit that makes ``version`` the serving one and drops the version it replaces."""
    def switch(manifest, views):
        lv = manifest["live"]
        lv["model_version"], lv["pending_version"] = version, None
        manifest["components"] = copy.deepcopy(lv["models"][str(version)]["components"])
        for other in [int(v) for v in lv["models"] if int(v) != version]:  # the version it replaces
            _drop_version(manifest, views, other)
    return switch
