"""Settings shared by every test suite in the repository (plugins' suites included)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# No per-example deadline: the suites run on shared 2-core CI machines next to other tox environments.
settings.register_profile("dev", deadline=None)
settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
