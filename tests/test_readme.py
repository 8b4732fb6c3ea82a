"""The README's Python examples run, in order, as one script (a reader pastes them one after another)."""

import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)


def test_readme_has_python_examples():
    assert len(python_blocks(README.read_text(encoding="utf-8"))) >= 5


@pytest.mark.slow
def test_readme_python_examples_run(tmp_path, monkeypatch, capsys):
    pytest.importorskip("distributed")
    monkeypatch.chdir(tmp_path)  # the examples write model folders in the working directory
    namespace = {"__name__": "__readme__"}
    for i, block in enumerate(python_blocks(README.read_text(encoding="utf-8"))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # few iterations on purpose: ConvergenceWarning is expected
            exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    assert "T1 " in out  # format_topics printed the topics
