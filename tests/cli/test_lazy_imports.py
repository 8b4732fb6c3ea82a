"""The command answers at once: building its parser imports nothing heavy.

Every module of ``COMMAND_MODULES`` (and what they import) is held to the rule, so a command added later
is checked too: importing them and building the whole parser — what ``rlsi --help``, ``rlsi COMMAND
--help``, ``--version`` and a usage error do — loads none of numpy, SciPy, numba, scikit-learn nor the
library's packages (they take seconds). The choices and defaults the parsers show are copies
(:mod:`rlsi.cli._choices`), each held equal to its source here.
"""

import json
import subprocess
import sys

import pytest

from rlsi.cli import _choices
from rlsi.cli.main import COMMAND_MODULES

#: Modules a parser may not import (prefixes): the heavy libraries and the library's own packages.
HEAVY = ("numpy", "scipy", "numba", "sklearn", "tqdm", "matplotlib", "dask", "distributed", "rlsi.models",
         "rlsi.text", "rlsi.io", "rlsi.retrieval", "rlsi.quality", "rlsi.tracking", "rlsi.gpu",
         "rlsi.distributed", "rlsi.evaluation", "rlsi.experiments", "rlsi.datasets", "rlsi.kernels", "rlsi.serve",
         "fastapi", "starlette", "uvicorn", "pydantic")

_PROBE = """
import contextlib, io, json, sys
from rlsi.cli.main import COMMAND_MODULES, _subparsers, build_parser
import importlib
for name in COMMAND_MODULES:
    importlib.import_module(name)
parser = build_parser()
for action in _subparsers(parser):
    for sub in action.choices.values():
        sub.format_help()
parser.format_help()
with contextlib.redirect_stderr(io.StringIO()):
    try:
        parser.parse_args(["fit", "corpus.jsonl", "-k", "not-a-number"])
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(code):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_building_every_parser_imports_nothing_heavy():
    loaded = _loaded(_PROBE)
    heavy = sorted(m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert heavy == [], f"the parser of {', '.join(COMMAND_MODULES)} imports {heavy[:12]}: import them inside " \
                        "the function that runs the command (CONTRIBUTING.md, 'The command line')"
    assert set(COMMAND_MODULES) <= set(loaded)


def test_version_and_help_through_python_dash_m():
    for argv, expected in ((["--version"], "rlsi "), (["--help"], "usage: rlsi")):
        proc = subprocess.run([sys.executable, "-m", "rlsi", *argv], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and proc.stdout.startswith(expected), proc.stderr


def _source(module, name):
    import importlib

    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("copy, module, name", [
    ("LAMBDA1_SCALES", "rlsi.models.regularization", "LAMBDA1_SCALES"),
    ("INITS", "rlsi.models.regularization", "INITS"),
    ("PENALTIES", "rlsi.models.penalties", "PENALTIES"),
    ("REPRESENTATIONS", "rlsi.models.rlsi_policy", "REPRESENTATIONS"),
    ("DEVICES", "rlsi.gpu.backend", "DEVICES"),
    ("UNLABELED_POLICIES", "rlsi.text.labels", "UNLABELED_POLICIES"),
    ("IDF_MODES", "rlsi.text.stream", "IDF_MODES"),
    ("PERIODS", "rlsi.tracking.periods", "PERIODS"),
    ("RANKINGS", "rlsi.quality.topics", "RANKINGS"),
    ("TERM_MODELS", "rlsi.retrieval.searcher", "TERM_MODELS"),
    ("FOLDINGS", "rlsi.retrieval.directory", "FOLDINGS"),
    ("STC_PRESETS", "rlsi.models.stc.settings", "PRESETS"),
    ("GRID_NAMES", "rlsi.experiments.defaults", "GRID_PRESETS"),
])
def test_the_choices_shown_are_the_library_s(copy, module, name):
    assert tuple(getattr(_choices, copy)) == tuple(_source(module, name))


def test_the_defaults_shown_are_the_library_s():
    from rlsi.models import BatchRLSI, GroupRLSI, OnlineRLSI
    from rlsi.models.regularization import FEATURES, READING

    assert _choices.TOPIC_SWEEPS == _source("rlsi.models.rlsi_policy", "TOPIC_SWEEPS")
    assert _choices.DEFAULT_FOLDING == _source("rlsi.retrieval.directory", "DEFAULT_FOLDING")
    assert _choices.FEATURES == (FEATURES["lambda1"], FEATURES["lambda2"])
    assert _choices.READING == (READING["lambda1"], READING["lambda2"])
    for cls in (BatchRLSI, OnlineRLSI):
        assert (cls().lambda1, cls().lambda2) == _choices.FEATURES
    assert (GroupRLSI().lambda1, GroupRLSI().lambda2) == _choices.READING
    assert set(_choices.DEVICE_ALIASES.values()) <= set(_choices.DEVICES)
    from rlsi.serve import limits

    assert (_choices.SERVE_HOST, _choices.SERVE_PORT) == (limits.DEFAULT_HOST, limits.DEFAULT_PORT)
    assert _choices.SERVE_LIMITS == (limits.MAX_K, limits.MAX_QUERY_CHARS, limits.MAX_BATCH_DOCS,
                                     limits.MAX_BODY_BYTES // 2**20)
