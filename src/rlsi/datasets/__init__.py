"""Small datasets shipped with rlsi.

The demo collection is MED (MEDLINE): 1033 medical abstracts, 30 queries and 696 binary relevance
judgements, in the shared IR format (see ``med/PROVENANCE.md`` for source, checksums and counts):

* ``corpus.jsonl.gz`` -- gzip'ed JSON lines ``{"id", "title", "text"}`` (``title`` is empty in MED);
* ``queries.jsonl`` -- JSON lines ``{"id", "text"}``;
* ``qrels.tsv`` -- TREC qrels ``qid 0 docid rel``, tab separated, no header.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import RLSIError
from ..text.corpus import Corpus, read_jsonl

__all__ = ["PACKAGED_COLLECTIONS", "collection_dir", "demo_collection_dir", "demo_corpus_path",
           "load_demo_corpus"]

#: Names of the IR collections shipped with rlsi (``rlsi evaluate --collection med``).
PACKAGED_COLLECTIONS = ("med",)


def demo_collection_dir() -> Path:
    """The folder of the demo IR collection (``corpus.jsonl.gz``, ``queries.jsonl``, ``qrels.tsv``)."""
    folder = resources.files(__name__).joinpath("med")
    if not isinstance(folder, Path) or not folder.is_dir():
        raise RLSIError(f"the demo dataset is not available as files ({folder}); reinstall rlsi from "
                        "a wheel or source tree")
    return folder


def collection_dir(name) -> Path:
    """The folder of a packaged collection named ``name`` (case-insensitive; one of
    :data:`PACKAGED_COLLECTIONS`)."""
    if str(name).lower() not in PACKAGED_COLLECTIONS:
        raise RLSIError(f"no packaged collection {name!r}; packaged: {', '.join(PACKAGED_COLLECTIONS)}")
    return demo_collection_dir()


def demo_corpus_path() -> Path:
    """Path of the demo corpus file ``corpus.jsonl.gz`` (1033 documents)."""
    return demo_collection_dir() / "corpus.jsonl.gz"


def load_demo_corpus() -> Corpus:
    """The demo corpus (MED, 1033 documents) as a :class:`rlsi.text.Corpus`."""
    return read_jsonl(demo_corpus_path())
