"""What ``rlsi index`` does to a live index: build one from a corpus or a matrix directory, and apply
adds, updates, deletes, a merge and a new model to it. The command parses and prints; this module works.

* :func:`build_live` — ``rlsi index MODEL --live (--corpus FILE | --matrix DIR)``: the model folder becomes
  a live index holding those documents (a static index it held is dropped);
* :func:`change_live` — ``rlsi index MODEL --add/--update/--delete/--merge/--update-model``: a model folder
  without an index becomes live first; one holding a static index is refused with the command that
  converts it (a static index stores BM25 weights, not the raw counts a live index needs).
"""

from __future__ import annotations

import time
from pathlib import Path

from ...errors import RLSIError
from .index import LiveIndex

__all__ = ["build_live", "change_live", "read_id_file", "MATRIX_SEGMENT_DOCS"]

#: Documents per segment when a matrix directory is read into a live index (one commit each).
MATRIX_SEGMENT_DOCS = 200_000
#: Documents tokenized and folded per commit when a corpus is added (bounded memory, progress shown).
CORPUS_BATCH_DOCS = 20_000


def _kind(path):
    from ...io.kinds import folder_kind, require_model_folder

    require_model_folder(path)
    kind = folder_kind(path)
    if kind is None:
        raise RLSIError(f"{path} is not a model folder (no manifest.json): fit a model first (rlsi fit)")
    return kind


def _has_static_index(path):
    from ...io.store import read_manifest

    return "index" in read_manifest(path)["components"]


def static_index_message(path):
    return (f"{path} holds a static search index, which cannot take documents (it stores BM25 weights, not raw "
            f"counts): rebuild it as a live index with 'rlsi index {path} --live --corpus FILE'")


def read_id_file(path):
    """Document ids from a text file, one a line (blank lines skipped)."""
    try:
        with open(path, encoding="utf-8") as f:
            return [line.rstrip("\r\n") for line in f if line.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise RLSIError(f"cannot read ids from {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _read(corpus, text_fields):
    from ...text import read_corpus

    return read_corpus(corpus, text_fields=tuple(text_fields))


def _add_corpus(index, corpus, text_fields, show_progress, replace=False):
    import numpy as np

    from ..._progress import progress_bar

    docs = _read(corpus, text_fields)
    if not replace:  # every id checked before the first commit: a refused add changes nothing
        where, _ = index.snapshot().locate(docs.ids)
        if (where >= 0).any():
            taken = docs.ids[int(np.flatnonzero(where >= 0)[0])]
            raise RLSIError(f"document id {taken!r} of {corpus} is already in the index; replace documents with "
                            f"--update")
    bar = progress_bar(len(docs), "index", verbose=show_progress, unit="doc")
    for a in range(0, len(docs), CORPUS_BATCH_DOCS):
        ids, texts = docs.ids[a:a + CORPUS_BATCH_DOCS], docs.texts[a:a + CORPUS_BATCH_DOCS]
        (index.update if replace else index.add)(texts, ids)
        index.commit()
        if bar is not None:
            bar.update(len(ids))
    if bar is not None:
        bar.close()
    return len(docs)


def build_live(model_dir, *, corpus=None, matrix=None, text_fields=("title", "text"), alpha=None,
               fold_lambda2=None, show_progress=False):
    """Make the model folder ``model_dir`` a live index of ``corpus`` or ``matrix``; returns its stats."""
    import numpy as np

    if (corpus is None) == (matrix is None):
        raise RLSIError("a live index is built from a corpus or from a matrix directory (one of them)")
    kind = _kind(model_dir)
    if kind == "live":
        raise RLSIError(f"{model_dir} is a live index already: add documents with 'rlsi index {model_dir} --add FILE'")
    start = time.perf_counter()
    with LiveIndex.from_model_dir(model_dir, alpha=alpha, fold_lambda2=fold_lambda2,
                                  dtype=np.float32 if matrix is not None else np.float64) as index:
        n = (_add_corpus(index, corpus, text_fields, show_progress) if corpus is not None
             else index.add_matrix(matrix, segment_docs=MATRIX_SEGMENT_DOCS, show_progress=show_progress))
        stats = index.stats()
    stats.update(added=n, seconds=time.perf_counter() - start)
    return stats


def change_live(model_dir, *, add=None, update=None, delete=None, merge=False, update_model=None,
                text_fields=("title", "text"), show_progress=False):
    """Apply changes to the live index ``model_dir`` (a plain model folder becomes one); returns a report:
    ``added``, ``updated``, ``deleted``, ``not_found``, ``model_version``, the stats and ``seconds``."""
    from ... import io as rio

    kind = _kind(model_dir)
    if kind != "live" and _has_static_index(model_dir):
        raise RLSIError(static_index_message(model_dir))
    if update_model is not None and Path(update_model).resolve() == Path(model_dir).resolve():
        raise RLSIError("--update-model names the index itself: give the folder of the new model")
    new = rio.load(update_model, mmap=True, only=["model", "vectorizer"]) if update_model is not None else None
    start = time.perf_counter()
    converted = kind != "live"
    index = LiveIndex.from_model_dir(model_dir) if converted else LiveIndex.open(model_dir)
    report = {"converted": converted, "added": 0, "updated": 0, "deleted": 0, "not_found": 0}
    with index:
        if delete is not None:
            ids = read_id_file(delete)
            report["deleted"] = index.delete(ids)
            report["not_found"] = len(set(ids)) - report["deleted"]
            index.commit()
        if update is not None:
            report["updated"] = _add_corpus(index, update, text_fields, show_progress, replace=True)
        if add is not None:
            report["added"] = _add_corpus(index, add, text_fields, show_progress)
        if new is not None:
            report["new_model_version"] = index.update_model(new["model"], new["vectorizer"],
                                                         info={"source": str(update_model)})
        if index.pending_version is not None:  # a re-fold an earlier writer left unfinished (killed)
            index.refold()
        if merge:
            index.merge(show_progress=show_progress)
        report.update(index.stats())
    report["seconds"] = time.perf_counter() - start
    return report
