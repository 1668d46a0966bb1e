"""The soak runs reuse the suite's helpers and fixtures (``plugins/shared_memory/tests``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
