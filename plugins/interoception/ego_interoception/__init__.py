"""ego interoception: a body sense from the clock and psutil, provided as the service ``interoception.body``."""

from __future__ import annotations

from ego_interoception.body import (
    CPU_MIN_INTERVAL,
    LOAD_BANDS,
    LOAD_HIGH_AT,
    LOAD_MODERATE_AT,
    MEMORY_BANDS,
    MEMORY_HIGH_AT,
    MEMORY_MODERATE_AT,
    PHASES,
    UNKNOWN,
    BodySenseService,
    BodyState,
    CpuMeter,
    PsutilSampler,
    Readings,
    Sampler,
    load_band,
    local_phase,
    memory_band,
    phase_for_hour,
)
from ego_interoception.config import CONFIG_ENV, InteroceptionConfig
from ego_interoception.plugin import InteroceptionPlugin

__all__ = [
    "CONFIG_ENV",
    "CPU_MIN_INTERVAL",
    "LOAD_BANDS",
    "LOAD_HIGH_AT",
    "LOAD_MODERATE_AT",
    "MEMORY_BANDS",
    "MEMORY_HIGH_AT",
    "MEMORY_MODERATE_AT",
    "PHASES",
    "UNKNOWN",
    "BodySenseService",
    "BodyState",
    "CpuMeter",
    "InteroceptionConfig",
    "InteroceptionPlugin",
    "PsutilSampler",
    "Readings",
    "Sampler",
    "load_band",
    "local_phase",
    "memory_band",
    "phase_for_hour",
]
