"""Every benchmark figure README and docs quote is generated, not typed: registered beside the text with the
result file and the place in it that gives it (``tests/figures.py`` describes the registry), and checked
here — value, unit, peak RSS for memory, every number of a registered table, and the commands the page
gives for a result file against the command the file records."""

import re
import shlex

import pytest

from figures import (ROOT, Block, Figure, FigureError, blocks, check, table_numbers, unregistered_table_numbers)

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [b for page in PAGES for b in blocks(page)]
FIGURES = [(b, f) for b in BLOCKS for f in b.figures]
#: options whose values are paths on the machine that ran the benchmark (a scratch folder, the matrix)
PATH_OPTIONS = {"--matrix", "--workdir", "--json"}


def _id(item):
    block, figure = item
    return f"{block.page.name}:{figure.line}:{figure.quoted}"


@pytest.mark.parametrize("item", FIGURES, ids=[_id(x) for x in FIGURES])
def test_figure_matches_its_result_file(item):
    block, figure = item
    check(block, figure)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.page.name}:{b.line}" for b in BLOCKS])
def test_every_number_of_a_registered_table_is_registered(block):
    missing = unregistered_table_numbers(block)
    assert not missing, (f"{block.page.name}:{block.line}: table numbers without a source in the block after "
                         f"them: {[n for n, _ in missing]}")


def _sections(text, level="## "):
    parts = re.split(rf"^(?={re.escape(level)})", text, flags=re.M)
    return {p.splitlines()[0]: p for p in parts if p.startswith(level)}


def _tables(text):
    return [m.start() for m in re.finditer(r"^\|.*\n\|[\s:|-]+\|\s*$", text, re.M)]


@pytest.mark.parametrize("page,section", [("docs/performance.md", None), ("README.md", "## Performance")])
def test_benchmark_tables_are_registered(page, section):
    """Every table of the performance page, and the README's performance summary, is followed by a
    figures block before the next heading."""
    text = (ROOT / page).read_text(encoding="utf-8")
    if section is not None:
        text = _sections(text)[section]
    for start in _tables(text):
        rest = text[start:]
        nxt = re.search(r"^#{1,6} ", rest, re.M)
        scope = rest[:nxt.start()] if nxt else rest
        assert "<!-- figures: " in scope, f"{page}: the table at {rest.splitlines()[0][:60]!r} has no figures block"


def test_memory_is_in_binary_units():
    """Memory is printed in GiB / MiB (2^30 / 2^20 bytes, what the benchmarks measure). GB and MB are decimal:
    a page may print them only as a registered figure (whose unit the file then confirms: network traffic, a
    file's size). docs/gpu.md states device memory in decimal GB and has its own test
    (tests/gpu/test_docs_gpu.py)."""
    registered = {(b.page, f.quoted) for b in BLOCKS for f in b.figures}
    for page in (p for p in PAGES if p.name != "gpu.md"):
        text = re.sub(r"<!-- figures: .*?-->", "", page.read_text(encoding="utf-8"), flags=re.S)
        for m in re.finditer(r"(?<![\d.,])(\d[\d.,]*)\s?(GB|MB)\b(?!/s)", text):
            quoted = f"{m.group(1)} {m.group(2)}"
            assert (page, quoted) in registered, (
                f"{page.name}: {m.group()!r} is in decimal units and not a registered figure "
                f"({text[max(0, m.start() - 80):m.end() + 20]!r}); memory is printed in GiB / MiB")


def _commands(text):
    """Benchmark commands in a text: fenced lines joined at trailing backslashes, and inline code."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = re.findall(r"`([^`\n]*python benchmarks/[^`\n]*)`", joined)
    found += re.findall(r"^\s*((?:[A-Z_]+=\S+\s+)*python benchmarks/.*)$", joined, re.M)
    return [" ".join(c.split()) for c in found]


def _normal(command):
    tokens = shlex.split(command)
    return [("<path>" if i and tokens[i - 1] in PATH_OPTIONS and not t.startswith("--") else t)
            for i, t in enumerate(tokens)]


def _writes(command, name):
    return re.search(rf"(?:--out|--md|--png)\s+{re.escape(name)}\b", command) is not None


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.page.name}:{b.line}" for b in BLOCKS])
def test_a_command_the_page_gives_is_the_one_the_file_records(block):
    """Settings: a command the page prints for the block's result file is the command recorded in the file
    (up to the scratch paths of PATH_OPTIONS)."""
    path = ROOT / block.file
    if path.suffix != ".md":
        return
    recorded = {tuple(_normal(c)) for c in _commands(path.read_text(encoding="utf-8"))}
    for command in _commands(block.scope):
        if _writes(command, block.file):
            assert tuple(_normal(command)) in recorded, (
                f"{block.page.name}: the command\n{command}\nis not the one {block.file} records")


# ------------------------------------------------------------------------------- the registry itself
RESULT = """# A benchmark

| method | K | docs/s | peak RSS GiB | size on disk GiB |
|---|---:|---:|---:|---:|
| fast | 20 | 3,365 | 1.16 | 2.50 |
| slow | 20 | 1,541 | 2.89 | 2.50 |

nmf-mu float64: 4.428 s per iteration; private memory 0.82 GiB.
"""


def _block(tmp_path, scope, lines, result=RESULT):
    res = tmp_path / "result.md"
    res.write_text(result, encoding="utf-8")
    figures = [Figure(q, s, i + 1) for i, (q, s) in enumerate(lines)]
    return Block(ROOT / "docs" / "page.md", str(res), figures, scope, 1)


@pytest.mark.parametrize("quoted,source", [
    ("3,365", 'cell("docs/s", method="fast")'),
    ("2.2", 'cell("docs/s", method="fast") / cell("docs/s", method="slow")'),
    ("1.2 GiB", 'cell("peak RSS GiB", row="fast")'),
    ("4.43 s", 'text("nmf-mu float64: {} s per iteration")'),
    ("2.5 GiB", 'cell("size on disk GiB", method="slow", measure="index on disk")'),
])
def test_the_registry_accepts_what_the_file_says(tmp_path, quoted, source):
    block = _block(tmp_path, f"text quoting {quoted} here", [(quoted, source)])
    check(block, block.figures[0])


@pytest.mark.parametrize("quoted,source,words", [
    ("3,366", 'cell("docs/s", method="fast")', "gives 3365"),                    # a typed figure drifted
    ("1.16 GB", 'cell("peak RSS GiB", method="fast")', "is in GiB"),             # the wrong unit
    ("4.43 ms", 'text("nmf-mu float64: {} s per iteration")', "is in s"),
    ("0.82 GiB", 'text("private memory {} GiB")', "not a peak RSS"),             # memory that is not RSS
    ("2.5 GiB", 'cell("size on disk GiB", method="slow")', "not a peak RSS"),
    ("3,365", 'cell("docs/s", K="20")', "2 rows match"),                         # an ambiguous row
    ("3,365", 'cell("docs/s", method="medium")', "no table"),
    ("3,365", 'text("nmf-mu {} s")', "occurs 0 times"),
    ("3,365", '__import__("os")', "only cell()"),
])
def test_the_registry_refuses_a_figure_the_file_does_not_give(tmp_path, quoted, source, words):
    block = _block(tmp_path, f"text quoting {quoted} here", [(quoted, source)])
    with pytest.raises(FigureError, match=re.escape(words)):
        check(block, block.figures[0])


def test_a_registered_figure_must_be_printed(tmp_path):
    block = _block(tmp_path, "the page says 13,365 docs/s", [("3,365", 'cell("docs/s", method="fast")')])
    with pytest.raises(FigureError, match="not printed"):
        check(block, block.figures[0])


def test_a_result_file_that_changes_fails_the_figure(tmp_path):
    block = _block(tmp_path, "3,365 documents a second", [("3,365", 'cell("docs/s", method="fast")')],
                   result=RESULT.replace("3,365", "3,120"))
    with pytest.raises(FigureError, match="gives 3120"):
        check(block, block.figures[0])


def test_every_table_number_must_be_registered(tmp_path):
    scope = "| method | docs/s | peak RSS |\n|---|---:|---:|\n| fast (K = 20) | 3,365 | 1.16 GiB |\n"
    block = _block(tmp_path, scope, [("3,365", 'cell("docs/s", method="fast")')])
    assert [n for n, _ in unregistered_table_numbers(block)] == ["1.16"]   # 20 is in the row label: exempt
    assert [n for n, _ in table_numbers(scope)] == ["3,365", "1.16"]
    settings = "| row | a |\n|---|---|\n| x | 7.5 after 4 iterations, batch 32, ξ = 1, SVD(30), 1/26 |\n"
    assert [n for n, _ in table_numbers(settings)] == ["7.5", "26"]


def test_blocks_read_their_scope_and_continuation_lines(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# T\n\nintro 5\n\n## S\n\nfigure 3,365 and 1.16 GiB\n\n"
                    "<!-- figures: benchmarks/results/x.md\n3,365 = cell(\"docs/s\",\n    method=\"fast\")\n"
                    "1.16 GiB = cell(\"peak RSS GiB\", method=\"fast\")\n-->\n\nlater 7\n", encoding="utf-8")
    (block,) = blocks(page)
    assert block.file == "benchmarks/results/x.md" and "intro" not in block.scope and "3,365" in block.scope
    assert [(f.quoted, f.source) for f in block.figures] == [
        ("3,365", 'cell("docs/s", method="fast")'), ("1.16 GiB", 'cell("peak RSS GiB", method="fast")')]
