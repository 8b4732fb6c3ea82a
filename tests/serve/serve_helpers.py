"""Shared pieces of the server's tests: a small live index of the themed notes (fruit, cars, space, music;
an LSI model of four topics), its texts in the server's store, and a server process started on 127.0.0.1
with its address read from what it prints."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from explorer._models import themed_docs

REPO = Path(__file__).resolve().parents[2]
#: Seconds a test waits for a server to start or stop before it fails (a bound, not a timing).
PATIENCE = 120

_FITTED = []


def themed():
    """``(ids, texts, vectorizer, model)`` of the themed notes, fitted once."""
    if not _FITTED:
        from rlsi.models.baselines import LSI
        from rlsi.text import TfidfVectorizer

        docs = themed_docs()
        texts = [d["title"] + "\n" + d["text"] for d in docs]
        vec = TfidfVectorizer()
        model = LSI(4, random_state=0).fit(vec.fit_transform(texts))
        _FITTED.extend([[d["id"] for d in docs], texts, vec, model])
    return tuple(_FITTED)


def build_index(path, *, texts=True, commits=1, model=True):
    """A live index of the themed notes in ``path`` (in ``commits`` segments), their texts stored when
    ``texts``; ``model=False``: BM25 only. Returns the path."""
    from rlsi.retrieval.live import LiveIndex
    from rlsi.serve.texts import TextStore

    ids, docs, vec, lsi = themed()
    index = LiveIndex.create(path, lsi if model else None, vec, alpha=0.4 if model else 0.0, durable=False)
    with index:
        step = -(-len(ids) // commits)
        for a in range(0, len(ids), step):
            index.add(docs[a:a + step], ids[a:a + step])
            index.commit()
    if texts:
        store = TextStore(path)
        store.apply(zip(ids, docs))
        store.close()
    return Path(path)


def env():
    return dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
                TQDM_DISABLE="1")


class ServerProcess:
    """``rlsi serve ARGS --port 0`` in a child process: ``url`` once it serves, ``stop(sig)``, ``kill()``."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([sys.executable, "-m", "rlsi", "serve", *map(str, args), "--port", "0"],
                                     cwd=REPO, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = None
        line = self.proc.stdout.readline()  # the announcement, or nothing when the server failed
        found = re.search(r"at (http://127\.0\.0\.1:\d+/) ", line)
        if found is None:
            self.proc.kill()
            out, err = self.proc.communicate(timeout=PATIENCE)
            raise AssertionError(f"the server did not start: {line}{out}{err}")
        self.url = found.group(1)

    def stop(self, sig=signal.SIGTERM):
        """Send ``sig`` and wait: ``(exit status, stderr)``."""
        self.proc.send_signal(sig)
        _, err = self.proc.communicate(timeout=PATIENCE)
        return self.proc.returncode, err

    def kill(self):
        self.proc.kill()  # SIGKILL
        self.proc.communicate(timeout=PATIENCE)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.kill()


def wait_for(predicate, what, timeout=PATIENCE):
    """Poll ``predicate()`` until it is true; fail naming ``what`` after ``timeout`` seconds (a bound for a
    broken build, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)
