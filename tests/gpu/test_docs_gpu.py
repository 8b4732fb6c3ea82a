"""docs/gpu.md holds: present tense, the device names and options it lists exist, its memory numbers are the
plan's."""

import inspect
import re
from pathlib import Path

from rlsi.gpu import memory
from rlsi.gpu.backend import DEVICES
from rlsi.gpu.fit import DeviceRLSIProblem  # (rlsi.gpu.batch first alone meets the models import loop)

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


def test_memory_numbers_are_the_plans():
    text = PAGE.read_text(encoding="utf-8")
    resident = memory.plan(1_600_000, 7_000_000, 326_080_841, 500, topic_density=0.0044)
    streamed = memory.plan(1_600_000, 7_000_000, 326_080_841, 500, topic_density=0.0044, budget=2e9)
    assert f"**{resident.total / 1e9:.2f} GB**" in text
    assert f"needs about {streamed.total / 1e9:.2f} GB" in text
