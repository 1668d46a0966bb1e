"""The ``ego_core.testing`` fixtures (``make_host``, ``fake_dist``, ``ego_settings``, ``anyio_backend``) load
automatically through ego-core's ``pytest11`` entry point; this file only undoes process-wide logging state."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ego_core.logs import install_pipeline
from ego_core.redaction import default_pipeline


@pytest.fixture(autouse=True)
def _default_redaction_afterwards() -> Iterator[None]:
    """A host installs its redaction pipeline (with our redactor) for the whole process; put the default back."""
    yield
    install_pipeline(default_pipeline())
