"""Warnings that point at the user's line: the first frame outside rlsi and scikit-learn."""

from __future__ import annotations

import os
import sys


def user_stacklevel():
    """The ``stacklevel`` for :func:`warnings.warn`, called where ``warn`` is called, that names the first
    caller outside rlsi and scikit-learn (a fit reached through ``fit_transform``, a Pipeline or
    ``cross_val_score`` warns at the user's call, not in ``sklearn/utils/_set_output.py``)."""
    import sklearn

    skip = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
            os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep)
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(skip):
        frame, level = frame.f_back, level + 1
    return level
