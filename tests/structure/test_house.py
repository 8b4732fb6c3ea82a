"""The layers of the house: every import between rlsi's packages goes down (no back arrow), the learners
import no placement provider, the registries name the modules that register, one class owns ``partial_fit``
for the streaming learners, and no test sets a module constant (tests pass tuning in as arguments)."""

import ast
import importlib

import pytest

from structure.test_layout import ROOT, SRC, _graph

#: Each top-level part of rlsi and its layer: a part imports only parts of lower layers. The root ``rlsi``
#: imports its names on first use (PEP 562: nothing at import time), so the parts may read its
#: ``__version__`` from the bottom.
LAYERS = {
    "rlsi": 0, "errors": 0, "limits": 0, "registry": 0, "_warnings": 0, "oracle": 0,
    "_validation": 1,
    "_params": 2, "_rows": 2, "kernels": 2, "quality": 2, "tracking": 2,
    "_progress": 3,
    "io": 4,
    "text": 5,
    "models": 6, "evaluation": 6,
    "gpu": 7, "distributed": 7, "retrieval": 7, "datasets": 7,
    "experiments": 8, "explorer": 8,
    "cli": 9,
    "__main__": 10,
}


def _part(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rlsi"


@pytest.fixture(scope="module")
def graph():
    return _graph(SRC, "rlsi/**/*.py")


def test_every_part_has_a_layer(graph):
    assert {_part(m) for m in graph} <= set(LAYERS), "give the new part of rlsi a layer in LAYERS"


def test_no_back_arrow_between_the_parts(graph):
    back = sorted((m, d) for m, deps in graph.items() for d in deps
                  if _part(m) != _part(d) and LAYERS[_part(d)] >= LAYERS[_part(m)])
    assert back == [], f"imports that go up or sideways between the parts of rlsi: {back}"


def test_the_back_arrow_finder_finds_one():
    assert LAYERS["models"] <= LAYERS["gpu"] and LAYERS["io"] < LAYERS["models"]  # a learner importing gpu is one


def test_no_learner_imports_a_placement_provider(graph):
    """Dask and the card plug in as placements (rlsi.models.placement): no module of rlsi.models imports them."""
    found = sorted((m, d) for m, deps in graph.items() if _part(m) == "models" for d in deps
                   if _part(d) in ("gpu", "distributed"))
    assert found == []


def test_the_registries_name_the_modules_that_register():
    from rlsi.io.store import _REGISTRY as persisted
    from rlsi.models.placement import _REGISTRY as placements
    from rlsi.registry import PERSISTED, PLACEMENTS

    for name, module in PLACEMENTS.items():
        importlib.import_module(module)
        assert name in placements, f"{module} does not register the placement {name!r}"
    for name, module in PERSISTED.items():
        importlib.import_module(module)
        assert name in persisted and persisted[name].__module__ == module, f"{module} does not register {name}"


def test_one_owner_of_partial_fit_for_the_streaming_learners():
    from rlsi.distributed import DaskOnlineRLSI
    from rlsi.models import OnlineMedSTC, OnlineRLSI, OnlineSTC
    from rlsi.models.streaming import StreamingFit

    for cls in (OnlineRLSI, DaskOnlineRLSI, OnlineSTC, OnlineMedSTC):
        owners = [c for c in cls.__mro__ if "partial_fit" in vars(c) or "fit" in vars(c)]
        assert owners[0] is StreamingFit, f"{cls.__name__}: fit/partial_fit defined in {owners[0].__name__}"
        assert cls.partial_fit is StreamingFit.partial_fit and cls.fit is StreamingFit.fit


# ------------------------------------------------------------------------------ tests set no module constant
def _constant_sets(path):
    """``(line, target)`` of each place a test file sets an UPPERCASE attribute of a module or class:
    ``monkeypatch.setattr(obj, "NAME", v)``, ``monkeypatch.setattr("pkg.mod.NAME", v)``, ``setattr(obj, "NAME",
    v)`` and ``module.NAME = v`` for an imported name. (Spies on functions and methods are lower-case names and
    stay allowed; an object's own one-letter fields such as ``stats.S`` are not constants.)"""

    def upper(name):
        name = name.rpartition(".")[2].lstrip("_")
        return len(name) > 1 and name.isupper()

    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {(a.asname or a.name).partition(".")[0] for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name != "setattr" or not node.args:
                continue
            strings = [a.value for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if strings and upper(strings[0]):
                found.append((node.lineno, strings[0]))
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and upper(t.attr) and isinstance(t.value, ast.Name) \
                        and t.value.id in imported:
                    found.append((node.lineno, t.attr))
    return sorted(found)


@pytest.mark.parametrize("path", sorted((ROOT / "tests").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_test_sets_a_module_constant(path):
    found = _constant_sets(path)
    assert found == [], (f"{path.relative_to(ROOT)} sets module constants {found}: pass the setting as an "
                         f"argument (a kernel's keyword, a field of RLSITuning, ProductBlocks or RowChunks)")


def test_the_constant_finder_finds_each_spelling(tmp_path):
    src = tmp_path / "t.py"
    src.write_text("from rlsi.models import group\n"
                   "def test(monkeypatch):\n"
                   "    monkeypatch.setattr(products, 'CHUNK_BYTES', 64)\n"
                   "    monkeypatch.setattr('rlsi.kernels.products.TILE_BYTES', 64)\n"
                   "    setattr(tasks, 'MIN_BLOCK_ROWS', 2)\n"
                   "    group._FULL_ROWS = 0.5\n"
                   "    monkeypatch.setattr(atomic, '_rename', spy)\n"
                   "    monkeypatch.setattr(local.RLSIProblem, 'u_step', spy)\n"
                   "    stats.S = 0\n"
                   "    model.SCALE = 1\n")
    assert [name for _, name in _constant_sets(src)] == ["CHUNK_BYTES", "rlsi.kernels.products.TILE_BYTES",
                                                         "MIN_BLOCK_ROWS", "_FULL_ROWS"]
