"""No text is embedded twice in one operation, and repeated queries come from the cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ego_core import MEMORY_STORE, MemoryService
from ego_memory.embedding import CachedEmbedder
from ego_memory.service import Memories

if TYPE_CHECKING:
    from conftest import MemoryHosts


def test_remember_embeds_once_and_repeated_queries_are_free(memory_hosts: MemoryHosts) -> None:
    host, plugin = memory_hosts()
    ctx = host.context("memory")
    tools = plugin._tools()
    service = host.services.get(MEMORY_STORE, MemoryService)
    assert isinstance(service, Memories)
    embedder = service.embedder
    assert isinstance(embedder, CachedEmbedder)
    for text in ("The bus was late again.", "I planted basil on the balcony.", "A long call with my sister."):
        tools.remember({"content": text}, ctx)

    def cost(action: object) -> int:
        before = embedder.texts_embedded
        assert callable(action)
        action()
        return embedder.texts_embedded - before

    # remember: one text embedded for the store, the duplicate check, auto-linking and the sequence links
    assert cost(lambda: tools.remember({"content": "The basil on the balcony needs more sun."}, ctx)) == 1
    assert service.count() == 4

    query = {"context": "herbs growing outside", "n_results": 3}
    assert cost(lambda: tools.recall(query, ctx)) == 1
    assert cost(lambda: tools.recall(query, ctx)) == 0
    assert cost(lambda: tools.search_memories(query, ctx)) == 0
    # a query that is a stored memory's text is embedded once in the query role (an asymmetric model embeds a
    # query and a document differently: the cache keeps them apart), then comes from the cache
    stored_text = {"context": "A long call with my sister.", "n_results": 3}
    assert cost(lambda: tools.recall(stored_text, ctx)) == 1
    assert cost(lambda: tools.recall(stored_text, ctx)) == 0
    # the service other plugins use shares the cache
    assert cost(lambda: service.nearest("The basil on the balcony needs more sun.", 2)) == 0
    assert cost(lambda: service.embed(["herbs growing outside", "herbs growing outside"], role="query")) == 0
    assert cost(lambda: service.embed(["two new words", "two new words"])) == 1
