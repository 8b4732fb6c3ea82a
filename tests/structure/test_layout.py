"""The shape of the code base: no import cycles between modules (src/rlsi and benchmarks), no module over
600 lines (src/rlsi, benchmarks and benchmarks/probes), and one owner of ``fit_transform`` for the alternating
batch learners."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
MAX_LINES = 600


def _module_name(path, base):
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path, name, known):
    """Modules of ``known`` that the module ``name`` (file ``path``) imports, at any depth of the file:
    ``from pkg import mod`` is an edge to the module ``pkg.mod``, ``from pkg import name`` one to ``pkg``
    (its ``__init__``, which a package re-exporting its modules imports in turn)."""

    def resolve(target):
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target

    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(resolve(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            for a in node.names:
                full = f"{prefix}.{a.name}"
                found.add(full if full in known else resolve(prefix))
    found.discard(name)
    found.discard("")
    return found


def _graph(base, pattern):
    files = {_module_name(p, base): p for p in sorted(base.glob(pattern))}
    return {name: _imports(path, name, files) for name, path in files.items()}


def _cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles_in_src():
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        cycles = _cycles(_graph(SRC, "rlsi/**/*.py"))
    finally:
        sys.setrecursionlimit(limit)
    assert cycles == [], f"modules that import each other (directly or in a loop): {cycles}"


def test_no_import_cycles_in_benchmarks():
    graph = _graph(ROOT / "benchmarks", "*.py")
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


#: every module the cap covers: the library, the benchmark scripts and their helpers, the probes
CAPPED = sorted((SRC / "rlsi").rglob("*.py")) + sorted((ROOT / "benchmarks").glob("*.py")) + sorted(
    (ROOT / "benchmarks" / "probes").glob("*.py"))


def test_the_cap_covers_the_library_and_the_benchmarks():
    names = {str(p.relative_to(ROOT)) for p in CAPPED}
    assert {"src/rlsi/__init__.py", "benchmarks/harness.py", "benchmarks/probes/ab_batch.py"} <= names


@pytest.mark.parametrize("path", CAPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_over_600_lines(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines (at most {MAX_LINES}): split it by concept"


def test_one_owner_of_fit_transform_for_the_batch_learners():
    from rlsi.distributed import DaskRLSI
    from rlsi.models import BatchRLSI, CNMF, CRLSI, GroupNMF, GroupRLSI, MedSTC, SparseTopicalCoding
    from rlsi.models.skeleton import AlternatingFit

    for cls in (BatchRLSI, DaskRLSI, GroupRLSI, CRLSI, GroupNMF, CNMF, SparseTopicalCoding, MedSTC):
        owners = [c for c in cls.__mro__ if "fit_transform" in vars(c) or "fit" in vars(c)]
        assert owners[0] is AlternatingFit, f"{cls.__name__}: fit/fit_transform defined in {owners[0].__name__}"
        assert cls.fit_transform is AlternatingFit.fit_transform and cls.fit is AlternatingFit.fit
