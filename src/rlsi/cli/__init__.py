"""The ``rlsi`` command: a thin shell over the public API (no logic the library lacks)."""
