"""``python -m rlsi``: the ``rlsi`` command (:mod:`rlsi.cli.main`)."""

from .cli.main import run

if __name__ == "__main__":
    run()
