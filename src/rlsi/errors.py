"""User-facing errors.

Every problem caused by the user's input (a missing file, an empty corpus, a bad option value, NaN in a
matrix, a damaged model file) is raised as :class:`RLSIError` or a subclass, with a one-line message that
names the problem. The command line prints that message and exits with status 2; any other exception is a
bug in rlsi.

``RLSIError`` derives from ``ValueError`` so that code following scikit-learn conventions (which expects
``ValueError`` for bad parameters or data) keeps working.

:class:`NotFittedError` is also scikit-learn's ``NotFittedError``; it is made on first use (PEP 562), so
that importing this module (the ``rlsi`` command does, before parsing its arguments) does not import
scikit-learn.
"""


class RLSIError(ValueError):
    """A problem with the user's input: its message is meant to be shown as it is."""


class ModelFormatError(RLSIError):
    """A saved model directory is missing, damaged, or from an unsupported format version."""


class CorpusError(RLSIError):
    """A corpus file or folder is missing, unreadable, or holds no usable document."""


def _not_fitted_error():
    from sklearn.exceptions import NotFittedError as _SkNotFittedError

    class NotFittedError(RLSIError, _SkNotFittedError):
        """A model, vectorizer, matcher or index was used before ``fit`` (or loading).

        Both an :class:`RLSIError` (the CLI prints it as one line) and scikit-learn's ``NotFittedError``
        (code written for scikit-learn catches it as usual).
        """

    NotFittedError.__module__, NotFittedError.__qualname__ = __name__, "NotFittedError"
    return NotFittedError


def __getattr__(name):
    if name == "NotFittedError":
        cls = globals()["NotFittedError"] = _not_fitted_error()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
