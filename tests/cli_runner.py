"""The ``rlsi`` command run in-process for a test: ``run(capsys, *argv)`` -> ``(status, out, err)``."""

from rlsi.cli.main import main


def run(capsys, *argv):
    """``rlsi -q ARGV...`` (quiet: no progress bars in the captured error stream)."""
    return run_verbose(capsys, "-q", *argv)


def run_verbose(capsys, *argv):
    """``rlsi ARGV...`` as a user types it (notes and progress on the error stream)."""
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err
