"""The manual and the repository's user-facing files: what a new user reads first must hold."""

import re
import shlex
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# the user-facing pages this suite guards (docs/learners.md and docs/gpu.md have their own owners' tests)
PAGES = [README, ROOT / "docs" / "cli.md", ROOT / "docs" / "design.md", ROOT / "docs" / "performance.md",
         ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "README.md"]


def _text(path):
    return path.read_text(encoding="utf-8")


def test_readme_is_a_short_manual_with_contents():
    text = _text(README)
    shown = re.sub(r"\n<!-- figures: .*?-->\n", "\n", text, flags=re.S)  # the figures' registry is not read
    assert len(shown.splitlines()) <= 450
    assert "## Contents" in text
    for section in ("Install", "Quickstart", "Using it from Python", "Using it from the command line",
                    "Choosing λ1, λ2", "Design", "Performance", "Patent notice", "Licence", "Citing"):
        assert re.search(rf"^## {re.escape(section)}", text, re.M), section


def test_quickstart_has_two_commands_and_ci_runs_the_test_one():
    text = _text(README)
    quick = text[text.index("## Quickstart"):text.index("## Using it from Python")]
    commands = re.findall(r"^```bash\n(.*?)\n```", quick, re.M | re.S)
    assert len(commands) == 2 and "rlsi demo" in commands[0]
    install, test = (c.strip() for c in commands[1].split("&&"))
    ci = _text(ROOT / ".ci" / "run")
    assert shlex.split(install)[-1] in ci and test in ci  # the same extras and the same pytest command


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_speak_in_the_present(page):
    text = _text(page)
    assert not re.search(r"\bsessions?\b|\bissues? #?\d+|\(#\d+\)|\bafter the audit\b", text, re.I), page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_local_links_resolve(page):
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", _text(page)):
        assert (page.parent / target).exists(), f"{page.name}: {target}"


def test_licence_file_matches_the_package_metadata():
    project = tomllib.loads(_text(ROOT / "pyproject.toml"))["project"]
    assert project["license"] == "BSD-3-Clause" and "LICENSE" in project.get("license-files", [])
    assert _text(ROOT / "LICENSE").startswith("BSD 3-Clause License")


def test_one_current_result_per_benchmark():
    results = ROOT / "benchmarks" / "results"
    stale = [p.name for p in results.rglob("*") if not p.name.startswith("stc")  # STC results: their owner's
             and re.search(r"_s\d+[a-z]?(?=[._/]|$)|_before|_final|issue\d", p.name)]
    assert not stale, stale
