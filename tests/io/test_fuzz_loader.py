"""Fuzzing the loaders: model directories, search indexes, matrix directories and checkpoints are untrusted
input.

A seeded mutator (tests/io/fuzz_child.py) damages small saved models in hundreds of ways — flipped
bytes, truncated or extended files, out-of-range indices, non-monotone row pointers, NaN/inf/huge values,
other dtypes (complex, text, object/pickle, float16...), other shapes, junk in every manifest field, file
paths outside the folder, FIFOs, links to /dev/zero, a catastrophic regular expression as token pattern —
and loads each one in a subprocess. Every trial must either load a model whose folding-in and search give
finite numbers, or raise rlsi's own one-line error (at load: a ModelFormatError naming the model); never a
signal (segmentation fault, abort), a hang (SIGALRM after 10 s per trial) or a foreign exception; and no
pickle payload may ever run. Half the trials keep the pristine checksums: any changed byte must then be
refused at load (every array here is small enough to be verified even when memory-mapped); the other half
carry checksums recorded again after the damage (a forger's folder), so that the loaders' checks of
paths, types, shapes and values are what is tested.
"""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import rlsi
from rlsi import io
from rlsi.models import BatchRLSI
from rlsi.models.online import OnlineRLSI
from rlsi.retrieval import Searcher
from rlsi.text import TfidfVectorizer
from rlsi.text.stream import StreamingTfidf

CHILD = Path(__file__).with_name("fuzz_child.py")
N_TRIALS = 150  # per model; each trial applies 1-3 mutations
TEXTS = [
    "the heart pumps blood through arteries and veins",
    "blood pressure in arteries rises with heart disease",
    "cardiac surgery repairs the heart valves and arteries",
    "the lens of the eye focuses light on the retina",
    "cataract clouds the lens and blurs vision of the eye",
    "retina damage and vision loss in the eye",
    "bacteria infect cells and the immune system responds",
    "immune cells attack bacteria and viruses in infection",
    "viruses infect cells; antibodies of the immune system bind viruses",
    "the eye and the heart of the immune system",
]


def _batch_model(path):
    vec = TfidfVectorizer()
    X = vec.fit_transform(TEXTS)
    model = BatchRLSI(3, lambda1=1.0, random_state=0, max_iter=10).fit(X)
    Searcher(model, vec, alpha=0.5).index(TEXTS).save(path)


def _online_model(path):
    stream = StreamingTfidf()
    model = OnlineRLSI(3, batch_size=4, random_state=0)
    for a in range(0, len(TEXTS), 4):
        model.partial_fit(stream.partial_fit_transform(TEXTS[a:a + 4]))
    io.save(path, model=model, vectorizer=stream)


def _index_only(path):
    """A search index without a topic model (term matching only): a folder of kind index."""
    Searcher(None, TfidfVectorizer().fit(TEXTS), alpha=0.0).index(TEXTS).save(path)


def _matrix_dir(path):
    vec = TfidfVectorizer()
    X = vec.fit_transform(TEXTS)
    io.save_matrix(path, X, vectorizer=vec, doc_ids=[f"doc{i}" for i in range(len(TEXTS))],
                   doc_lengths=vec.doc_lengths(TEXTS), counts=vec.transform_counts(TEXTS))


def _checkpoint(path):
    """The checkpoint a distributed fit writes after 2 iterations over 3 partitions, written directly."""
    import numpy as np

    from rlsi.distributed import _tasks, checkpoint

    vec = TfidfVectorizer()
    X = vec.fit_transform(TEXTS)
    model = BatchRLSI(3, lambda1=1.0, random_state=0, max_iter=2).fit(X)
    W = np.asarray(model.transform(X))
    bounds = [[0, 4], [4, 4], [4, 10]]
    for p, (a, b) in enumerate(bounds):
        if b > a:
            _tasks.save_part_w(W[a:b], str(checkpoint.part_path(path, 2, p)))
    meta = {"n_docs": X.shape[0], "n_terms": X.shape[1], "n_components": 3, "dtype": "float64",
            "partitions": bounds, "lambda1_effective": 1.0, "objectives": [2.0, 1.0], "bytes_moved": [10, 10],
            "seconds": [0.1, 0.1], "representations": ["sparse", "sparse"]}
    checkpoint.write_state(path, 2, model.components_.T.tocsr(), meta)


def _run_child(tmp_path, make, seed, n_trials, kind="model"):
    pristine = tmp_path / "pristine"
    make(pristine)
    work = tmp_path / "work"
    work.mkdir()
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(TEXTS))
    marker = tmp_path / "PICKLE_PAYLOAD_RAN"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(rlsi.__file__).parents[1]),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(CHILD), str(pristine), str(work), str(seed), str(n_trials),
                           str(texts), str(marker), kind], capture_output=True, text=True, env=env, timeout=600)
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    done = [r for r in records if "outcome" in r]
    if proc.returncode != 0:
        started = [r for r in records if "start" in r]
        last = started[-1] if started else None
        pytest.fail(f"the loader process died with status {proc.returncode} (negative: killed by that signal; "
                    f"-14: a trial hung) during {last}; stderr: {proc.stderr[-2000:]}")
    assert not marker.exists(), "a pickle payload in a model file was executed"
    return done


@pytest.mark.parametrize("make, seed, kind, n_trials", [
    (_batch_model, 1, "model", N_TRIALS), (_online_model, 2, "model", N_TRIALS), (_index_only, 3, "model", 60),
    (_matrix_dir, 4, "matrix", 100), (_checkpoint, 5, "checkpoint", 100)],
    ids=["batch+index", "online", "index", "matrix", "checkpoint"])
def test_every_mutation_loads_finite_or_fails_cleanly(tmp_path, make, seed, kind, n_trials):
    trials = _run_child(tmp_path, make, seed, n_trials, kind)
    assert len(trials) == n_trials
    bad = [t for t in trials if not (t["outcome"] == "loaded" or t["outcome"].startswith("error: "))]
    assert not bad, "\n".join(f"{t['mutations']}: {t['outcome']}" for t in bad[:10])
    # a damaged folder (its checksums the pristine one's) that differs in any byte is refused at load
    missed = [t for t in trials if not t["forged"] and t["changed"] and not t["outcome"].startswith("error: ")]
    assert not missed, "\n".join(f"{t['mutations']}: {t['outcome']}" for t in missed[:10])
    damaged = [t for t in trials if not t["forged"] and t["changed"]]
    assert len(damaged) >= n_trials // 4 and any("checksum" in t["outcome"] for t in damaged)
    # forged folders (checksums recorded again): the mutator must exercise both paths of the loaders' own
    # checks, or the test could pass by never loading anything
    counts = Counter(t["outcome"].split(":")[0] for t in trials if t["forged"])
    assert counts["error"] >= n_trials // 8 and counts["loaded"] >= 3, counts
