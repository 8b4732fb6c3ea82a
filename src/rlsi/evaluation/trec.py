"""Reading and writing TREC relevance judgements (qrels) and runs.

Formats (fields separated by any whitespace; blank lines are skipped; a ``.gz`` path is read/written
gzip-compressed):

* qrels: ``qid iter docid rel`` -- ``iter`` is ignored (usually ``0``); ``rel`` is an integer, higher is
  more relevant, ``0`` (or a negative value) means judged non-relevant. Pairs that are not listed are
  unjudged.
* run: ``qid Q0 docid rank score tag`` -- only ``score`` orders documents for evaluation (as in
  trec_eval); ``rank`` must be an integer but is otherwise ignored.

In memory, qrels are ``{qid: {docid: rel}}`` and runs are ``{qid: {docid: score}}``. A (qid, docid) pair
given twice with the same value is accepted; with different values it is an error.
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import RLSIError
from ..io.atomic import atomic_file

__all__ = ["read_qrels", "write_qrels", "read_run", "write_run", "run_from_scores", "ranked"]


def _open_text(path, mode, gz=None):
    path = Path(path)
    if path.suffix == ".gz" if gz is None else gz:
        return gzip.open(path, mode + "t", encoding="utf-8", newline="")
    return open(path, mode, encoding="utf-8", newline="")


def _lines(path, what):
    """Yield ``(line_number, fields)`` for the non-blank lines of ``path``."""
    path = Path(path)
    if not path.is_file():
        raise RLSIError(f"{what} file not found: {path}")
    try:
        with _open_text(path, "r") as handle:
            for lineno, line in enumerate(handle, start=1):
                fields = line.split()
                if fields:
                    yield lineno, fields
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise RLSIError(f"cannot read {what} file {path}: {exc}") from None


def _store(table, qid, docid, value, path, lineno, what):
    docs = table.setdefault(qid, {})
    old = docs.get(docid)
    if old is not None and old != value:
        raise RLSIError(f"{path}, line {lineno}: {what} for query {qid!r}, document {docid!r} is given twice "
                        f"with different values ({old!r} and {value!r})")
    docs[docid] = value


def read_qrels(path) -> dict[str, dict[str, int]]:
    """Read TREC qrels ``qid iter docid rel`` into ``{qid: {docid: rel}}`` (``rel`` an int)."""
    qrels: dict[str, dict[str, int]] = {}
    for lineno, fields in _lines(path, "qrels"):
        if len(fields) != 4:
            raise RLSIError(f"{path}, line {lineno}: a qrels line needs 4 fields 'qid iter docid rel', "
                            f"got {len(fields)}")
        qid, _, docid, rel_text = fields
        try:
            rel = int(rel_text)
        except ValueError:
            raise RLSIError(f"{path}, line {lineno}: relevance {rel_text!r} is not an integer") from None
        _store(qrels, qid, docid, rel, path, lineno, "relevance")
    return qrels


def read_run(path) -> dict[str, dict[str, float]]:
    """Read a TREC run ``qid Q0 docid rank score tag`` into ``{qid: {docid: score}}``."""
    run: dict[str, dict[str, float]] = {}
    for lineno, fields in _lines(path, "run"):
        if len(fields) != 6:
            raise RLSIError(f"{path}, line {lineno}: a run line needs 6 fields "
                            f"'qid Q0 docid rank score tag', got {len(fields)}")
        qid, _, docid, rank_text, score_text, _ = fields
        try:
            int(rank_text)
        except ValueError:
            raise RLSIError(f"{path}, line {lineno}: rank {rank_text!r} is not an integer") from None
        try:
            score = float(score_text)
        except ValueError:
            raise RLSIError(f"{path}, line {lineno}: score {score_text!r} is not a number") from None
        if not math.isfinite(score):
            raise RLSIError(f"{path}, line {lineno}: score {score_text!r} is not finite")
        _store(run, qid, docid, score, path, lineno, "score")
    return run


def _check_token(value, what):
    text = str(value)
    if not text or any(ch.isspace() for ch in text):
        raise RLSIError(f"{what} {text!r} cannot be written in TREC format: it is empty or contains "
                        "whitespace")
    return text


def _write_lines(path, lines):
    """Write whole or not at all (gzip-compressed for a ``.gz`` path); the folder must exist."""
    with atomic_file(path, "w", make_parents=False) as handle:
        handle.writelines(lines)


def write_qrels(qrels: Mapping[str, Mapping[str, int]], path) -> None:
    """Write ``{qid: {docid: rel}}`` as tab-separated TREC qrels ``qid 0 docid rel`` (dict order)."""
    lines = []
    for qid, docs in qrels.items():
        q = _check_token(qid, "query id")
        for docid, rel in docs.items():
            if isinstance(rel, bool) or not float(rel).is_integer():
                raise RLSIError(f"relevance {rel!r} of query {q!r}, document {docid!r} is not an integer")
            lines.append(f"{q}\t0\t{_check_token(docid, 'document id')}\t{int(rel)}\n")
    _write_lines(path, lines)


def ranked(docs: Mapping[str, float]) -> list[tuple[str, float]]:
    """The ``(docid, score)`` pairs of one query in evaluation order.

    Order: score descending, ties by docid descending (plain string comparison) -- the order trec_eval
    uses, which ignores the rank column of the run file. Like trec_eval, which keeps scores in single
    precision, scores are compared after rounding to float32: scores closer than about 6e-8 (relative)
    are tied.
    """
    items = list(docs.items())
    if not items:
        return []
    order = rank_order(np.array([str(d) for d, _ in items]),
                       np.fromiter((s for _, s in items), dtype=np.float64, count=len(items)))
    return [items[i] for i in order]


def rank_order(ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Positions of ``ids``/``scores`` (one query, unique ids) in evaluation order -- see :func:`ranked`."""
    by_id = np.empty(len(ids), dtype=np.int64)
    by_id[np.argsort(ids, kind="stable")] = np.arange(len(ids) - 1, -1, -1)  # larger docid -> smaller key
    return np.lexsort((by_id, -np.asarray(scores).astype(np.float32)))  # float32: trec_eval's precision


def write_run(run: Mapping[str, Mapping[str, float]], path, tag: str = "rlsi", depth: int | None = 1000
              ) -> None:
    """Write ``{qid: {docid: score}}`` as a TREC run ``qid Q0 docid rank score tag``.

    Per query the ``depth`` best documents (all when ``depth`` is None) are written in :func:`ranked`
    order, so the written ranks agree with the order trec_eval (and :mod:`rlsi.evaluation.metrics`)
    will use. Scores are written with the shortest text that reads back to the same float.
    """
    tag = _check_token(tag, "run tag")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise RLSIError(f"depth={depth!r} must be a positive integer or None")
    lines = []
    for qid, docs in run.items():
        q = _check_token(qid, "query id")
        for rank, (docid, score) in enumerate(ranked(docs)[:depth], start=1):
            score = float(score)
            if not math.isfinite(score):
                raise RLSIError(f"score of query {q!r}, document {docid!r} is not finite: {score}")
            lines.append(f"{q} Q0 {_check_token(docid, 'document id')} {rank} {score!r} {tag}\n")
    _write_lines(path, lines)


def run_from_scores(scores, query_ids: Sequence[str], doc_ids: Sequence[str], depth: int | None = 1000
                    ) -> dict[str, dict[str, float]]:
    """Turn a dense ``(n_queries, n_docs)`` score matrix into a run keeping the ``depth`` best per query.

    Documents tied with the last kept score are chosen by docid descending, as in :func:`ranked`, so the
    result does not depend on the order of the columns.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape != (len(query_ids), len(doc_ids)):
        raise RLSIError(f"scores have shape {scores.shape}, expected ({len(query_ids)}, {len(doc_ids)}) "
                        "(queries x documents)")
    if not np.all(np.isfinite(scores)):
        raise RLSIError("scores contain NaN or infinite values")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise RLSIError(f"depth={depth!r} must be a positive integer or None")
    n_docs = scores.shape[1]
    k = n_docs if depth is None else min(depth, n_docs)
    run = {}
    for qid, row in zip(query_ids, scores):
        if k < n_docs:
            row32 = row.astype(np.float32)  # the precision of the ranking order, see ranked()
            threshold = np.partition(row32, n_docs - k)[n_docs - k]
            candidates = np.flatnonzero(row32 >= threshold)
        else:
            candidates = np.arange(n_docs)
        docs = {str(doc_ids[j]): float(row[j]) for j in candidates}
        run[str(qid)] = dict(ranked(docs)[:k])
    return run
