"""Figures in README and docs tied to the result files they quote: the registry the docs' figures test reads.

A page registers the figures of a paragraph or table with an HTML comment after it (invisible when the
Markdown is rendered)::

    | 1.6M × 7M | 146 + 20 s | 9.87 GiB | 9.6 / 46.4 ms |

    <!-- figures: benchmarks/results/search_scale_1600k.md
    146 = cell("build s", documents="1600000")
    9.87 GiB = cell("peak RSS GiB", documents="1600000")
    9.6 = cell("p50 ms", mode="candidate (N = 1000)")
    0.95 = cell("docs/s", method="OnlineRLSI", K="20") / cell("docs/s", method="MiniBatchNMF", K="20")
    -->

The first line names the result file (from the repository root). Each further line is ``QUOTED = SOURCE``:

* ``QUOTED`` is the figure as the page prints it, a number with an optional unit (``9.87 GiB``, ``59.3 %``,
  ``3,365``); it must appear in the block's *scope*, the text between the previous heading or figures block
  and this one (numbers are matched whole: ``9.6`` is not found in ``19.6``).
* ``SOURCE`` is a Python expression over the result file: ``cell(column, **where)`` (a table cell: the
  table's column ``column``, the row whose cells equal ``where``; a column name that is not an identifier
  goes in a dict, ``cell("p50 ms", {"N x M": "100000 x 500000"})``; ``row=`` matches the first column;
  ``after="text"`` (or a list of texts, in order) starts the search for the table after the first line
  holding that text; ``index=1`` takes the second number of the cell, ``occurrence=1`` the second column
  of that name), ``text("… {} …")`` (prose: the
  one number at ``{}``, the rest literal), ``json("a.b[step=online].c")`` (a JSON result: keys, list
  positions and ``[key=value]`` to pick the list item with that value). Any of them takes ``file=`` to read
  another result file. Sources add, subtract, multiply and divide (a ratio, a sum of two phases).

A figure holds when the source, rounded to the decimals the page prints, is the quoted number, and its unit
is the page's: the unit after the number in the file, or the unit word of the column header (``peak RSS
GiB`` → GiB). Memory figures (GiB, MiB, ...) must be peak RSS: their source names ``RSS`` (column or text)
unless the locator passes ``measure="..."`` to say what else it is (a size on disk, bytes sent). In a table
followed by a block, every number outside the first column (the row labels) must be registered, but for
settings (:func:`is_setting`: ``ξ = 1``, ``TruncatedSVD(30)``, ``4 iterations``, ``batch 32``): a table is
generated from its result file or not at all.
"""

from __future__ import annotations

import ast
import json as jsonlib
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: units a figure may carry, longest first (so "ms" is not read as "m" ...)
UNITS = ("documents/s", "docs/s", "GiB", "MiB", "KiB", "GB", "MB", "kB", "ms", "s", "%", "min")
MEMORY_UNITS = {"GiB", "MiB", "KiB", "GB", "MB", "kB"}
SAME_UNIT = {"documents/s": "docs/s"}   # spellings of one unit
NUMBER = r"[−+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[−+-]?\d+)?"
TOKEN = rf"(?<![\w.\-−]){NUMBER}"   # a number standing alone (not the 2 of "λ2", the 10 of "top-10")
BLOCK = re.compile(r"<!-- figures: (\S+)\n(.*?)-->", re.S)
HEADING = re.compile(r"^#{1,6} ", re.M)


class FigureError(AssertionError):
    """A registered figure that does not hold, or a registration that cannot be read."""


def parse_number(text):
    """(value, decimals) of a number as a page or a result file prints it (thousands commas, − for minus,
    ``3e-05``: decimals are those of the printed precision, 5 there)."""
    s = text.replace(",", "").replace("−", "-")
    mant, _, exp = s.partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return float(s), decimals - (int(exp) if exp else 0)


def unit_after(text):
    """The unit at the start of ``text`` (after spaces), or None."""
    rest = text.lstrip(" \u00a0\u202f")
    for u in UNITS:
        if rest.startswith(u) and not (len(rest) > len(u) and (rest[len(u)].isalnum() or rest[len(u)] == "/")):
            return SAME_UNIT.get(u, u)
    return None


def unit_in_label(label):
    """The unit word of a column header or label (``peak RSS GiB``, ``p50 ms``, ``peak RSS (GB)``), or None."""
    for token in re.split(r"[\s()\[\],]+", label):
        if token in UNITS:
            return SAME_UNIT.get(token, token)
    return None


@dataclass
class Value:
    """A number read from a result file, with its unit and where it came from (for messages)."""

    value: float
    unit: str | None
    where: str
    rss: bool = False          # the source is labelled as RSS (or explicitly as another measure)

    def _join(self, other, op, sym):
        if isinstance(other, (int, float)):
            return Value(op(self.value, other), self.unit, f"({self.where} {sym} {other})", self.rss)
        if sym in "+-":
            if self.unit != other.unit:
                raise FigureError(f"{self.where} ({self.unit}) {sym} {other.where} ({other.unit}): units differ")
            unit = self.unit
        else:
            unit = None  # a ratio or product of two file figures carries no unit the page could print
        return Value(op(self.value, other.value), unit, f"({self.where} {sym} {other.where})",
                     self.rss and other.rss)

    def __add__(self, o):
        return self._join(o, lambda a, b: a + b, "+")

    def __sub__(self, o):
        return self._join(o, lambda a, b: a - b, "-")

    def __mul__(self, o):
        return self._join(o, lambda a, b: a * b, "*")

    def __truediv__(self, o):
        return self._join(o, lambda a, b: a / b, "/")

    __radd__ = __add__
    __rmul__ = __mul__


# ------------------------------------------------------------------------------------ result files
def _clean(cell):
    return re.sub(r"\*\*|`|&nbsp;", "", cell).replace("\\|", "|").strip()


def _cells(line):
    """The cells of a Markdown table row (``\\|`` is a pipe inside a cell)."""
    return re.split(r"(?<!\\)\|", line.strip().strip("|"))


@dataclass
class Table:
    line: int
    header: list
    rows: list


@dataclass
class ResultFile:
    path: Path
    text: str = ""
    lines: list = field(default_factory=list)
    tables: list = field(default_factory=list)

    @classmethod
    def read(cls, path):
        text = path.read_text(encoding="utf-8")
        rf = cls(path, text, text.splitlines())
        i = 0
        while i < len(rf.lines):
            if rf.lines[i].startswith("|") and i + 1 < len(rf.lines) and re.match(r"^\|[\s:|-]+\|\s*$", rf.lines[i + 1]):
                header = [_clean(c) for c in _cells(rf.lines[i])]
                j, rows = i + 2, []
                while j < len(rf.lines) and rf.lines[j].startswith("|"):
                    rows.append([_clean(c) for c in _cells(rf.lines[j])])
                    j += 1
                rf.tables.append(Table(i, header, rows))
                i = j
            else:
                i += 1
        return rf

    def _start(self, after):
        start = 0
        for anchor in ([] if after is None else [after] if isinstance(after, str) else after):
            hit = next((k for k in range(start, len(self.lines)) if anchor in self.lines[k]), None)
            if hit is None:
                raise FigureError(f"{self.path.name}: no line holding {anchor!r} (after line {start + 1})")
            start = hit + 1
        return start

    def cell(self, column, where, after=None, index=0, measure=None, occurrence=0):
        start = self._start(after)
        where = {k: str(v) for k, v in where.items()}
        for t in self.tables:
            if t.line < start or t.header.count(column) <= occurrence:
                continue
            cols = {}
            for k in where:
                if k == "row":
                    cols[k] = 0
                elif k in t.header:
                    cols[k] = t.header.index(k)
            if len(cols) < len(where):
                continue
            hits = [r for r in t.rows if all(len(r) > c and r[c] == where[k] for k, c in cols.items())]
            if not hits:
                continue
            if len(hits) > 1:
                raise FigureError(f"{self.path.name} line {t.line + 1}: {len(hits)} rows match {where}; name more "
                                  f"columns")
            col = [i for i, h in enumerate(t.header) if h == column][occurrence]
            text = hits[0][col]
            numbers = list(re.finditer(TOKEN, text))
            if len(numbers) <= index:
                raise FigureError(f"{self.path.name} line {t.line + 1}: cell {column!r} of {where} is {text!r}, "
                                  f"with no number {index}")
            m = numbers[index]
            value, _ = parse_number(m.group())
            unit = unit_after(text[m.end():]) or unit_in_label(column)
            where_text = f"{self.path.name}:{t.line + 1} [{column!r} of {where}]"
            return Value(value, unit, where_text, "RSS" in column or measure is not None)
        raise FigureError(f"{self.path.name}: no table with column {column!r} and a row {where}"
                          + (f" after {after!r}" if after else ""))

    def find_text(self, pattern, after=None, measure=None):
        if pattern.count("{}") != 1:
            raise FigureError(f"text({pattern!r}) needs exactly one {{}} where the number is")
        before, rest = pattern.split("{}")
        regex = (r"\s+".join(map(re.escape, before.split())) + (r"\s*" if before.endswith(" ") else "")
                 + f"({NUMBER})" + (r"\s*" if rest.startswith(" ") else "") + r"\s+".join(map(re.escape, rest.split())))
        body = "\n".join(self.lines[self._start(after):])
        hits = list(re.finditer(regex, body))
        if len(hits) != 1:
            raise FigureError(f"{self.path.name}: text {pattern!r} occurs {len(hits)} times"
                              + (f" after {after!r}" if after else "") + " (it must occur once)")
        value, _ = parse_number(hits[0].group(1))
        unit = unit_after(rest)
        return Value(value, unit, f"{self.path.name} [{pattern!r}]", "RSS" in pattern or measure is not None)

    def json_path(self, path, measure=None):
        node = jsonlib.loads(self.text)
        for part in re.findall(r"[^.\[\]]+|\[[^\]]*\]", path):
            if part.startswith("["):
                key = part[1:-1]
                if "=" in key:
                    k, v = key.split("=", 1)
                    node = next((x for x in node if str(x.get(k)) == v), None)
                    if node is None:
                        raise FigureError(f"{self.path.name}: no item with {k} = {v} at {path!r}")
                else:
                    node = node[int(key)]
            else:
                if part not in node:
                    raise FigureError(f"{self.path.name}: no key {part!r} at {path!r}")
                node = node[part]
        if not isinstance(node, (int, float)):
            raise FigureError(f"{self.path.name}: {path!r} is {node!r}, not a number")
        return Value(float(node), None, f"{self.path.name} [{path}]", measure is not None)


# ------------------------------------------------------------------------------------ pages
@dataclass
class Figure:
    quoted: str
    source: str
    line: int


@dataclass
class Block:
    page: Path
    file: str
    figures: list
    scope: str
    line: int           # line of the block's first line in the page


def blocks(page):
    """The figures blocks of a page, each with its scope (the text it registers figures of)."""
    text = page.read_text(encoding="utf-8")
    out, prev_end = [], 0
    for m in BLOCK.finditer(text):
        headings = [h.start() for h in HEADING.finditer(text, prev_end, m.start())]
        start = max([prev_end] + headings)
        line0 = text.count("\n", 0, m.start()) + 1
        figures, current = [], None
        for k, raw in enumerate(m.group(2).split("\n")):
            if not raw.strip():
                continue
            if raw[0] in " \t" and current is not None:  # continuation of the previous source
                current.source += " " + raw.strip()
                continue
            if " = " not in raw:
                raise FigureError(f"{page.name}:{line0 + 1 + k}: {raw!r} is not 'QUOTED = SOURCE'")
            quoted, source = raw.split(" = ", 1)
            current = Figure(quoted.strip(), source.strip(), line0 + 1 + k)
            figures.append(current)
        out.append(Block(page, m.group(1), figures, text[start:m.start()], line0))
        prev_end = m.end()
    return out


def evaluate(block, figure, files=None):
    """The file's value for one registered figure (a :class:`Value`)."""
    files = {} if files is None else files

    def result(name):
        path = ROOT / name
        if name not in files:
            if not path.is_file():
                raise FigureError(f"{block.page.name}:{figure.line}: result file {name} does not exist")
            files[name] = ResultFile.read(path)
        return files[name]

    def cell(column, where=None, *, file=None, after=None, index=0, row=None, measure=None, occurrence=0, **named):
        conditions = dict(where or {}, **named)
        if row is not None:
            conditions["row"] = row
        return result(file or block.file).cell(column, conditions, after=after, index=index, measure=measure,
                                               occurrence=occurrence)

    def text(pattern, *, file=None, after=None, measure=None):
        return result(file or block.file).find_text(pattern, after=after, measure=measure)

    def json(path, *, file=None, measure=None):
        return result(file or block.file).json_path(path, measure=measure)

    try:
        tree = ast.parse(figure.source, mode="eval")
    except SyntaxError as e:
        raise FigureError(f"{block.page.name}:{figure.line}: {figure.source!r} is not an expression ({e.msg})")
    for node in ast.walk(tree):  # calls of the three locators and arithmetic only
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in ("cell", "text", "json")):
            raise FigureError(f"{block.page.name}:{figure.line}: only cell(), text() and json() may be called")
        if isinstance(node, (ast.Attribute, ast.Lambda, ast.Subscript)):
            raise FigureError(f"{block.page.name}:{figure.line}: {type(node).__name__} is not allowed in a source")
    value = eval(compile(tree, "<figure>", "eval"), {"__builtins__": {}}, {"cell": cell, "text": text, "json": json})
    if isinstance(value, (int, float)):
        raise FigureError(f"{block.page.name}:{figure.line}: {figure.source!r} reads nothing from a result file")
    return value


def quoted_parts(quoted):
    """(value, decimals, unit) of the quoted figure."""
    m = re.match(rf"({NUMBER})(.*)$", quoted.replace("\u202f", " "))
    if not m:
        raise FigureError(f"{quoted!r} does not start with a number")
    value, decimals = parse_number(m.group(1))
    return value, decimals, unit_after(m.group(2))


def in_scope(quoted, scope):
    """Whether the quoted figure appears whole in the scope (not inside a longer number)."""
    number, rest = re.match(rf"({NUMBER})(.*)$", quoted).groups()
    pattern = re.escape(number) + (r"[\s\u00a0\u202f]*" + re.escape(rest.strip()) if rest.strip() else "")
    return re.search(rf"(?<![\d.,]){pattern}(?![\d])(?!,\d)", scope) is not None


def check(block, figure, files=None):
    """Raise :class:`FigureError` unless the figure is in its scope and is what its source gives."""
    where = f"{block.page.relative_to(ROOT)}:{figure.line}"
    if not in_scope(figure.quoted, block.scope):
        raise FigureError(f"{where}: {figure.quoted!r} is registered but not printed in the text it follows")
    got = evaluate(block, figure, files)
    value, decimals, unit = quoted_parts(figure.quoted)
    if abs(got.value - value) > 0.5 * 10 ** -decimals * (1 + 1e-9) + 1e-12 * abs(value):
        raise FigureError(f"{where}: the page says {figure.quoted}, {got.where} gives {got.value:.6g}")
    if unit is not None:
        if got.unit is None:
            raise FigureError(f"{where}: the page says {figure.quoted} but {got.where} states no unit")
        if got.unit != unit:
            raise FigureError(f"{where}: the page says {figure.quoted} ({unit}), {got.where} is in {got.unit}")
        if unit in MEMORY_UNITS and not got.rss:
            raise FigureError(f"{where}: memory figure {figure.quoted} is not a peak RSS ({got.where}); quote the "
                              f"RSS, or say what it measures with measure=")


#: words after a number that make it a setting of the run ("4 iterations", "batch 32" reads as a setting too)
SETTING_AFTER = ("iteration", "epoch", "sweep", "pass", "round", "thread", "worker", "fold", "repeat", "class",
                 "mini-batch")
SETTING_BEFORE = ("batch", "batches of", "K =", "τ0 =", "≥", "≤", "Eq.", "§")   # and targets, references


def is_setting(before, after):
    """Whether a number of a table cell is a setting of the run, not a figure: ``ξ = 1``, ``TruncatedSVD(30)``,
    ``4 iterations``, ``batch 32``, a target ``≥ 64 %``, or the 1 of a ratio written ``1/26``."""
    if re.search(r"(=\s*|\w\()$", before) or re.match(r"/\d", after):
        return True
    if re.match(r"\s*(" + "|".join(SETTING_AFTER) + ")", after):
        return True
    return re.search(r"(" + "|".join(map(re.escape, SETTING_BEFORE)) + r")\s*$", before) is not None


def table_numbers(scope):
    """Numbers in the cells of the tables of a scope, outside the first column: [(number, row text)]."""
    out, lines = [], scope.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("|") or re.match(r"^\|[\s:|-]+\|\s*$", line):
            continue
        if i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|\s*$", lines[i + 1]):
            continue  # the header
        for cell in _cells(line)[1:]:
            cell = re.sub(r"\*\*|`", "", cell)
            for m in re.finditer(TOKEN, cell):
                if not is_setting(cell[:m.start()], cell[m.end():]):
                    out.append((m.group(), line))
    return out


def unregistered_table_numbers(block):
    """Numbers printed in the block's tables (outside the row labels) that no figure of the block quotes."""
    quoted = {re.match(NUMBER, f.quoted).group() for f in block.figures}
    return [(n, row) for n, row in table_numbers(block.scope) if n not in quoted]
