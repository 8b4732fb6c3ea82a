"""The values the ``rlsi`` parsers offer and print, as literals.

Building the parser (``rlsi --help``, ``rlsi fit --help``, a usage error) imports nothing heavy: no numpy,
SciPy, numba, scikit-learn, nor the library's own modules (``rlsi.models``, ``rlsi.text``, ...), which take
seconds to import. So the choices and defaults shown in ``--help`` are copies here, each of the library
value it names; ``tests/cli/test_lazy_imports.py`` holds every copy equal to its source, and a command
imports the library only when it runs.
"""

from __future__ import annotations

#: ``rlsi.models.regularization.LAMBDA1_SCALES``
LAMBDA1_SCALES = ("per_doc", "paper")
#: ``rlsi.models.regularization.INITS``
INITS = ("docs", "random")
#: ``rlsi.models.penalties.PENALTIES``
PENALTIES = ("l1", "l2", "nonneg_l1", "nonneg_l2")
#: ``rlsi.models.rlsi_policy.REPRESENTATIONS`` and ``TOPIC_SWEEPS``
REPRESENTATIONS = ("auto", "sparse", "dense")
TOPIC_SWEEPS = 3
#: ``rlsi.gpu.backend.DEVICES``
DEVICES = ("cpu", "cuda", "cuda:float32", "cuda:float64", "numpy", "numpy:float32", "numpy:float64")
#: What a user may type for a device, and the device meant (``--device gpu`` suggests ``cuda``).
DEVICE_ALIASES = {"gpu": "cuda", "nvidia": "cuda", "cupy": "cuda", "host": "cpu", "numba": "cpu"}
#: ``rlsi.models.regularization.FEATURES`` and ``READING``: (λ1 per 1000 documents, λ2) of the estimators'
#: defaults (features for a classifier) and of the commands whose topics a person reads
FEATURES = (0.01, 1e-3)
READING = (0.05, 1.0)
#: ``rlsi.text.labels.UNLABELED_POLICIES``
UNLABELED_POLICIES = ("error", "own-class")
#: ``rlsi.text.stream.IDF_MODES``
IDF_MODES = ("running", "fixed")
#: ``rlsi.tracking.periods.PERIODS``
PERIODS = ("day", "week", "month", "year")
#: ``rlsi.quality.topics.RANKINGS``
RANKINGS = ("dominant", "abs", "positive")
#: ``rlsi.retrieval.searcher.TERM_MODELS``, ``rlsi.retrieval.directory.FOLDINGS`` and ``DEFAULT_FOLDING``
TERM_MODELS = ("bm25", "vsm")
FOLDINGS = ("model", "projection")
DEFAULT_FOLDING = "model"
#: ``rlsi.models.stc.settings.PRESETS``
STC_PRESETS = ("printed", "released", "table2")
#: ``rlsi.experiments.defaults.GRID_PRESETS`` (names) and the default grid, as ``rlsi evaluate --help`` shows it
GRID_NAMES = ("default", "paper", "extended")
#: ``rlsi.serve.limits``: where ``rlsi serve`` listens, and its caps (k, query characters, documents per request,
#: body MiB)
SERVE_HOST = "127.0.0.1"
SERVE_PORT = 8000
SERVE_LIMITS = (100, 1_000, 1_000, 8)
