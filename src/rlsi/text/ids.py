"""Document ids as rlsi stores them: :mod:`rlsi.io.ids` (the checks run before anything is written, so they
live with the writers), re-exported for the text pipeline's readers."""

from ..io.ids import MAX_ID_LENGTH, check_id, check_ids, id_problem  # noqa: F401

__all__ = ["MAX_ID_LENGTH", "id_problem", "check_id", "check_ids"]
