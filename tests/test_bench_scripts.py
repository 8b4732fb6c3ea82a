"""Every benchmark script still starts: it answers ``--help`` (exit 0, a usage on stdout), and every name it
imports from ``rlsi`` — at the top or inside a function, where ``--help`` does not reach — exists. The
scripts are not part of the package, so a renamed module, function or class breaks them silently otherwise.

One child process runs every script's ``--help`` (``runpy``, one after another, so that numpy, scipy, numba
and rlsi load once: a fresh process per script would take a minute) and resolves the imports; the tests read
its report. The scripts that wrap the learners' internals are run tiny in tests/test_bench_batch.py and
tests/test_bench_instrumented.py."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

CHILD = r"""
import ast, contextlib, importlib, io, json, runpy, sys, warnings
warnings.simplefilter("ignore")
scripts, modules = json.loads(sys.argv[1]), json.loads(sys.argv[2])
report = {"help": {}, "imports": {}}
for path in scripts:
    out = io.StringIO()
    sys.argv = [path, "--help"]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            runpy.run_path(path, run_name="__main__")
        code = "returned without exiting"
    except SystemExit as e:
        code = e.code or 0
    except BaseException as e:
        code = f"{type(e).__name__}: {e}"
    report["help"][path] = [code, out.getvalue()[:200]]
for path in modules:
    missing = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "rlsi":
            wanted = [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            wanted = [(a.name, None) for a in node.names if a.name.split(".")[0] == "rlsi"]
        else:
            continue
        for module, name in wanted:
            try:
                m = importlib.import_module(module)
                if name is not None and not hasattr(m, name):
                    importlib.import_module(f"{module}.{name}")  # a submodule not yet imported
            except Exception as e:
                missing.append(f"line {node.lineno}: {module}{'.' + name if name else ''} ({type(e).__name__})")
    report["imports"][path] = missing
sys.stdout = sys.__stdout__
print("REPORT " + json.dumps(report))
"""


def _is_script(path):
    """A file run from the command line: the bench_* and plot_* scripts, the probes, and any other file
    with a ``__main__`` block (the rest are modules the scripts import)."""
    if path.parent.name == "probes" or path.name.startswith(("bench_", "plot_")):
        return True
    return any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)
               for n in ast.parse(path.read_text(encoding="utf-8")).body)


MODULES = sorted(BENCH.glob("*.py")) + sorted((BENCH / "probes").glob("*.py"))
SCRIPTS = [p for p in MODULES if _is_script(p)]


def _name(path):
    return str(path.relative_to(BENCH))


@pytest.fixture(scope="module")
def report():
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps([str(p) for p in SCRIPTS]),
                           json.dumps([str(p) for p in MODULES])],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("REPORT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1][len("REPORT "):])


def test_the_scripts_are_found():
    names = {_name(p) for p in SCRIPTS}
    assert {"bench_batch.py", "plot_density.py", "probes/ab_batch.py", "gpu_corpus.py"} <= names
    assert "harness.py" not in names and "batch_profile.py" not in names


@pytest.mark.parametrize("path", SCRIPTS, ids=_name)
def test_a_script_answers_help(report, path):
    code, out = report["help"][str(path)]
    assert code == 0, f"{_name(path)} --help: {code}"
    assert out.strip(), f"{_name(path)} --help printed nothing"


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_every_rlsi_name_a_benchmark_imports_exists(report, path):
    assert report["imports"][str(path)] == [], _name(path)
