"""An embedding provider that fails during a tool call (a refused key, an outage) gives the agent an ``isError``
result with a scrubbed reason and the right advice, never "Internal error"; a missing key names the real
configuration (``api_key_env``). HTTP goes to an httpx.MockTransport: no network."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np
import pytest

from ego_core import EmbedderFactory, EmbedderSettings, EmbeddingError, hookimpl
from ego_core.testing import mask_secrets, mcp_client, tool_text
from ego_memory.config import MemoryConfig
from ego_memory.embedding import BUILTIN_EMBEDDERS
from ego_memory.embedding.errors import ProviderError
from ego_memory.embedding.openai import OpenAIEmbedder
from ego_memory.plugin import embedding_tool_error
from ego_memory.runtime import embedder_settings

if TYPE_CHECKING:
    from conftest import MemoryHosts

KEY = "sk-test-SECRET-provider-key-987"
WIDTH = 16


class FakeOpenAI:
    """A MockTransport handler whose behaviour the test switches: answering, refusing the key, or down."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if self.mode == "401":
            # OpenAI quotes part of the key it refused: that text must not reach the agent
            message = f"Incorrect API key provided: {KEY[:8]}****{KEY[-3:]}. You can find your API key at …"
            return httpx.Response(401, json={"error": {"message": message, "type": "invalid_request_error"}})
        if self.mode == "503":
            return httpx.Response(503, json={"error": {"message": f"overloaded (key {KEY})"}})
        texts = json.loads(request.content)["input"]
        data = [{"index": i, "embedding": vector(text)} for i, text in enumerate(texts)]
        return httpx.Response(200, json={"data": data})


def vector(text: str) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
    return [float(x) for x in np.random.default_rng(seed).normal(size=WIDTH)]


class MockProvider:
    """A plugin registering ``mock-openai``: the real OpenAIEmbedder over the fake transport, no sleeping."""

    def __init__(self, fake: FakeOpenAI) -> None:
        self.fake = fake

    @hookimpl
    def register_embedders(self, register: Callable[[str, EmbedderFactory], None]) -> None:
        def factory(settings: EmbedderSettings) -> OpenAIEmbedder:
            client = httpx.Client(transport=httpx.MockTransport(self.fake))
            return OpenAIEmbedder(settings, client=client, sleep=lambda _s: None)

        register("mock-openai", factory)


@pytest.fixture
def provider_host(
    memory_hosts: MemoryHosts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any, FakeOpenAI]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("EGO_TEST_EMBEDDING_KEY", KEY)
    fake = FakeOpenAI()
    host, plugin = memory_hosts(
        tmp_path / "data",
        memory={"embedder": "mock-openai", "model": "mock-embed", "api_key_env": "EGO_TEST_EMBEDDING_KEY"},
        plugins={"mockprovider": MockProvider(fake)},
    )
    return host, plugin, fake


@pytest.mark.anyio
async def test_a_refused_key_is_a_tool_error_naming_the_variable_never_the_key(
    provider_host: tuple[Any, Any, FakeOpenAI],
) -> None:
    host, plugin, fake = provider_host
    async with mcp_client(host) as client:
        saved = await client.call_tool("remember", {"content": "The provider still answers."})
        assert not saved.is_error, tool_text(saved)
        fake.mode = "401"
        before = fake.requests
        refused = await client.call_tool("remember", {"content": "Now the key has been revoked."})
        recall = await client.call_tool("recall", {"context": "a revoked key"})
    for result in (refused, recall):
        text = tool_text(result)
        assert result.is_error
        assert "Internal error" not in text
        assert "The openai embedding provider refused the API key (HTTP 401)" in text
        assert "EGO_TEST_EMBEDDING_KEY" in text
        assert "restart ego" in text
        assert KEY not in text
        assert KEY[:8] not in text
        assert "Incorrect API key" not in text
    assert fake.requests == before + 2  # a refused key is not retried
    assert plugin._require().store.count() == 1  # nothing was saved


@pytest.mark.anyio
async def test_an_outage_is_a_tool_error_saying_try_again_later(provider_host: tuple[Any, Any, FakeOpenAI]) -> None:
    host, plugin, fake = provider_host
    fake.mode = "503"
    async with mcp_client(host) as client:
        result = await client.call_tool("remember", {"content": "Saved while the provider is down."})
    text = tool_text(result)
    assert result.is_error
    assert "Internal error" not in text
    assert "is not answering right now (HTTP 503, 5 attempts)" in text
    assert "try again in a few minutes" in text
    assert KEY not in text
    assert fake.requests == 5  # the default 4 retries were made first
    assert plugin._require().store.count() == 0
    fake.mode = "ok"  # ... and later it works
    async with mcp_client(host) as client:
        assert not (await client.call_tool("remember", {"content": "Saved once it is back."})).is_error


def test_every_kind_of_embedding_failure_maps_to_advice() -> None:
    auth = ProviderError("x", provider="gemini", kind="auth", reason="HTTP 403", key_env=("GEMINI_API_KEY",))
    assert "environment variable GEMINI_API_KEY" in embedding_tool_error(auth).message
    request = ProviderError("x", provider="openai", kind="request", reason="HTTP 400: bad model")
    assert "will fail again" in embedding_tool_error(request).message
    assert "bad model" in embedding_tool_error(request).message
    other = embedding_tool_error(EmbeddingError("the ONNX model file is unreadable"))
    assert "the ONNX model file is unreadable" in other.message
    assert "ego doctor" in other.message


# ---------------------------------------------------------------------------------------------------
# A missing key names the configuration that exists: api_key_env (never a nonexistent `api_key` setting)

NONEXISTENT_SETTING = re.compile(r"\bapi_key\b(?!_env)")


def test_a_missing_key_points_at_the_default_variable_and_api_key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError) as missing:
        BUILTIN_EMBEDDERS["openai"](EmbedderSettings())
    message = str(missing.value)
    assert "set the environment variable OPENAI_API_KEY" in message
    assert "the api_key_env option of [plugins.memory]" in message
    assert not NONEXISTENT_SETTING.search(message), message
    assert mask_secrets(message) == message  # the hint stays readable through the secret masking
    assert (missing.value.kind, missing.value.key_env) == ("auth", ("OPENAI_API_KEY",))


def test_a_missing_key_names_the_configured_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("MY_GEMINI_KEY", raising=False)
    settings = embedder_settings(MemoryConfig(embedder="gemini", api_key_env="MY_GEMINI_KEY"), env={})
    assert settings.api_key is None
    with pytest.raises(ProviderError) as missing:
        BUILTIN_EMBEDDERS["gemini"](settings)
    message = str(missing.value)
    assert "MY_GEMINI_KEY (named by [plugins.memory] api_key_env) is not set" in message
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in message
    assert not NONEXISTENT_SETTING.search(message), message
    assert missing.value.key_env == ("MY_GEMINI_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def test_the_configured_variable_supplies_the_key() -> None:
    settings = embedder_settings(MemoryConfig(embedder="openai", api_key_env="MY_KEY"), env={"MY_KEY": KEY})
    assert settings.api_key == KEY
    assert KEY not in repr(settings)
