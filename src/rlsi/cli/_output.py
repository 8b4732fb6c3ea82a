"""Where a command's output goes, and what it prints: the destination checks of the sub-commands and the
escaping of text taken from files (ids, terms) in human-readable output.

* :func:`model_destination`, :func:`matrix_destination`, :func:`index_destination`, :func:`file_destination`
  — the checks of :mod:`rlsi.io.kinds` run before any work: an output replaces only a folder of its own
  kind, never an input of the command nor a path inside an rlsi folder (one line, nothing written);
  :func:`replacing_notice` says so when a model folder is replaced.
* :func:`require_model_folder` — a search index attaches only to a model folder.
* :func:`printable` — control characters (ESC, BEL, newlines, C1 codes, bidirectional overrides) of
  document ids and terms are shown escaped (``\\x1b``, ``\\n``), so a crafted id cannot move the cursor,
  change the terminal's title or forge result lines. ``--json`` output is escaped by JSON itself.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["model_destination", "replacing_notice", "matrix_destination", "index_destination", "report_destination",
           "file_destination", "fit_inputs",
           "resume_fingerprint", "require_model_folder", "printable", "printable_all"]


def model_destination(path, reads=()):
    """A model folder to write (``rlsi fit``, ``rlsi fit-stc``)."""
    from ..io import kinds

    return kinds.check_destination(path, kind="model", reads=reads)


def replacing_notice(path, *, quiet=False, what="fit"):
    """One line on stderr (unless ``quiet``) when ``path`` holds a model folder that the command's output
    replaces when it finishes: the model, and with it its search index (``rlsi search --save-index``)."""
    import json
    import sys

    from ..io import kinds

    if quiet or kinds.folder_kind(path) not in ("model", "index"):
        return False
    try:
        components = json.loads((Path(path) / kinds.MANIFEST).read_text(encoding="utf-8")).get("components", {})
    except (OSError, ValueError, AttributeError):
        components = {}
    held = "a model and its search index" if "index" in components else "a model"
    print(f"rlsi: note: {printable(path)} holds {held}; this {what} replaces it when it finishes", file=sys.stderr)
    return True


def matrix_destination(path, reads=()):
    """A matrix directory to write (``rlsi synth``, ``rlsi ingest``)."""
    from ..io import kinds

    return kinds.check_destination(path, kind="matrix", reads=reads)


def index_destination(model_dir, reads=()):
    """The model folder an index is saved into (``rlsi index``, ``rlsi search --save-index``)."""
    from ..io import kinds

    kinds.require_model_folder(model_dir)
    return kinds.check_destination(model_dir, kind="index", reads=reads, what="MODEL_DIR",
                                   remedy="give the model folder written by 'rlsi fit'")


def report_destination(path, *, marker, kind, reads=()):
    """A report folder to write (``rlsi track``, ``rlsi select``): not inside an rlsi folder, apart from the
    inputs, and either new, empty or a report of its own kind (holding ``marker``), which it replaces."""
    from .. import io
    from ..errors import RLSIError
    from ..io import kinds

    kinds.check_reads_apart(path, reads)
    outer = kinds.enclosing_folder(path)
    if outer is not None:
        raise RLSIError(f"output {path} is inside {outer}, {kinds.describe_kind(kinds.folder_kind(outer))}: "
                        f"writing there would damage it; choose another -o")
    io.check_output_dir(path, what="output", is_ours=lambda p: (Path(p) / marker).is_file(), kind=kind,
                        remedy="choose another -o")


def file_destination(path, reads=(), what="output"):
    """An output file (``rlsi transform -o``, ``rlsi evaluate --json``)."""
    from ..io import kinds

    return kinds.check_file_destination(path, reads=reads, what=what)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text) -> str:
    """``text`` with every character that is not printable (controls, format characters such as the
    bidirectional overrides, line and paragraph separators, surrogates, unassigned code points) shown as
    its backslash escape; printable text is returned as it is."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape_char(ch) for ch in text)


def fit_inputs(args, output):
    """What ``rlsi fit`` reads: its corpus files, ``--matrix``, and ``--resume`` MODEL_DIR unless the fit
    writes back into it (the documented default, guarded by :func:`rlsi.io.kinds.fingerprint`)."""
    import os

    reads = [*(getattr(args, "corpus", None) or []), getattr(args, "matrix", None)]
    resume = getattr(args, "resume", None)
    if resume is not None and os.path.realpath(resume) != os.path.realpath(output):
        reads.append(resume)
    return reads


def resume_fingerprint(resume, output):
    """The fingerprint of ``--resume`` MODEL_DIR when the fit writes back into it (None otherwise): two
    resumes of one folder at once cannot both save, the second finds the folder changed and refuses."""
    import os

    from ..io import kinds

    if os.path.realpath(resume) != os.path.realpath(output):
        return None
    return kinds.fingerprint(resume)


def require_model_folder(path):
    """A search index attaches only to a model folder (:func:`rlsi.io.kinds.require_model_folder`)."""
    from ..io import kinds

    return kinds.require_model_folder(path)


def printable_all(texts) -> list:
    """:func:`printable` of each of ``texts`` (a vocabulary: printable terms cost one test each)."""
    return [t if t.isprintable() else printable(t) for t in map(str, texts)]
