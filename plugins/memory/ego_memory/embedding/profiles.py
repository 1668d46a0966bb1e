"""The similarity profile of each built-in model: what its cosine similarities mean, calibrated on real pairs.

The values come from ``ego bench calibrate`` (JSTS and JNLI pairs for Japanese, Tanaka translation pairs across
languages, nonsense and unrelated queries for the recall floor); docs/benchmarks.md shows the figures behind
them. A model without a profile gets :data:`GENERIC`, marked uncalibrated (``ego doctor`` says so).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

import attrs

from ego_core import SimilarityProfile

from .onnx import PACKAGED_MODEL_ID, STANDARD_MODEL_NAME
from .use import USE_MODEL_ID

USE_PROFILE: Final = SimilarityProfile(
    model_id=USE_MODEL_ID,
    duplicate=0.85,
    merge=0.85,
    link=0.65,
    related=0.35,
    floor=0.25,
    source=(
        "ego bench calibrate --data shared/data/ja (bench/results/calibration.json): JGLUE JSTS/JNLI validation "
        "pairs, Tanaka sentences and JSQuAD paragraphs. Guard: JSTS <= 3.0 refused 0 of 924, JNLI contradictions "
        "2 of 735; JSTS <= 3.0 listed as merge candidates 1.8 %; unrelated pairs reach `link` in 0.03 % and "
        "`related` in 2.2 %; `floor` hides 0.4 % of translation pairs"
    ),
)
MINILM_PROFILE: Final = SimilarityProfile(
    model_id=f"onnx:{STANDARD_MODEL_NAME}",
    duplicate=0.95,
    merge=0.90,
    link=0.70,
    related=0.40,
    floor=0.30,
    source="the English defaults ego was first tuned with (LoCoMo); English only: Japanese pairs look alike",
)
MINILM_INT8_PROFILE: Final = attrs.evolve(
    MINILM_PROFILE,
    model_id=PACKAGED_MODEL_ID,
    source="all-MiniLM-L6-v2's values: the int8 weights' cosines agree with the float32 model's to 0.998-0.9997",
)
GENERIC: Final = SimilarityProfile(
    model_id="",
    duplicate=0.95,
    merge=0.90,
    link=0.70,
    related=0.40,
    floor=0.30,
    calibrated=False,
    source="no calibration for this model: generic values; set the thresholds in ego.toml after measuring",
)

PROFILES: Final = MappingProxyType(
    {profile.model_id: profile for profile in (USE_PROFILE, MINILM_PROFILE, MINILM_INT8_PROFILE)}
)


def profile_for(model_id: str) -> SimilarityProfile:
    """The calibrated profile of ``model_id``, else the generic (uncalibrated) one under that id."""
    known = PROFILES.get(model_id)
    return known if known is not None else attrs.evolve(GENERIC, model_id=model_id)
