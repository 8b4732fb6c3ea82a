"""The serving stack is optional: outside ``rlsi.serve`` no module of the library imports FastAPI, Starlette,
uvicorn or pydantic, and importing the library (its estimators, the live index, the explorer, the command's
parser, and ``rlsi.serve`` itself) loads none of them; only creating the app or running the server does."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
STACK = ("fastapi", "starlette", "uvicorn", "pydantic", "anyio")


def _imported(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_module_outside_rlsi_serve_imports_the_stack():
    serve = SRC / "rlsi" / "serve"
    offenders = {str(p.relative_to(SRC)): sorted(_imported(p) & set(STACK)) for p in (SRC / "rlsi").rglob("*.py")
                 if serve not in p.parents}
    assert {p: s for p, s in offenders.items() if s} == {}


def test_importing_the_library_loads_no_part_of_the_stack():
    code = ("import json, sys\n"
            "import rlsi, rlsi.models, rlsi.retrieval.live, rlsi.explorer, rlsi.serve, rlsi.serve.service\n"
            "from rlsi.cli.main import build_parser; build_parser()\n"
            "print(json.dumps(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [m for m in loaded if m.split(".")[0] in STACK] == []
