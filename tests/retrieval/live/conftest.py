"""Fixtures of the live index tests (the helpers are in live_helpers.py)."""

import pytest
from retrieval.live.live_helpers import fitted_models


@pytest.fixture(scope="session")
def fitted():
    return fitted_models()
