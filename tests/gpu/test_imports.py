"""Each module of rlsi.gpu imports on its own, first, in a fresh interpreter: the device package imports
rlsi.models, so rlsi.models may reach the device package only lazily (a module-level import there made
``import rlsi.gpu.batch`` fail half-way through rlsi.models)."""

import subprocess
import sys
from pathlib import Path

GPU = Path(__file__).resolve().parents[2] / "src" / "rlsi" / "gpu"

SCRIPT = """
import importlib, sys
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "rlsi" or m.startswith("rlsi.")]:
        del sys.modules[loaded]
    importlib.import_module(name)
"""


def test_every_device_module_imports_first():
    import rlsi

    names = sorted("rlsi.gpu." + p.stem for p in GPU.glob("*.py") if p.stem != "__init__")
    assert "rlsi.gpu.batch" in names and "rlsi.gpu.online" in names
    src = str(Path(rlsi.__file__).parents[1])
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *names], capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": src, "PATH": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
