"""The memory tools' handlers: ``remember``, ``recall`` and ``search_memories``, over the ``memory.store`` service.

Each handler reads its arguments (:mod:`ego_memory.arguments`), asks the service
(:class:`~ego_memory.service.Memories`), and words the answer (:mod:`ego_memory.tools.render`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ego_core import (
    PRIVATE_MARK,
    Claim,
    PluginContext,
    Response,
    ScaffoldItem,
    relative_age,
    truncate,
)
from ego_memory.api import MemoryHooks
from ego_memory.arguments import recall_query, remember_draft
from ego_memory.index.blas import one_blas_thread
from ego_memory.recall.fuzzy import recall_texts
from ego_memory.recall.strength import people_of
from ego_memory.service import Memories, Vetoed
from ego_memory.surfacing.echoes import resurface
from ego_memory.text.thought import INTROSPECTION_SCAFFOLD
from ego_memory.text.wording import count_of
from ego_memory.tools.render import extra_lines, matches_header, render_emotion, score_words, shown_scores

REMEMBER_SCAFFOLD = "Do any of these connections surprise you? Is there a pattern forming?"
UNLINKED_SCAFFOLD = "Is this the beginning of something new? What might it connect to later?"
RECALL_SCAFFOLD = "How do these memories connect to the current moment?"
PRIVATE_SAVED_NOTE = "Kept private: it stays internal (never synced to workspace files or logs)."
SHOWN_LINKS = 3
PRIVATE_RELATED = "(private) "
"""Marks a private memory on remember's ``Most related:`` lines: ``- [2h ago] (private) … (similarity: 0.82)``."""
RECALL_ROOM = 2400
"""Columns (a CJK character counting 2) the contents recall shows share: one hit may take them all."""
RECALL_LEAST = 160
"""Columns a content recall shows always has, however many hits share the room."""
SEARCH_WIDTH = 160
"""Columns of a memory's text on a search_memories line (a compact line per memory, for finding ids)."""


class MemoryTools:
    """The handlers of remember, recall and search_memories (``handler(args, ctx)``), over one service."""

    def __init__(self, service: Memories) -> None:
        self.service = service

    @one_blas_thread
    def remember(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        service = self.service
        draft, notes = remember_draft(args, ctx, service.config.max_content_chars)
        kept = service.remember(draft)
        if isinstance(kept, Vetoed):
            response = kept.response
            return response if isinstance(response, Response) else Response(data=str(response))
        memory, linked = kept.memory, kept.linked
        lines = [f"Saved (id: {memory.id}). Linked to {count_of(len(linked), 'existing memory', 'existing memories')}."]
        if linked:
            lines.append("Most related:")
            now = ctx.now()
            for other, similarity in linked[:SHOWN_LINKS]:
                age = relative_age(other.timestamp, now)
                # A private memory is marked, like recall's `private: true`: the agent decides what it says aloud.
                private = PRIVATE_RELATED if other.is_private else ""
                lines.append(f"- [{age}] {private}{truncate(other.content, 70)} (similarity: {similarity:.2f})")
        else:
            lines.append("No similar memories found yet.")
        shown = [other.id for other, _ in linked[:SHOWN_LINKS]]
        lines.extend(
            resurface(
                ctx,
                service.store,
                service.strengths,
                service.similarity_profile,
                memory,
                near=kept.near,
                shown=shown,
            )
        )
        lines.extend(notes)
        if memory.is_private:
            lines.append(PRIVATE_SAVED_NOTE)
        claims: list[Claim] = []
        lines.extend(extra_lines(MemoryHooks(ctx).on_remember(memory=memory, together=draft.together), claims))
        if memory.category == "introspection":  # asks the monologue for its open end
            return Response(data="\n".join(lines), scaffold=INTROSPECTION_SCAFFOLD, claims=tuple(claims))
        scaffold = (REMEMBER_SCAFFOLD if linked else UNLINKED_SCAFFOLD,)
        return Response(data="\n".join(lines), scaffold=scaffold, claims=tuple(claims))

    def recall(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        query, filters = recall_query(args, ctx)
        hits, matches, lines = self.service.search(query, filters, involuntary=True)
        if not hits:
            return Response(data="No related memories found.", scaffold=self._recall_scaffold(0))
        now = ctx.now()
        texts = recall_texts(
            [hit.memory for hit in hits],
            self.service.strengths,
            people_of(ctx),
            present=self.service.engine.present(now),
            now=now,
            tz=ctx.settings.tz,
            room=RECALL_ROOM,
            least=RECALL_LEAST,
        )
        out = [matches_header(hits, matches)]
        claims = [Claim(kind="recalled", memory_ids=tuple(hit.memory.id for hit in hits))]
        claims.extend(
            Claim(kind="quote", memory_id=hit.memory.id, words=texts[hit.memory.id], whole=hit.memory.content)
            for hit in hits
        )
        scores = shown_scores(hits)
        for number, (hit, score) in enumerate(zip(hits, scores, strict=True), start=1):
            memory = hit.memory
            trace = memory.emotional_trace
            feeling = render_emotion(trace)
            if trace.secondary:
                feeling += f", undercurrent {', '.join(trace.secondary)}"
            meta = [
                feeling,
                f"importance {memory.importance}",
                score_words(score, hit),
                f"private: {'true' if memory.is_private else 'false'}",
            ]
            out.append(f"{number}. [{relative_age(memory.timestamp, now)}] {texts[memory.id]}")
            out.append("   " + " · ".join(meta))
        out.extend(lines)
        return Response(data="\n".join(out), scaffold=self._recall_scaffold(len(hits)), claims=tuple(claims))

    @staticmethod
    def _recall_scaffold(shown: int) -> tuple[ScaffoldItem, ...]:
        """Only the question: the header already says how many of how many, the filters are in the tool's schema,
        and the ids (for forget or link_memories) are in search_memories' lines."""
        return (RECALL_SCAFFOLD,) if shown else ("Try other words, or fewer filters.",)

    def search_memories(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        query, filters = recall_query(args, ctx, "search_memories")
        hits, matches, lines = self.service.search(query, filters)
        if not hits:
            return Response(data="No related memories found.")
        now = ctx.now()
        out = [matches_header(hits, matches)]
        recalled = Claim(kind="recalled", memory_ids=tuple(hit.memory.id for hit in hits))
        for hit, score in zip(hits, shown_scores(hits), strict=True):
            m = hit.memory
            out.append(
                f"{m.id} | {relative_age(m.timestamp, now)} | {m.emotional_trace.primary} | {m.category} | "
                f"{score_words(score, hit, label='')} | private: {'true' if m.is_private else 'false'} | "
                f"{truncate(m.content, SEARCH_WIDTH)}"
            )
        out.extend(lines)
        return Response(data="\n".join(out), claims=(recalled,))


def remember_log_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """What of a remember call may be logged: nothing free-text when ``private`` is true."""
    view = dict(args)
    if args.get("private"):
        for key in ("content", "secondary", "tags", "body_state", "anticipated_at", "with"):
            if key in view:
                view[key] = PRIVATE_MARK
        view["content_length"] = len(str(args.get("content", "")))
    return view
