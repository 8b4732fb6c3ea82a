"""docs/gpu.md holds: present tense, the device names and options it lists exist, its memory numbers are the
plan's."""

import inspect
import re
from pathlib import Path

from rlsi.gpu import memory
from rlsi.gpu.backend import DEVICES
from rlsi.gpu.batch import DeviceRLSIProblem

PAGE = Path(__file__).resolve().parents[2] / "docs" / "gpu.md"


def test_speaks_in_the_present():
    assert not re.search(r"\bsessions?\b|\bissues? #?\d+|\(#\d+\)", PAGE.read_text(encoding="utf-8"), re.I)


def test_device_names_and_options_exist():
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("| `device` |"):text.index("If CuPy is missing")]
    assert set(re.findall(r'`"([a-z0-9:]+)"`', table)) == set(DEVICES)
    options = text[text.index("| key | values |"):text.index("None of these changes")]
    listed = {k for row in re.findall(r"^\| `(\w+)`(?:, `(\w+)`)? \|", options, re.M) for k in row if k}
    names = list(inspect.signature(DeviceRLSIProblem).parameters)
    assert listed == set(names[names.index("screen"):names.index("tuning")])  # the problem's ways of working


PAPER = (1_600_000, 7_000_000, 326_080_841, 500)


def gb_table(text, after):
    """The ``| part | GB |`` table that follows ``after`` as {part: figure}."""
    start = text.index("| part | GB |", text.index(after))
    rows = re.findall(r"^\| (.+?) \| ([\d.()]+) \|$", text[start:text.index("\n\n", start)], re.M)
    return dict(rows)


def test_memory_numbers_are_the_plans():
    """Every memory figure of the page is the plan's (rlsi.gpu.memory), batch and online."""
    text = PAGE.read_text(encoding="utf-8")
    p = memory.plan(*PAPER, topic_density=0.0044)
    assert f"the plan is **{p.total / 1e9:.2f} GB**" in text
    gb = {k: f"{v / 1e9:.2f}" for k, v in p.resident.items()}
    table = gb_table(text, "the plan is **")
    assert table == {"W": gb["W"], "D = X^T": gb["D = X^T"], "X": gb["X"], "U": gb["U"],
                     "the V-step, its peak phase": f"{p.phase_bytes['V-step'] / 1e9:.2f}",
                     "(the U-step)": f"({p.phase_bytes['U-step'] / 1e9:.2f})"}
    assert p.peak_phase == "V-step"
    card = memory.plan(*PAPER, topic_density=0.0044, card=True)
    assert f"the transposition: {card.total / 1e9:.2f} GB" in text
    assert f"non-zero weights, what a\nfirst U-step may reach) it is {memory.plan(*PAPER).total / 1e9:.2f} GB" in text
    streamed = memory.plan(*PAPER, topic_density=0.0044, budget=2e9)
    assert f"needs about {streamed.total / 1e9:.2f} GB" in text
    o = memory.online_plan(7_000_000, 500, 204_000, 1000, 4, n_inner=10, topic_density=0.0044)
    assert f"it plans **{o.total / 1e9:.2f} GB**" in text
    r = o.resident
    rest = r["row maxima and flags"] + r["mini-batches in flight"] + r["W and Phi"]
    assert gb_table(text, "it plans **") == {
        "R": f"{r['R'] / 1e9:.2f}", "U": f"{r['U'] / 1e9:.2f}",
        "the batch's rows of R (kept over the ξ iterations)": f"{r['the batch' + chr(39) + 's rows of R'] / 1e9:.2f}",
        "the old values of the rows a batch changes (CSR)": f"{r['old values of changed rows'] / 1e9:.2f}",
        "the rows' maxima and flags, the mini-batches, W and Φ": f"{rest / 1e9:.2f}",
        "the U-step, its peak phase": f"{o.phase_bytes['U-step'] / 1e9:.2f}"}
    assert o.peak_phase == "U-step" and o.total < 40e9 and p.total < 40e9
    assert f"plans to\n{p.total / 1e9:.2f} GB" in memory.__doc__ and f"{o.total / 1e9:.2f} GB at 7M" in memory.__doc__
