"""The explorer's fixtures: the themed corpus of :mod:`explorer._models`, vectorized."""

import numpy as np
import pytest
from explorer._models import themed_docs


@pytest.fixture(scope="module")
def themed():
    """``(docs, vectorizer, X, counts, y)`` of :func:`themed_docs`."""
    from rlsi.text import TfidfVectorizer

    docs = themed_docs()
    texts = [d["title"] + "\n" + d["text"] for d in docs]
    vec = TfidfVectorizer()
    X = vec.fit_transform(texts)
    return docs, vec, X, vec.transform_counts(texts), np.array([d["label"] for d in docs])
