"""Choosing the number of topics K and the topic regularization λ₁: :func:`select` fits a warm-started path
over the grid, scores each point on held-out documents (document completion, NPMI coherence, sparsity) and
across two seeds (stability), and recommends a point by a stated rule (docs/select.md)."""

from .result import SelectionResult
from .rule import DEFAULT_STABILITY_THRESHOLD, recommend
from .select import DEFAULT_LAMBDA1_PATH, DEFAULT_TEST_SIZE, DEFAULT_TOPICS, select

__all__ = ["select", "SelectionResult", "recommend", "DEFAULT_TOPICS", "DEFAULT_LAMBDA1_PATH", "DEFAULT_TEST_SIZE",
           "DEFAULT_STABILITY_THRESHOLD"]
