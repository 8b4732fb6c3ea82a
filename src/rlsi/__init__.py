"""rlsi: Regularized Latent Semantic Indexing.

Scalable sparse topic models (batch and online RLSI, after Wang, Xu, Li and Craswell, TOIS 2013) with
scikit-learn estimators, and topic-enhanced relevance ranking.

The names below are imported on first use (PEP 562): ``import rlsi`` itself is instant, so the ``rlsi``
command can answer Ctrl-C during its start-up (numba, SciPy and scikit-learn take a second or two to
import) with one line instead of a traceback.

Threads: rlsi's numba kernels run on every core (``n_jobs`` limits them). The first fit or folding-in
sets the environment variable ``OMP_WAIT_POLICY=PASSIVE`` unless it is already set, so that idle OpenMP
workers sleep instead of spinning between parallel regions and stealing the cores BLAS needs (see
:mod:`rlsi.kernels.threads`). Set ``OMP_WAIT_POLICY`` yourself before using rlsi to choose otherwise.
"""

__version__ = "0.1.0"

# public name -> module that defines it (a module itself when the name is the module's last part)
_EXPORTS = {
    "io": "rlsi.io", "load": "rlsi.io", "save": "rlsi.io",
    "ModelFormatError": "rlsi.errors", "NotFittedError": "rlsi.errors", "RLSIError": "rlsi.errors",
    "BatchRLSI": "rlsi.models", "OnlineRLSI": "rlsi.models", "LSI": "rlsi.models", "PLSI": "rlsi.models",
    "regularized_lsi": "rlsi.models",
    "LDA": "rlsi.models", "NMF": "rlsi.models", "TopicStatistics": "rlsi.models",
    "Searcher": "rlsi.retrieval",
    "StreamingTfidf": "rlsi.text", "TfidfVectorizer": "rlsi.text",
    "explore": "rlsi.explorer",
    "select": "rlsi.selection", "SelectionResult": "rlsi.selection",
}

__all__ = ["BatchRLSI", "OnlineRLSI", "regularized_lsi", "LSI", "PLSI", "LDA", "NMF", "TopicStatistics", "TfidfVectorizer",
           "StreamingTfidf", "Searcher", "load", "save", "io", "ModelFormatError", "NotFittedError",
           "RLSIError", "explore", "select", "SelectionResult", "__version__"]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rlsi' has no attribute {name!r}")
    import importlib

    mod = importlib.import_module(module)
    value = mod if module == f"rlsi.{name}" else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
