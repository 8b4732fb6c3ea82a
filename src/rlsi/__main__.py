"""``python -m rlsi``: the ``rlsi`` command (:mod:`rlsi.cli.main`)."""

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
