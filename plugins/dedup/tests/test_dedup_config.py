"""Configuration: ``[plugins.dedup]`` and ``EGO_DEDUP_THRESHOLD`` / ``EGO_MERGE_THRESHOLD``, validated; unset
thresholds come from the embedding model's similarity profile."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from dedup_support import DUPLICATE, MERGE, store_of

from ego_core import Clock, ConfigError, PluginHost
from ego_core.testing import HostFactory, load_settings
from ego_dedup import DedupConfig, DedupPlugin
from ego_memory.embedding.profiles import MINILM_INT8_PROFILE, USE_PROFILE
from ego_memory.plugin import MemoryPlugin


@pytest.fixture(autouse=True)
def _no_inherited_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EGO_DEDUP_THRESHOLD", raising=False)
    monkeypatch.delenv("EGO_MERGE_THRESHOLD", raising=False)


def test_defaults(dedup_host: Callable[..., PluginHost]) -> None:
    host = dedup_host()
    host.start()
    config = host.context("dedup").config
    assert config == DedupConfig(dedup_threshold=None, merge_threshold=None, max_merge_candidates=5, max_recent=500)
    # unset thresholds are the default embedder's (use) calibrated profile
    profile = store_of(host).similarity_profile
    assert profile == USE_PROFILE
    assert config.thresholds(profile) == (DUPLICATE, MERGE) == (0.85, 0.85)


def test_the_defaults_follow_the_configured_model(make_host: HostFactory, clock: Clock) -> None:
    host = make_host(
        {"memory": MemoryPlugin(), "dedup": DedupPlugin()},
        config={"memory": {"embedder": "onnx"}},  # all-MiniLM-L6-v2 int8, installed with ego
        clock=clock,
    )
    host.start()
    profile = store_of(host).similarity_profile
    assert profile == MINILM_INT8_PROFILE
    assert host.context("dedup").config.thresholds(profile) == (0.95, 0.90)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (DedupConfig(dedup_threshold=0.97, merge_threshold=0.92), (0.97, 0.92)),
        (DedupConfig(dedup_threshold=0.9), (0.9, 0.85)),  # merge from the profile
        (DedupConfig(merge_threshold=0.8), (0.85, 0.8)),  # dedup from the profile
        (DedupConfig(dedup_threshold=0.8), (0.8, 0.8)),  # the merge net is never narrower than the guard
        (DedupConfig(merge_threshold=0.97), (0.85, 0.85)),  # likewise, against the profile's guard
    ],
)
def test_configured_thresholds_win_over_the_profile(config: DedupConfig, expected: tuple[float, float]) -> None:
    assert config.thresholds(USE_PROFILE) == expected


def test_config_file_table_and_environment_override(
    make_host: HostFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file = tmp_path / "ego.toml"
    config_file.write_text(
        "[plugins.dedup]\ndedup_threshold = 0.97\nmerge_threshold = 0.92\nmax_merge_candidates = 3\nmax_recent = 100\n",
        encoding="utf-8",
    )
    settings = load_settings(config_path=config_file, data_dir=tmp_path / "data", env={})
    from_file = make_host({"memory": MemoryPlugin(), "dedup": DedupPlugin()}, settings=settings)
    assert from_file.context("dedup").config == DedupConfig(
        dedup_threshold=0.97, merge_threshold=0.92, max_merge_candidates=3, max_recent=100
    )

    monkeypatch.setenv("EGO_DEDUP_THRESHOLD", "0.99")
    monkeypatch.setenv("EGO_MERGE_THRESHOLD", "0.8")
    from_env = make_host({"memory": MemoryPlugin(), "dedup": DedupPlugin()}, settings=settings)
    config = from_env.context("dedup").config
    assert (config.dedup_threshold, config.merge_threshold) == (0.99, 0.8)
    assert (config.max_merge_candidates, config.max_recent) == (3, 100)


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ({"dedup_threshold": 0}, "dedup_threshold"),
        ({"dedup_threshold": 1.5}, "dedup_threshold"),
        ({"dedup_threshold": -0.2}, "dedup_threshold"),
        ({"dedup_threshold": "nan"}, "dedup_threshold"),
        ({"dedup_threshold": "high"}, "dedup_threshold"),
        ({"merge_threshold": 0}, "merge_threshold"),
        ({"merge_threshold": True}, "merge_threshold"),
        ({"dedup_threshold": 0.95, "merge_threshold": 0.97}, "merge_threshold"),  # above dedup_threshold
        ({"dedup_threshold": 0.85, "merge_threshold": 0.90}, "merge_threshold"),  # dedup_threshold below it
        ({"max_merge_candidates": 0}, "max_merge_candidates"),
        ({"max_merge_candidates": 2.5}, "max_merge_candidates"),
        ({"max_recent": 0}, "max_recent"),
        ({"max_recent": "all"}, "max_recent"),
    ],
)
def test_invalid_values_name_the_key(make_host: HostFactory, table: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError, match=rf"plugins\.dedup\.{key}\b"):
        make_host({"memory": MemoryPlugin(), "dedup": DedupPlugin()}, config={"dedup": table})


@pytest.mark.parametrize(
    ("variables", "key"),
    [
        ({"EGO_DEDUP_THRESHOLD": "very"}, "dedup_threshold"),
        ({"EGO_DEDUP_THRESHOLD": "2"}, "dedup_threshold"),
        ({"EGO_MERGE_THRESHOLD": "0"}, "merge_threshold"),
        ({"EGO_DEDUP_THRESHOLD": "0.9", "EGO_MERGE_THRESHOLD": "0.99"}, "merge_threshold"),
    ],
)
def test_invalid_environment_values_name_the_key(
    make_host: HostFactory, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], key: str
) -> None:
    for variable, value in variables.items():
        monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=rf"\.{key}\b"):
        make_host({"memory": MemoryPlugin(), "dedup": DedupPlugin()})


def test_the_messages_say_what_is_expected(make_host: HostFactory) -> None:
    with pytest.raises(ConfigError, match=r"cosine similarity greater than 0 and at most 1"):
        make_host({"memory": MemoryPlugin(), "dedup": DedupPlugin()}, config={"dedup": {"dedup_threshold": 1.5}})
    with pytest.raises(ConfigError, match=r"must not exceed dedup_threshold"):
        make_host(
            {"memory": MemoryPlugin(), "dedup": DedupPlugin()},
            config={"dedup": {"dedup_threshold": 0.95, "merge_threshold": 0.97}},
        )


def test_unknown_key_is_an_error(make_host: HostFactory) -> None:
    with pytest.raises(ConfigError, match="threshold_dedup"):
        make_host({"memory": MemoryPlugin(), "dedup": DedupPlugin()}, config={"dedup": {"threshold_dedup": 0.9}})


def test_the_boundaries_are_accepted() -> None:
    assert DedupConfig(dedup_threshold=1.0, merge_threshold=1.0).merge_threshold == 1.0
    assert DedupConfig(merge_threshold=1.0).merge_threshold == 1.0  # thresholds() caps it at the guard
    assert DedupConfig(dedup_threshold=0.9, merge_threshold=0.9, max_merge_candidates=1, max_recent=1).max_recent == 1
