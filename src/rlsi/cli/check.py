"""``rlsi check FOLDER``: verify an rlsi folder whole — every checksum of its manifest, then every check a load
makes — and say what it is.

A load verifies the checksums of what it reads into memory and of small memory-mapped files; this command
verifies every file, the large memory-mapped arrays of a matrix directory or a search index included
(:mod:`rlsi.io.verify`; a checkpoint directory: :func:`rlsi.distributed.checkpoint.verify_directory`; a live
search index: its model, vectorizer and then every segment file, :func:`rlsi.retrieval.live.check_live_folder`). A
damaged folder ends in one line naming the file (status 2); a folder written without checksums is checked
for everything else, and the line says so.

Nothing heavy is imported when the command is registered (``rlsi --help`` stays fast).
"""

from __future__ import annotations


def register(sub):
    p = sub.add_parser("check", help="verify an rlsi folder: every checksum, then every check of a load",
                       description="Verify a model, search index, matrix or checkpoint folder whole: every file "
                                   "against the checksum its manifest records, then every check a load makes. "
                                   "One line says what the folder is; a damaged one ends in one error line "
                                   "naming the file (status 2).")
    p.add_argument("folder", help="the folder to verify (written by rlsi fit, index, synth, ingest, track, or a "
                                  "--checkpoint-dir)")
    p.set_defaults(func=run)


def run(args):
    import os

    from ..distributed.checkpoint import is_checkpoint_directory, verify_directory
    from ..errors import RLSIError
    from ..io import verify
    from ..io.kinds import folder_kind

    path = args.folder
    if not os.path.isdir(path):
        raise RLSIError(f"{path} is not a folder: give an rlsi folder (a model, an index, a matrix directory or "
                        f"a checkpoint directory)")
    checkpoint = is_checkpoint_directory(path)
    if not checkpoint and folder_kind(path) is None:
        raise RLSIError(f"{path} is not an rlsi folder (no manifest.json); give a folder written by rlsi")
    bar = _bar(verify.folder_bytes(path), quiet=args.quiet)
    progress = None if bar is None else bar.update
    try:
        report = verify_directory(path, progress=progress) if checkpoint else verify.check_folder(path,
                                                                                                   progress=progress)
    finally:
        if bar is not None:
            bar.close()
    line = report.describe()
    if not checkpoint and folder_kind(path) == "live":
        from ..retrieval.live import check_live_folder

        line += "; " + check_live_folder(path)
    if not args.quiet:
        from ._output import printable

        print(printable(line))
    return 0


def _bar(total, *, quiet):
    """A progress bar over the bytes to hash when they take more than about a second (256 MB), else None."""
    if quiet or total < 256 << 20:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="rlsi check", unit="B", unit_scale=True, unit_divisor=1024, leave=False)
