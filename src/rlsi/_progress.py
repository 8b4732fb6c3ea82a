"""Progress bars for long work (tqdm), silent unless asked; one helper for every learner and command."""

from __future__ import annotations


def progress_bar(total, desc, *, verbose=1, unit="it", **kwargs):
    """A tqdm bar of ``total`` steps when ``verbose`` is truthy, else None (callers test for None)."""
    if not verbose:
        return None
    from tqdm.auto import tqdm  # imported on demand: tqdm.auto probes for notebooks at import

    return tqdm(total=total, desc=desc, unit=unit, leave=False, **kwargs)
