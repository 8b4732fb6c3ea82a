"""Class labels of documents from a corpus field (the group models' classes).

A field holding a list (multi-label collections such as Reuters' ``labels``) assigns the document to the
**first** label of its list (the collection's primary label). A document with no label (field missing,
null, empty string or empty list) is an error by default, or forms the class :data:`UNLABELED_CLASS` of
its own with ``unlabeled="own-class"``.
"""

from __future__ import annotations

import numpy as np

from ..errors import RLSIError

__all__ = ["UNLABELED_CLASS", "UNLABELED_POLICIES", "document_labels", "corpus_labels"]

#: The class of the documents without a label under ``unlabeled="own-class"``.
UNLABELED_CLASS = "(unlabeled)"
#: What :func:`document_labels` does with a document without a label.
UNLABELED_POLICIES = ("error", "own-class")
#: The remedy :func:`document_labels` names when a document has no label, unless the caller names its own.
DEFAULT_REMEDY = "label them, or pass unlabeled='own-class' to put them in one class of their own"


def _is_missing(value):
    return value is None or (isinstance(value, str) and not value.strip())


def document_labels(values, field, unlabeled="error", *, remedy=DEFAULT_REMEDY):
    """One label (str) per document from the raw field values (see the module docstring).

    ``remedy``: the advice ending the error when a document has no label and ``unlabeled="error"``.
    """
    if unlabeled not in UNLABELED_POLICIES:
        raise RLSIError(f"unlabeled={unlabeled!r}: choose one of {', '.join(UNLABELED_POLICIES)}")
    out, missing = [], []
    for i, v in enumerate(values):
        if isinstance(v, (list, tuple)):
            v = v[0] if v else None
        if _is_missing(v):
            missing.append(i)
            v = UNLABELED_CLASS
        out.append(str(v))
    if missing and unlabeled == "error":
        raise RLSIError(f"{len(missing)} of {len(values)} documents have no {field!r} field value (first: document "
                        f"{missing[0] + 1}); {remedy}")
    return np.asarray(out)


def corpus_labels(corpus, field, unlabeled="error", *, remedy=DEFAULT_REMEDY):
    """:func:`document_labels` of the field ``field`` of a :class:`~rlsi.text.Corpus` (RLSIError naming the
    corpus's fields when it has no such field)."""
    if field not in corpus.fields:
        raise RLSIError(f"the corpus has no field {field!r} (fields: {', '.join(sorted(corpus.fields)) or 'none'})")
    return document_labels(corpus.fields[field], field, unlabeled, remedy=remedy)
