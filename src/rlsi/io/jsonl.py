"""The one JSON-lines reader: corpora, queries, anything with one JSON object a line.

The file may be gzip-compressed (recognised by its first bytes or a ``.gz`` name; read once, so a pipe
works too); its content must be UTF-8 (a byte-order mark on the first line is accepted); blank lines
are skipped. Every problem raises ``error`` (default :class:`rlsi.errors.CorpusError`) with one line
naming the file and, when it applies, the line number.
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from ..errors import CorpusError

__all__ = ["iter_json_lines", "MAX_LINE_BYTES"]

#: Longest line read (bytes): a document of a corpus is far smaller; a file without line ends (a binary
#: file, /dev/zero through a link) stops here instead of filling the memory.
MAX_LINE_BYTES = 256 << 20


def _lines(stream):
    """The lines of a binary stream, each read with a length limit (one longer than the limit is cut after
    ``MAX_LINE_BYTES + 1`` bytes, which the caller refuses)."""
    while True:
        line = stream.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        yield line


def iter_json_lines(path, *, what="corpus", error=CorpusError):
    """Yield ``(line_number, object)`` for each non-blank line of ``path`` (1-based line numbers).

    what : the name of the file's role in messages ("corpus", "queries"...).
    error : the exception class raised for every problem.
    """
    path = Path(path)
    if not path.exists():
        raise error(f"{what} file not found: {path}")
    if path.is_dir():
        raise error(f"{path} is a folder; expected a JSON lines file")
    if path.is_char_device() or path.is_block_device():
        raise error(f"{path} is a device, not a file; expected a JSON lines file")
    lineno = 0
    try:
        with open(path, "rb") as raw:
            gzipped = raw.peek(2)[:2] == b"\x1f\x8b" or path.suffix == ".gz"
            stream = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw
            for lineno, line in enumerate(_lines(stream), start=1):
                if len(line) > MAX_LINE_BYTES:
                    raise error(f"{path}, line {lineno}: longer than {MAX_LINE_BYTES >> 20} MB without a line end; "
                                f"a JSON lines file holds one document a line")
                text = line.decode("utf-8-sig" if lineno == 1 else "utf-8").strip()
                if not text:
                    continue
                try:
                    obj = json.loads(text)
                except RecursionError:
                    raise error(f"{path}, line {lineno}: not valid JSON (nested too deeply)") from None
                except ValueError as exc:  # JSONDecodeError, or an integer with too many digits
                    raise error(f"{path}, line {lineno}: not valid JSON "
                                f"({getattr(exc, 'msg', None) or ' '.join(str(exc).split())})") from None
                if not isinstance(obj, dict):
                    raise error(f"{path}, line {lineno}: expected a JSON object, got {type(obj).__name__}")
                yield lineno, obj
    except UnicodeDecodeError as exc:
        raise error(f"{path}, line {lineno}: not UTF-8 text (byte {exc.start}: "
                    f"{exc.object[exc.start:exc.start + 1]!r})") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise error(f"{path}: damaged gzip file ({exc})") from None
    except OSError as exc:
        raise error(f"cannot read {what} file {path}: {exc.strerror or exc}") from None
