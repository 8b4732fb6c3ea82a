"""Pickle-free persistence and safe file output.

* :mod:`rlsi.io.store` — the model directory format: :func:`save`, :func:`load`, :func:`register`;
  loading treats the directory as untrusted input (:mod:`rlsi.io.safety`, :mod:`rlsi.io.checks`).
* :mod:`rlsi.io.atomic` — the one way rlsi writes files and folders: whole or not at all
  (:func:`atomic_file`, :func:`atomic_dir`, :func:`write_text`, :func:`save_npy`), and the early checks
  of an output location (:func:`check_output_file`, :func:`check_output_dir`).
* :mod:`rlsi.io.jsonl` — the one JSON-lines reader (:func:`iter_json_lines`).
* :mod:`rlsi.io.matrix` — the matrix directory (a model directory holding a documents x terms matrix),
  written by streaming and memory-mapped on load (:func:`load_matrix`, :class:`MatrixWriter`).
"""

__all__ = ["FORMAT_VERSION", "Bundle", "CorpusMatrix", "MatrixWriter", "atomic_dir", "atomic_file",
           "check_output_dir", "check_output_file", "iter_json_lines", "load", "load_matrix", "register", "save",
           "save_matrix", "save_npy", "write_text"]

from .atomic import (atomic_dir, atomic_file, check_output_dir, check_output_file,  # noqa: F401
                     save_npy, write_text)
from .jsonl import iter_json_lines  # noqa: F401
from .store import FORMAT_VERSION, Bundle, load, register, save  # noqa: F401
from .matrix import CorpusMatrix, MatrixWriter, load_matrix, save_matrix  # noqa: F401,E402
