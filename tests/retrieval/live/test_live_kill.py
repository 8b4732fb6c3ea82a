"""Crash safety: a writer killed with SIGKILL while it adds, commits, merges or re-folds leaves the index
at its last committed generation — it opens, every acknowledged document is there, every acknowledged
delete holds, a change in flight is all there or not at all, and the scores equal a rebuild over what is
there. The next writer removes whatever the killed one left half-written."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from retrieval.live.live_helpers import assert_same_scores, static_hits, text_of

from rlsi.retrieval.live import LiveIndex
from rlsi.retrieval.live.manifest import read_manifest, referenced_files

CHILD = Path(__file__).with_name("live_writer_child.py")


def _run_until_killed(path, phase, occurrence, delay, tmp_path):
    """Start a writer, kill it ``delay`` seconds after its ``occurrence``-th announcement of ``phase``;
    returns (acknowledged adds, acknowledged deletes, the add in flight, the delete in flight)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[3] / "src"),
                                                       os.environ.get("PYTHONPATH", "")]))
    err = tmp_path / f"child-{phase}.err"
    proc = subprocess.Popen([sys.executable, str(CHILD), str(path), "0"], stdout=subprocess.PIPE,
                            stderr=open(err, "w"), text=True, env=env)
    state = {"added": set(), "deleted": set(), "adding": set(), "deleting": set()}

    def read(line):
        words = line.split()
        if words[:2] == ["PHASE", "add"]:
            state["adding"] = set(words[2].split(","))
        elif words[:2] == ["PHASE", "delete"]:
            state["deleting"] = set(words[2].split(","))
        elif words[:2] == ["ACK", "add"]:
            state["added"] |= state["adding"]
            state["adding"] = set()
        elif words[:2] == ["ACK", "delete"]:
            state["deleted"] |= state["deleting"]
            state["deleting"] = set()
        return words

    seen = 0
    deadline = time.monotonic() + 120
    try:
        for line in proc.stdout:
            if read(line)[:2] == ["PHASE", phase]:
                seen += 1
                if seen == occurrence:
                    time.sleep(delay)
                    proc.send_signal(signal.SIGKILL)
                    break
            assert time.monotonic() < deadline, "the writer never reached the phase"
        proc.wait()
        for line in proc.stdout:  # what the writer said before it died (it may have gone on while we slept)
            read(line)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, err.read_text()[-2000:]
    return state["added"], state["deleted"], state["adding"], state["deleting"]


def _check_survivors(path, added, deleted, adding, deleting, fitted):
    vec, model_a, model_b = fitted
    index = LiveIndex.open(path)  # a whole generation, or ModelFormatError here
    present = {v.seg.ids[r] for v in index.snapshot().views for r in v.live_rows()}
    assert (added - deleted - deleting) <= present, "an acknowledged document is missing"
    assert not (deleted & present), "an acknowledged delete came back"
    for change in (adding, deleting):  # a commit is all there or not at all
        assert len(change & present) in (0, len(change)), "half of a commit is visible"
    assert present <= added | adding
    model = model_a if index.model_version % 2 == 1 else model_b  # the writer alternates them
    docs = {d: text_of(d) for d in present}
    assert_same_scores(index.search("heart blood books", k=None), static_hits(docs, model, vec, "heart blood books"))
    # the next writer cleans up: afterwards the folder holds exactly what its manifest names
    index.add([text_of("after")], ["after"])
    index.commit()
    extra = set(os.listdir(path)) - referenced_files(read_manifest(path))
    assert not extra, f"files left over from the killed writer: {sorted(extra)[:5]}"
    index.close()


@pytest.mark.parametrize("phase,occurrence,delay", [("add", 2, 0.05), ("merge", 1, 0.02), ("refold", 1, 0.02)])
def test_a_writer_killed_mid_change_loses_nothing_committed(tmp_path, fitted, phase, occurrence, delay):
    """Killed in an add or the commit after it (the delay spans both), a merge, or a re-fold."""
    vec, model_a, _ = fitted
    path = tmp_path / "idx"
    LiveIndex.create(path, model_a, vec, alpha=0.4).close()
    wait = float(np.random.default_rng(occurrence).uniform(0, delay))
    added, deleted, adding, deleting = _run_until_killed(path, phase, occurrence, wait, tmp_path)
    assert added, "the writer acknowledged nothing before it was killed"
    _check_survivors(path, added, deleted, adding, deleting, fitted)
