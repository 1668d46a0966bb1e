"""OpenAI and Gemini embedders against httpx.MockTransport: requests, parsing, retries, errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import numpy as np
import pytest

from ego_core import Embedder, EmbedderSettings, EmbeddingError
from ego_memory.embedding import BUILTIN_EMBEDDERS
from ego_memory.embedding.gemini import GeminiEmbedder
from ego_memory.embedding.http import RETRY_AFTER_CAP_S, backoff_delay, parse_retry_after
from ego_memory.embedding.openai import OpenAIEmbedder

KEY = "sk-test-SECRET-key-123"
Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A MockTransport handler that replays scripted outcomes and records each request."""

    def __init__(self, *outcomes: httpx.Response | Exception | Handler) -> None:
        self.outcomes = list(outcomes)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        outcome = self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]
        if isinstance(outcome, Exception):
            raise outcome
        if isinstance(outcome, httpx.Response):
            return outcome
        return outcome(request)

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))

    def bodies(self) -> list[Any]:
        return [json.loads(request.content) for request in self.requests]


OPENAI_WIDTHS = {"text-embedding-3-small": 1536}


def fake_row(text: str, width: int) -> list[float]:
    return [float(len(text)), 1.0] + [0.0] * (width - 2)


def openai_reply(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    width = OPENAI_WIDTHS.get(body["model"], 3)
    data = [{"object": "embedding", "index": i, "embedding": fake_row(t, width)} for i, t in enumerate(body["input"])]
    return httpx.Response(200, json={"object": "list", "data": data[::-1], "model": body["model"]})


def gemini_reply(request: httpx.Request) -> httpx.Response:
    requests = json.loads(request.content)["requests"]
    embeddings = [{"values": [float(len(r["content"]["parts"][0]["text"])), 1.0]} for r in requests]
    return httpx.Response(200, json={"embeddings": embeddings})


def make_openai(recorder: Recorder, sleeps: list[float] | None = None, **settings: Any) -> OpenAIEmbedder:
    settings.setdefault("api_key", KEY)
    return OpenAIEmbedder(
        EmbedderSettings(**settings),
        client=recorder.client(),
        sleep=(sleeps if sleeps is not None else []).append,
        rng=lambda: 0.5,
    )


def make_gemini(recorder: Recorder, sleeps: list[float] | None = None, **settings: Any) -> GeminiEmbedder:
    settings.setdefault("api_key", KEY)
    return GeminiEmbedder(
        EmbedderSettings(**settings),
        client=recorder.client(),
        sleep=(sleeps if sleeps is not None else []).append,
        rng=lambda: 0.5,
    )


def expected_unit(rows: list[list[float]]) -> np.ndarray[Any, Any]:
    matrix = np.array(rows, dtype=np.float64)
    unit: np.ndarray[Any, Any] = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return unit


# --- OpenAI ----------------------------------------------------------------------------------------------


def test_openai_request_and_parsing() -> None:
    recorder = Recorder(openai_reply)
    embedder = make_openai(recorder)
    vectors = embedder.embed(["a", "bbb"])

    (request,) = recorder.requests
    assert request.method == "POST"
    assert str(request.url) == "https://api.openai.com/v1/embeddings"
    assert KEY not in str(request.url)
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == {"model": "text-embedding-3-small", "input": ["a", "bbb"]}
    assert vectors.dtype == np.float32
    assert vectors.shape == (2, 1536)
    np.testing.assert_allclose(vectors, expected_unit([fake_row("a", 1536), fake_row("bbb", 1536)]), atol=1e-6)
    assert embedder.model_id == "openai:text-embedding-3-small"
    assert isinstance(embedder, Embedder)


def test_openai_orders_by_index_not_by_position() -> None:
    data = [
        {"index": 2, "embedding": [0.0, 0.0, 1.0]},
        {"index": 0, "embedding": [1.0, 0.0, 0.0]},
        {"index": 1, "embedding": [0.0, 2.0, 0.0]},
    ]
    recorder = Recorder(httpx.Response(200, json={"data": data}))
    vectors = make_openai(recorder, model="custom-model").embed(["x", "y", "z"])
    np.testing.assert_allclose(vectors, np.eye(3), atol=1e-7)


def test_openai_base_url_model_and_dimensions() -> None:
    recorder = Recorder(httpx.Response(200, json={"data": [{"index": 0, "embedding": [3.0, 4.0]}]}))
    embedder = make_openai(
        recorder,
        base_url="http://localhost:8080/v1/",
        model="text-embedding-3-large",
        extra={"dimensions": 2},
        timeout_s=5.0,
    )
    assert embedder.dimension == 2
    assert embedder.model_id == "openai:text-embedding-3-large@2"
    np.testing.assert_allclose(embedder.embed(["q"]), [[0.6, 0.8]], atol=1e-7)
    assert str(recorder.requests[0].url) == "http://localhost:8080/v1/embeddings"
    assert recorder.requests[0].extensions["timeout"]["read"] == 5.0
    assert recorder.bodies() == [{"model": "text-embedding-3-large", "input": ["q"], "dimensions": 2}]


def test_openai_batches_by_batch_size() -> None:
    recorder = Recorder(openai_reply)
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    vectors = make_openai(recorder, batch_size=2).embed(texts)
    assert [body["input"] for body in recorder.bodies()] == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    expected = expected_unit([fake_row(t, 1536) for t in texts])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)


def test_known_dimension_needs_no_request() -> None:
    recorder = Recorder(openai_reply)
    assert make_openai(recorder).dimension == 1536
    assert make_gemini(Recorder(gemini_reply)).dimension == 768
    assert recorder.requests == []


def test_unknown_dimension_is_probed_once() -> None:
    recorder = Recorder(openai_reply)
    embedder = make_openai(recorder, model="some-compatible-model")
    assert embedder.dimension == 3
    assert embedder.dimension == 3
    assert len(recorder.requests) == 1
    assert embedder.embed([]).shape == (0, 3)
    assert len(recorder.requests) == 1


def test_dimension_mismatch_is_an_error() -> None:
    recorder = Recorder(httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0, 2.0, 3.0]}]}))
    with pytest.raises(EmbeddingError, match="returned 3-dimensional vectors, expected 1536"):
        make_openai(recorder).embed(["x"])


def test_wrong_vector_count_is_an_error() -> None:
    recorder = Recorder(httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0]}]}))
    with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts"):
        make_openai(recorder, model="m").embed(["x", "y"])


def test_malformed_body_is_an_error() -> None:
    recorder = Recorder(httpx.Response(200, json={"unexpected": True}))
    with pytest.raises(EmbeddingError, match="unexpected embeddings body"):
        make_openai(recorder, model="m").embed(["x"])


# --- Gemini ----------------------------------------------------------------------------------------------


def test_gemini_request_and_parsing() -> None:
    recorder = Recorder(gemini_reply)
    embedder = make_gemini(recorder, model="models/embedding-test")
    vectors = embedder.embed(["hi", "four"])

    (request,) = recorder.requests
    expected_url = "https://generativelanguage.googleapis.com/v1beta/models/embedding-test:batchEmbedContents"
    assert str(request.url) == expected_url
    assert KEY not in str(request.url)
    assert "key" not in request.url.params
    assert request.headers["x-goog-api-key"] == KEY
    assert "authorization" not in request.headers
    assert json.loads(request.content) == {
        "requests": [
            {
                "model": "models/embedding-test",
                "content": {"parts": [{"text": "hi"}]},
                "taskType": "RETRIEVAL_DOCUMENT",
            },
            {
                "model": "models/embedding-test",
                "content": {"parts": [{"text": "four"}]},
                "taskType": "RETRIEVAL_DOCUMENT",
            },
        ]
    }
    np.testing.assert_allclose(vectors, expected_unit([[2.0, 1.0], [4.0, 1.0]]), atol=1e-6)
    assert vectors.dtype == np.float32
    assert embedder.model_id == "gemini:embedding-test"


def test_gemini_asks_for_the_task_of_the_role() -> None:
    """Gemini's embeddings are asymmetric: a query and a stored document are embedded for their own task."""
    recorder = Recorder(gemini_reply)
    embedder = make_gemini(recorder, model="models/embedding-test")
    embedder.embed(["where?"], role="query")
    embedder.embed(["here"], role="document")
    assert [[r["taskType"] for r in body["requests"]] for body in recorder.bodies()] == [
        ["RETRIEVAL_QUERY"],
        ["RETRIEVAL_DOCUMENT"],
    ]


def test_gemini_default_model_and_batch_cap() -> None:
    recorder = Recorder(gemini_reply)
    embedder = make_gemini(recorder, model=None, batch_size=500, extra={"dimensions": 2})
    assert embedder.model_id == "gemini:text-embedding-004@2"
    vectors = embedder.embed([f"t{i}" for i in range(150)])
    assert vectors.shape == (150, 2)
    bodies = recorder.bodies()
    assert [len(body["requests"]) for body in bodies] == [100, 50]
    assert bodies[0]["requests"][0] == {
        "model": "models/text-embedding-004",
        "content": {"parts": [{"text": "t0"}]},
        "taskType": "RETRIEVAL_DOCUMENT",
        "outputDimensionality": 2,
    }
    assert str(recorder.requests[0].url).endswith("/v1beta/models/text-embedding-004:batchEmbedContents")


# --- retries ---------------------------------------------------------------------------------------------


def test_retry_on_429_honours_retry_after() -> None:
    sleeps: list[float] = []
    recorder = Recorder(
        httpx.Response(429, headers={"Retry-After": "7"}, json={"error": {"message": "slow down"}}),
        openai_reply,
    )
    vectors = make_openai(recorder, sleeps, model="m").embed(["abc"])
    assert sleeps == [7.0]
    assert len(recorder.requests) == 2
    assert recorder.bodies()[0] == recorder.bodies()[1]
    assert vectors.shape == (1, 3)


def test_retry_after_is_capped() -> None:
    sleeps: list[float] = []
    recorder = Recorder(httpx.Response(429, headers={"Retry-After": "3600"}), gemini_reply)
    make_gemini(recorder, sleeps, model="m").embed(["abc"])
    assert sleeps == [RETRY_AFTER_CAP_S]


def test_retry_on_503_with_exponential_backoff() -> None:
    sleeps: list[float] = []
    recorder = Recorder(
        httpx.Response(503, text="upstream unavailable"),
        httpx.Response(502, text="bad gateway"),
        httpx.Response(500, json={"error": {"message": "internal"}}),
        openai_reply,
    )
    make_openai(recorder, sleeps, model="m", max_retries=3).embed(["abc"])
    assert sleeps == [
        backoff_delay(0, lambda: 0.5),
        backoff_delay(1, lambda: 0.5),
        backoff_delay(2, lambda: 0.5),
    ]
    assert sleeps == [0.375, 0.75, 1.5]
    assert len(recorder.requests) == 4


def test_retry_on_408_request_timeout_status() -> None:
    sleeps: list[float] = []
    recorder = Recorder(httpx.Response(408, text="request timeout"), openai_reply)
    make_openai(recorder, sleeps, model="m").embed(["abc"])
    assert len(recorder.requests) == 2
    assert sleeps == [0.375]


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ReadTimeout("read timed out"),
        httpx.ConnectError("connection refused"),
        httpx.ConnectTimeout("slow"),
    ],
)
def test_retry_on_timeouts_and_connection_errors(failure: Exception) -> None:
    sleeps: list[float] = []
    recorder = Recorder(failure, gemini_reply)
    vectors = make_gemini(recorder, sleeps, model="m").embed(["abc"])
    assert len(recorder.requests) == 2
    assert len(sleeps) == 1
    assert vectors.shape == (1, 2)


def test_gives_up_after_max_retries() -> None:
    sleeps: list[float] = []
    recorder = Recorder(httpx.Response(503, json={"error": {"message": "overloaded"}}))
    with pytest.raises(EmbeddingError) as excinfo:
        make_openai(recorder, sleeps, model="m", max_retries=2).embed(["abc"])
    message = str(excinfo.value)
    assert "after 3 attempts" in message
    assert "HTTP 503" in message
    assert "overloaded" in message
    assert len(recorder.requests) == 3
    assert len(sleeps) == 2


def test_gives_up_after_repeated_timeouts() -> None:
    sleeps: list[float] = []
    recorder = Recorder(httpx.ReadTimeout("read timed out"))
    with pytest.raises(EmbeddingError, match=r"after 2 attempts; last error: ReadTimeout"):
        make_gemini(recorder, sleeps, model="m", max_retries=1).embed(["abc"])
    assert len(recorder.requests) == 2


def test_zero_retries_fails_immediately() -> None:
    sleeps: list[float] = []
    recorder = Recorder(httpx.Response(429))
    with pytest.raises(EmbeddingError, match="after 1 attempts"):
        make_openai(recorder, sleeps, model="m", max_retries=0).embed(["abc"])
    assert sleeps == []


# --- client errors ---------------------------------------------------------------------------------------


def test_400_surfaces_provider_message_without_key() -> None:
    sleeps: list[float] = []
    body = {"error": {"message": f"Invalid input; your key {KEY} is fine", "type": "invalid_request_error"}}
    recorder = Recorder(httpx.Response(400, json=body))
    with pytest.raises(EmbeddingError) as excinfo:
        make_openai(recorder, sleeps, model="m").embed(["abc"])
    message = str(excinfo.value)
    assert "400" in message
    assert "Invalid input" in message
    assert KEY not in message
    assert len(recorder.requests) == 1
    assert sleeps == []


def test_gemini_403_is_not_retried() -> None:
    body = {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "X"}}
    recorder = Recorder(httpx.Response(403, json=body))
    with pytest.raises(EmbeddingError, match="HTTP 403: API key not valid") as excinfo:
        make_gemini(recorder, model="m").embed(["abc"])
    assert KEY not in str(excinfo.value)
    assert len(recorder.requests) == 1


# --- keys ------------------------------------------------------------------------------------------------


def test_missing_openai_key_names_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="OPENAI_API_KEY"):
        BUILTIN_EMBEDDERS["openai"](EmbedderSettings())


def test_missing_gemini_key_names_env_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        BUILTIN_EMBEDDERS["gemini"](EmbedderSettings())


def test_key_from_environment_when_settings_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "google-env-key")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-env-key")
    gemini_recorder = Recorder(gemini_reply)
    GeminiEmbedder(EmbedderSettings(model="m"), client=gemini_recorder.client()).embed(["x"])
    assert gemini_recorder.requests[0].headers["x-goog-api-key"] == "google-env-key"
    openai_recorder = Recorder(openai_reply)
    OpenAIEmbedder(EmbedderSettings(model="m"), client=openai_recorder.client()).embed(["x"])
    assert openai_recorder.requests[0].headers["authorization"] == "Bearer openai-env-key"


def test_settings_key_wins_over_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "env-key")
    recorder = Recorder(gemini_reply)
    make_gemini(recorder, model="m").embed(["x"])
    assert recorder.requests[0].headers["x-goog-api-key"] == KEY


def test_builtin_factories_build_http_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k1")
    monkeypatch.setenv("GEMINI_API_KEY", "k2")
    openai = BUILTIN_EMBEDDERS["openai"](EmbedderSettings())
    gemini = BUILTIN_EMBEDDERS["gemini"](EmbedderSettings())
    assert isinstance(openai, OpenAIEmbedder)
    assert isinstance(gemini, GeminiEmbedder)
    assert (openai.model_id, openai.dimension) == ("openai:text-embedding-3-small", 1536)
    assert (gemini.model_id, gemini.dimension) == ("gemini:text-embedding-004", 768)
    openai.close()
    gemini.close()


def test_injected_client_is_not_closed() -> None:
    recorder = Recorder(openai_reply)
    client = recorder.client()
    with OpenAIEmbedder(EmbedderSettings(api_key=KEY, model="m"), client=client) as embedder:
        embedder.embed(["x"])
    assert not client.is_closed


# --- Retry-After parsing ---------------------------------------------------------------------------------


def test_parse_retry_after_forms() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after(httpx.Headers({"Retry-After": "12"})) == 12.0
    assert parse_retry_after(httpx.Headers({"Retry-After": "1.5"})) == 1.5
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250", "Retry-After": "9"})) == 0.25
    http_date = httpx.Headers({"Retry-After": "Wed, 01 Jan 2025 12:00:30 GMT"})
    assert parse_retry_after(http_date, now=lambda: now) == 30.0
    past = httpx.Headers({"Retry-After": "Wed, 01 Jan 2025 11:00:00 GMT"})
    assert parse_retry_after(past, now=lambda: now) == 0.0
    assert parse_retry_after(httpx.Headers({"Retry-After": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None


def test_backoff_grows_and_stays_within_jitter_bounds() -> None:
    for attempt in range(8):
        step = min(30.0, 0.5 * 2**attempt)
        assert backoff_delay(attempt, lambda: 0.0) == step / 2
        assert backoff_delay(attempt, lambda: 1.0) == step
