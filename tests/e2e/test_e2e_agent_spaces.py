"""Two agents, claude and gemini, each with its own token on one real ``ego serve --http``: neither reads nor
changes the other's space through any surface (tools, resources and their templates, prompts, completion,
progress), and neither acts as the other at the shared-memory gateway; the token is read from one header only.

The tests with the built-in plugins run where they are installed (``tox -e all``); the header tests run on the
core alone as well.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import attrs
import httpx
import httpx2
import pytest
from e2e_support import raw_post, serving_gateway, serving_http, serving_http_with_plugins
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from ego_core.testing import call_error, call_ok, tool_text

if TYPE_CHECKING:
    from conftest import EgoWorld

CLAUDE = "ego_claude-spaces-token-0123456789abcdef"
GEMINI = "ego_gemini-spaces-token-fedcba9876543210"
PLUGINS = "memory,self_model,desires,shared_memory"
needs_plugins = pytest.mark.skipif(
    not all(
        importlib.util.find_spec(module)
        for module in ("ego_memory", "ego_self_model", "ego_desires", "ego_shared_memory")
    ),
    reason="needs the built-in plugins (installed in `tox -e all`)",
)

CLAUDE_PUBLIC = "Claude planted tulips with Aiko along the garden fence"
CLAUDE_PRIVATE = "Claude secretly fears the garden will be sold before spring"
CLAUDE_PRIVATE_JA = "クロードは庭が春までに売られてしまうのをひそかに恐れている"
CLAUDE_SHARED = "Claude waters the tulips on Tuesdays"
GEMINI_PUBLIC = "Gemini sorted the herbarium with Ken by the colour of the pressed leaves"
GEMINI_PUBLIC_JA = "ジェミニはケンと押し花の標本を色で並べた"
# what only claude's space holds: none of it may reach gemini, by any surface
CLAUDE_ONLY = ("tulip", "Aiko", "garden", "庭")
GEMINI_ONLY = ("herbarium", "Ken", "pressed leaves", "押し花")
INTROSPECT = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"introspect","arguments":{}}}'


@asynccontextmanager
async def agent(url: str, token: str) -> AsyncIterator[Any]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def ids_in(text: str, prefix: str) -> list[str]:
    return re.findall(rf"\b{prefix}_[0-9a-f]{{12}}\b", text)


def assert_none_of(phrases: tuple[str, ...], text: str, where: str) -> None:
    leaked = [phrase for phrase in phrases if phrase in text]
    assert not leaked, f"{where} shows {leaked}: {text[:400]}"


@attrs.frozen
class Spaces:
    """The server, the gateway and what claude and gemini put in their spaces."""

    url: str
    world: EgoWorld
    gateway: str
    gateway_tokens: dict[str, str]
    claude_memories: list[str]
    claude_private: list[str]
    claude_episode: str
    gemini_memories: list[str]
    claude_event: str


async def seed(url: str) -> dict[str, Any]:
    async with agent(url, CLAUDE) as claude:
        public = await call_ok(claude, "remember", {"content": CLAUDE_PUBLIC, "force": True})
        private = await call_ok(claude, "remember", {"content": CLAUDE_PRIVATE, "private": True, "force": True})
        private_ja = await call_ok(claude, "remember", {"content": CLAUDE_PRIVATE_JA, "private": True, "force": True})
        await call_ok(claude, "update_relationship", {"person": "Aiko", "field": "aliases", "value": "Ai"})
        await call_ok(claude, "update_self", {"field": "values", "value": "tending the garden"})
        await call_ok(claude, "satisfy_desire", {"name": "curiosity", "quality": 1.0})
        memories = ids_in(public, "mem")
        privates = ids_in(private + private_ja, "mem")
        episode = await call_ok(claude, "create_episode", {"memory_ids": memories + privates, "summary": "tulip day"})
        shared = await call_ok(
            claude,
            "shared_append",
            {"scope": "agent:claude", "kind": "todo", "dedupe_key": "todo:tulips", "content": CLAUDE_SHARED},
        )
    async with agent(url, GEMINI) as gemini:
        own = await call_ok(gemini, "remember", {"content": GEMINI_PUBLIC, "force": True})
        own_ja = await call_ok(gemini, "remember", {"content": GEMINI_PUBLIC_JA, "force": True})
        await call_ok(gemini, "update_relationship", {"person": "Ken", "field": "trust_level", "value": 0.8})
    [episode_id] = re.findall(r"\bep_[0-9a-f]{12}\b", episode)
    [event_id] = re.findall(r"\bevt_[0-9a-f]{24}\b", shared)
    return {
        "claude_memories": memories,
        "claude_private": privates,
        "claude_episode": episode_id,
        "gemini_memories": ids_in(own + own_ja, "mem"),
        "claude_event": event_id,
    }


def gateway_token(world: EgoWorld, db: str, agent_id: str) -> str:
    done = world.run("--plugins", "shared_memory", "gateway", "token", "create", agent_id, "--db", db)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def spaces(make_world: Callable[[str], EgoWorld]) -> Iterator[Spaces]:
    """One ``ego serve --http`` for claude and gemini; the shared memory is a real gateway, reached with claude's
    gateway token (one table for every agent of the server: it must act for claude only)."""
    world = make_world("spaces")
    db = f"sqlite:///{world.root / 'shared.db'}"
    tokens = {agent_id: gateway_token(world, db, agent_id) for agent_id in ("claude", "gemini")}
    with serving_gateway(world, db) as gateway:
        environment = {"EGO_SHARED_URL": gateway, "EGO_SHARED_TOKEN": tokens["claude"], "EGO_TIMEZONE": "UTC"}
        with serving_http_with_plugins(world, {"claude": CLAUDE, "gemini": GEMINI}, PLUGINS, **environment) as (
            url,
            _proc,
            _stderr,
        ):
            seeded = anyio.run(seed, url)
            yield Spaces(url=url, world=world, gateway=gateway, gateway_tokens=tokens, **seeded)


# ---------------------------------------------------------------------------------------------------------
# Tools


@needs_plugins
@pytest.mark.anyio
async def test_an_agent_token_lists_and_runs_no_owner_tool(spaces: Spaces) -> None:
    owner_tools = spaces.world.plugins_json("--plugins", PLUGINS)["owner_tools"]
    assert "revise_memory" in owner_tools  # the memory plugin's owner-tier tool, for the dashboard only
    for token in (CLAUDE, GEMINI):
        async with agent(spaces.url, token) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert {"remember", "recall", "forget", "consider_them", "introspect"} <= listed
            assert not listed & set(owner_tools)
            for name in owner_tools:
                refused = await call_error(client, name, {"memory_id": spaces.claude_memories[0], "importance": 1})
                assert refused.startswith(f"Unknown tool: {name}.")


@needs_plugins
@pytest.mark.anyio
async def test_gemini_never_reads_or_changes_claudes_memories_through_a_tool(spaces: Spaces) -> None:
    [claude_memory] = spaces.claude_memories
    async with agent(spaces.url, GEMINI) as gemini:
        seen = [
            await call_ok(gemini, "recall", {"context": "tulips garden Aiko spring 庭", "n_results": 10}),
            await call_ok(gemini, "search_memories", {"context": "tulips", "n_results": 10}),
            await call_ok(gemini, "wake_up"),
            await call_ok(gemini, "introspect"),
            await call_ok(gemini, "attune"),
            await call_ok(gemini, "consider_them", {"person": "Aiko"}),
            await call_ok(gemini, "consider_them", {"person": "Ai"}),
        ]
        for memory_id in [claude_memory, *spaces.claude_private]:
            for tool, args in (
                ("forget", {"memory_id": memory_id}),
                ("link_memories", {"source_id": memory_id, "target_id": spaces.gemini_memories[0]}),
            ):
                refused = await call_error(gemini, tool, args)
                assert refused.startswith(f"Memory not found: {memory_id}")
        episode = await call_error(gemini, "get_episode", {"episode_id": spaces.claude_episode})
        assert episode.startswith(f"Episode not found: {spaces.claude_episode}")
        assert "herbarium" in seen[0]  # gemini's own memories are there
    for text in seen:
        assert_none_of(CLAUDE_ONLY, text.replace("Aiko: you don't know", ""), "a gemini tool")
    assert "Aiko: you don't know much about them yet" in seen[5]
    async with agent(spaces.url, CLAUDE) as claude:  # nothing gemini did changed claude's space
        again = await call_ok(claude, "recall", {"context": "tulips along the garden fence", "n_results": 10})
        assert CLAUDE_PUBLIC in again  # gemini's forget did not reach it
        assert "tulip day" in await call_ok(claude, "get_episode", {"episode_id": spaces.claude_episode})
        assert_none_of(GEMINI_ONLY, again, "claude's recall")


# ---------------------------------------------------------------------------------------------------------
# Resources, prompts, completion


async def resource_text(client: Any, uri: str) -> str:
    return "".join(getattr(content, "text", "") for content in (await client.read_resource(uri)).contents)


async def completion_values(client: Any, ref: dict[str, str], argument: str, prefix: str = "") -> list[str]:
    answer = await client.complete(ref, {"name": argument, "value": prefix})
    return list(answer.completion.values)


@needs_plugins
@pytest.mark.anyio
async def test_every_resource_and_template_serves_each_agent_its_own(spaces: Spaces) -> None:
    """Every template is read from gemini's token with each value claude's completion offers for it: what names
    something only in claude's space (an episode, a person) is not found, and nothing read shows claude's text."""
    async with agent(spaces.url, CLAUDE) as claude:
        resources = [item.uri for item in (await claude.list_resources()).resources]
        templates = [item.uri_template for item in (await claude.list_resource_templates()).resource_templates]
        claude_values = {
            template: await completion_values(
                claude, {"type": "ref/resource", "uri": template}, re.findall(r"{(\w+)}", template)[0]
            )
            for template in templates
        }
        claude_today = await resource_text(claude, "ego://memories/today")
        claude_curiosity = await resource_text(claude, "ego://desires/curiosity")
    assert {"ego://memories/today", "ego://self", "ego://desires", "ego://shared/snapshot"} <= set(resources)
    assert spaces.claude_episode in claude_values["ego://episodes/{episode_id}"]
    assert {"Aiko", "Ai"} <= set(claude_values["ego://people/{person}"])
    assert "tulips" in claude_today
    assert CLAUDE_PRIVATE not in claude_today

    async with agent(spaces.url, GEMINI) as gemini:
        assert [item.uri for item in (await gemini.list_resources()).resources] == resources
        texts = {}
        for uri in resources:
            if uri == "ego://shared/snapshot":
                continue  # below: gemini has no shared-memory identity on this server
            texts[uri] = await resource_text(gemini, uri)
        not_found = []
        for template, values in claude_values.items():
            gemini_values = await completion_values(
                gemini, {"type": "ref/resource", "uri": template}, re.findall(r"{(\w+)}", template)[0]
            )
            for value in values:
                uri = template.replace(template[template.index("{") : template.index("}") + 1], value)
                if value in gemini_values:  # the same in both spaces (a desire of the catalog)
                    texts[uri] = await resource_text(gemini, uri)
                    continue
                with pytest.raises(MCPError, match="Resource not found"):
                    await resource_text(gemini, uri)
                not_found.append(uri)
            assert_none_of(CLAUDE_ONLY, " ".join(gemini_values), f"gemini's completion of {template}")
        for own in ("ego://episodes/{episode_id}", "ego://people/{person}"):
            assert any(uri.startswith(own.split("{")[0]) for uri in not_found)
    for uri, text in texts.items():
        assert_none_of((*CLAUDE_ONLY, "tending"), text, f"gemini's {uri}")
    assert "herbarium" in texts["ego://memories/today"]
    assert "Ken" in texts["ego://self"]
    gemini_curiosity = texts["ego://desires/curiosity"]
    assert claude_curiosity != gemini_curiosity  # claude satisfied it; gemini's is its own level


@needs_plugins
@pytest.mark.anyio
async def test_prompts_and_their_completion_serve_each_agent_its_own(spaces: Spaces) -> None:
    async with agent(spaces.url, GEMINI) as gemini:
        prompts = (await gemini.list_prompts()).prompts
        assert prompts
        texts = []
        for prompt in prompts:
            arguments = {argument.name: "Aiko" for argument in prompt.arguments or []}
            result = await gemini.get_prompt(prompt.name, arguments)
            texts.append("".join(getattr(message.content, "text", "") for message in result.messages))
            for argument in prompt.arguments or []:
                for prefix in ("", "A", "Ai"):
                    values = await completion_values(
                        gemini, {"type": "ref/prompt", "name": prompt.name}, argument.name, prefix
                    )
                    assert_none_of(("Aiko", "Ai"), " ".join(values), f"gemini's completion of {prompt.name}")
        ken = await completion_values(gemini, {"type": "ref/prompt", "name": "wake-up"}, "person", "K")
    assert "Ken" in ken
    for text in texts:
        assert_none_of(("tulip", "garden", "庭"), text, "a gemini prompt")
    async with agent(spaces.url, CLAUDE) as claude:
        people = await completion_values(claude, {"type": "ref/prompt", "name": "wake-up"}, "person", "")
        assert {"Aiko", "Ai"} <= set(people)
        assert "Ken" not in people


@needs_plugins
@pytest.mark.anyio
async def test_each_agent_gets_the_progress_of_its_own_call_only(spaces: Spaces) -> None:
    """claude and gemini consolidate at the same moment: each one's progress notifications speak of its own
    memories (the number the result names), none of the other's."""
    results: dict[str, str] = {}
    progress: dict[str, list[tuple[float, float | None, str | None]]] = {"claude": [], "gemini": []}

    async def consolidate(name: str, token: str) -> None:
        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress[name].append((done, total, message))

        async with agent(spaces.url, token) as client:
            result = await client.call_tool("consolidate", {}, progress_callback=on_progress)
            assert not result.is_error, tool_text(result)
            results[name] = tool_text(result)

    async with anyio.create_task_group() as group:
        group.start_soon(consolidate, "claude", CLAUDE)
        group.start_soon(consolidate, "gemini", GEMINI)
    counts = {name: re.findall(r"Replayed (\d+) event", text)[0] for name, text in results.items()}
    assert counts["claude"] != counts["gemini"]  # so the messages tell the two apart
    for name, other in (("claude", "gemini"), ("gemini", "claude")):
        assert progress[name], f"{name} got no progress"
        done, total, _message = progress[name][-1]
        assert done == total  # its own call's progress, to the end
        messages = [message or "" for _done, _total, message in progress[name]]
        # a later position may replace one not yet sent: whichever "replaying" line came is the agent's own
        assert all(f"replaying {counts[name]} event" in m for m in messages if "replaying" in m), messages
        assert not any(f"replaying {counts[other]} event" in m for m in messages), messages


# ---------------------------------------------------------------------------------------------------------
# The shared memory


@needs_plugins
@pytest.mark.anyio
async def test_one_gateway_token_on_the_server_acts_for_its_own_agent_only(spaces: Spaces) -> None:
    """The server's one gateway token is claude's: claude reads and writes the shared memory; gemini is refused,
    never reading claude's private scope nor writing as claude."""
    async with agent(spaces.url, CLAUDE) as claude:
        own = await call_ok(claude, "shared_snapshot", {"scopes": "global,agent:claude"})
        assert CLAUDE_SHARED in own
        assert CLAUDE_SHARED in await resource_text(claude, "ego://shared/snapshot")
        private = await call_error(
            claude,
            "shared_append",
            {"scope": "global", "kind": "fact", "dedupe_key": "fact:fear", "content": CLAUDE_PRIVATE},
        )
        assert private.startswith("Not shared: the text contains one of your private memories")
    async with agent(spaces.url, GEMINI) as gemini:
        snapshot = await call_error(gemini, "shared_snapshot", {})
        claude_scope = await call_error(gemini, "shared_snapshot", {"scopes": "agent:claude"})
        written = await call_error(
            gemini,
            "shared_append",
            {"scope": "global", "kind": "fact", "dedupe_key": "fact:herbarium", "content": GEMINI_PUBLIC},
        )
        with pytest.raises(MCPError, match="does not match the token"):
            await resource_text(gemini, "ego://shared/snapshot")
    for refused in (snapshot, claude_scope):
        assert refused.startswith("Not read: agent_id gemini does not match the token, which belongs to claude")
        assert CLAUDE_SHARED not in refused
    assert written.startswith("Not shared: agent_id gemini does not match the token, which belongs to claude")

    everything = httpx.get(
        f"{spaces.gateway}/v1/memory/snapshot",
        params={"scopes": "global,agent:claude", "limit_recent": 50},
        headers={"Authorization": f"Bearer {spaces.gateway_tokens['claude']}"},
        timeout=30,
    )
    assert everything.status_code == 200
    events = everything.json()["recent_events"]
    assert [(e["agent_id"], e["content_md"]) for e in events] == [("claude", CLAUDE_SHARED)]
    assert CLAUDE_PRIVATE not in everything.text


@needs_plugins
def test_at_the_gateway_a_token_is_its_own_agents_only(spaces: Spaces) -> None:
    gemini = {"Authorization": f"Bearer {spaces.gateway_tokens['gemini']}"}
    base = f"{spaces.gateway}/v1/memory"
    refusals = [
        httpx.get(f"{base}/snapshot", params={"scopes": "agent:claude"}, headers=gemini, timeout=30),
        httpx.get(f"{base}/snapshot", params={"agent_id": "claude"}, headers=gemini, timeout=30),
        httpx.get(f"{base}/events/{spaces.claude_event}", headers=gemini, timeout=30),
        httpx.post(
            f"{base}/append",
            json={
                "agent_id": "claude",
                "run_id": "run_gemini_1",
                "scope": "global",
                "kind": "fact",
                "dedupe_key": "fact:as-claude",
                "confidence": "high",
                "content_md": "written in claude's name",
            },
            headers=gemini,
            timeout=30,
        ),
    ]
    for refused in refusals:
        assert refused.status_code == 403, refused.text
        assert CLAUDE_SHARED not in refused.text
    own = httpx.get(f"{base}/snapshot", headers=gemini, timeout=30)
    found = httpx.get(f"{base}/search", params={"q": "tulips"}, headers=gemini, timeout=30)
    assert own.status_code == 200
    assert own.json()["agent_id"] == "gemini"
    assert found.status_code == 200
    for text in (own.text, found.text):
        assert CLAUDE_SHARED not in text
        assert_none_of(("secretly", "ひそかに"), text, "a gateway read")
    # the two kinds of token never stand in for each other
    assert httpx.get(f"{base}/snapshot", headers={"Authorization": f"Bearer {GEMINI}"}, timeout=30).status_code == 401
    mcp_with_gateway_token = raw_post(
        spaces.url, [f"Authorization: Bearer {spaces.gateway_tokens['gemini']}".encode()], INTROSPECT
    )
    assert mcp_with_gateway_token[0] == 401


@needs_plugins
def test_no_agents_private_text_reaches_the_log(spaces: Spaces) -> None:
    log = spaces.world.log_text()
    for text in (CLAUDE_PRIVATE, CLAUDE_PRIVATE_JA, CLAUDE, GEMINI, *spaces.gateway_tokens.values()):
        assert text not in log
    agents = {r.get("agent") for r in spaces.world.log_records() if r.get("event") == "tool_call"}
    assert agents == {"claude", "gemini"}


# ---------------------------------------------------------------------------------------------------------
# The token: one header, exactly


@pytest.fixture(scope="module")
def bare(make_world: Callable[[str], EgoWorld]) -> Iterator[tuple[str, EgoWorld]]:
    """The core alone over HTTP for claude and gemini (the header tests need no plugin)."""
    world = make_world("spaces-bare")
    with serving_http(world, {"claude": CLAUDE, "gemini": GEMINI}) as (url, _proc, _stderr):
        yield url, world


def served_as(url: str, world: EgoWorld, lines: list[bytes]) -> tuple[int, str | None]:
    """The status of an introspect call sent with these header lines, and the agent it ran as (None: it ran not)."""
    before = len([r for r in world.log_records() if r.get("event") == "tool_call"])
    status, _headers, _body = raw_post(url, lines, INTROSPECT)
    calls = [r for r in world.log_records() if r.get("event") == "tool_call"]
    assert len(calls) <= before + 1
    return status, calls[-1]["agent"] if len(calls) > before else None


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([f"Authorization: Bearer {CLAUDE}".encode()], (200, "claude")),
        ([f"Authorization: Bearer {GEMINI}".encode()], (200, "gemini")),
        ([f"Authorization: bearer {GEMINI}".encode()], (200, "gemini")),  # the scheme is case-insensitive
        ([f"Authorization: Bearer {CLAUDE}  ".encode()], (200, "claude")),  # HTTP drops blanks around a value
        ([f"Authorization: Bearer {CLAUDE.upper()}".encode()], (401, None)),
        ([f"Authorization: Bearer  {CLAUDE}".encode()], (401, None)),
        ([f"Authorization: Bearer\t{CLAUDE}".encode()], (401, None)),
        ([f"Authorization: Bearer {CLAUDE}".encode() + b"\xc2\xa0"], (401, None)),
        ([f"Authorization: Bearer {CLAUDE[:-1]}".encode()], (401, None)),
        ([f"Authorization: {CLAUDE}".encode()], (401, None)),
        ([b"Authorization: Bearer "], (401, None)),
        ([b"Authorization: Bearer"], (401, None)),
        ([b"Authorization:"], (401, None)),
        ([f"Authorization: Bearer {CLAUDE}, Bearer {GEMINI}".encode()], (401, None)),
        ([f"X-Authorization: Bearer {CLAUDE}".encode()], (401, None)),
    ],
    ids=[
        "claude",
        "gemini",
        "lower-case-scheme",
        "trailing-blanks",
        "upper-case-token",
        "two-spaces",
        "tab",
        "no-break-space",
        "token-cut-short",
        "no-scheme",
        "empty-bearer",
        "bare-scheme",
        "empty-header",
        "two-tokens-in-one-header",
        "another-header",
    ],
)
def test_the_token_is_read_from_the_authorization_header_exactly(
    bare: tuple[str, EgoWorld], lines: list[bytes], expected: tuple[int, str | None]
) -> None:
    url, world = bare
    assert served_as(url, world, lines) == expected


@pytest.mark.parametrize(
    "tokens",
    [(GEMINI, CLAUDE), (CLAUDE, GEMINI), ("wrong-token-123456", CLAUDE), (CLAUDE, CLAUDE)],
    ids=["gemini-then-claude", "claude-then-gemini", "wrong-then-claude", "claude-twice"],
)
def test_two_authorization_headers_are_refused_whichever_comes_first(
    bare: tuple[str, EgoWorld], tokens: tuple[str, str]
) -> None:
    url, world = bare
    lines = [f"Authorization: Bearer {token}".encode() for token in tokens]
    assert served_as(url, world, lines) == (400, None)
    status, headers, body = raw_post(url, lines, INTROSPECT)
    assert status == 400
    assert headers["www-authenticate"] == 'Bearer error="invalid_request"'
    assert json.loads(body)["error"] == "invalid_request"
    assert CLAUDE.encode() not in body


def test_a_token_in_the_query_string_is_not_a_token(bare: tuple[str, EgoWorld]) -> None:
    url, world = bare
    for name in ("access_token", "token", "bearer"):
        assert served_as(f"{url}?{name}={CLAUDE}", world, []) == (401, None)
    assert served_as(f"{url}?access_token={CLAUDE}", world, [f"Authorization: Bearer {GEMINI}".encode()]) == (
        200,
        "gemini",
    )


def test_a_session_id_never_chooses_the_agent(bare: tuple[str, EgoWorld]) -> None:
    """The server is stateless: claude's initialize gets no session id, and whatever session id comes along,
    each request is served as the agent its own token names."""
    url, world = bare
    initialize = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
    )
    status, headers, _body = raw_post(url, [f"Authorization: Bearer {CLAUDE}".encode()], initialize)
    assert status == 200
    assert "mcp-session-id" not in headers
    for session in ("claude-session", "0" * 32):
        with_session = f"Mcp-Session-Id: {session}".encode()
        assert served_as(url, world, [f"Authorization: Bearer {CLAUDE}".encode(), with_session]) == (200, "claude")
        assert served_as(url, world, [f"Authorization: Bearer {GEMINI}".encode(), with_session]) == (200, "gemini")
        assert served_as(url, world, [with_session]) == (401, None)
