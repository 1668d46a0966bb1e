"""The test kit's ``hermetic_memory``: the real memory plugin with a deterministic embedder, so a plugin's
memory-backed tests load no model and get the same vectors on every run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest

from ego_core import MEMORY_STORE, MemoryService
from ego_core.testing import DeterministicEmbedder, call_ok, mcp_client

if TYPE_CHECKING:
    from ego_core.testing import HermeticMemory, HostFactory

pytestmark = pytest.mark.anyio


def test_the_deterministic_embedder_is_stable_and_sees_shared_words() -> None:
    embedder = DeterministicEmbedder()
    first, again, near, far, ja, ja_near = embedder.embed(
        [
            "A walk by the river",
            "A walk by the river",
            "walk along the river",
            "tax forms",
            "川沿いを散歩した",
            "川沿いを歩いた",
        ]
    )
    assert (first == again).all()
    assert abs(float(first @ first) - 1.0) < 1e-6
    assert float(first @ near) > float(first @ far)
    assert float(ja @ ja_near) > float(ja @ far)


async def test_memory_backed_tests_need_no_model(
    make_host: HostFactory, hermetic_memory: HermeticMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ego_memory.embedding.use as use

    def no_model(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the multilingual model was loaded")

    monkeypatch.setattr(use.UseEmbedder, "__init__", no_model)
    host = make_host(dict(hermetic_memory.plugins), config=hermetic_memory.config)
    async with mcp_client(host) as client:
        await call_ok(client, "remember", {"content": "A walk by the river at dawn.", "intensity": 0.9})
        await call_ok(client, "remember", {"content": "川沿いを散歩した。", "emotion": "happy"})
        found = await call_ok(client, "recall", {"context": "river walk"})
        assert "A walk by the river at dawn." in found
        service = host.services.get(MEMORY_STORE, MemoryService)
        assert service is not None
        assert service.embedding_model == "ego-testing:deterministic"
        strongest = service.strongest(datetime.now(UTC) - timedelta(days=1), 1)
        assert [m.content for m in strongest] == ["A walk by the river at dawn."]
