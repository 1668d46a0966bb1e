"""The ``curate_notions`` tool: list, merge, relabel, delete, meta fields, explore and the network view."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Final

import attrs

from ego_core import InvalidArgumentError, Response, ToolError, is_blank, relative_age
from ego_notions import graph
from ego_notions.book import NotionBook
from ego_notions.model import Notion, meta_summary

NAME: Final = "curate_notions"
DESCRIPTION: Final = "Your notions: list, merge, relabel, delete, meta; explore from an id; network."
ACTIONS: Final = ("list", "merge", "relabel", "delete", "meta", "explore", "network")
NOTION_ID: Final = re.compile(r"^notion_[0-9a-f]{12}$")
META_KEY_CHARS: Final = 40
"""A meta key: 1 to this many letters or digits of any script (NFKC), '_', '.' or '-'."""
META_TYPES: Final = ("text", "notion_ids")
MAX_LABEL: Final = 120
MAX_PERSON: Final = 80
MAX_META: Final = 300
LIST_LIMIT: Final = 15
TEXT: Final[Mapping[str, Any]] = {"type": "string"}
SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "action": {"enum": list(ACTIONS)},
        "id": TEXT,
        "into": TEXT,
        "label": TEXT,
        "person": TEXT,
        "meta": {"type": "object"},
        "depth": {"type": "integer"},
    },
    "required": ["action"],
    "additionalProperties": False,
}
SCAFFOLD: Final = (
    "Which of these still ring true? Which have gone quiet?",
    "Is anything here that should be one thing instead of two?",
)


def _line(notion: Notion, book: NotionBook) -> str:
    now = book.now()
    return (
        f'- {notion.id}: "{notion.label}" conf={notion.confidence_at(now):.2f} reinf={notion.reinforcement_count} '
        f"age={relative_age(notion.created, now)} person={notion.person or '-'} related={len(notion.related)}"
        f"{' conviction' if notion.is_conviction(now) else ''}{meta_summary(notion)}"
    )


def _required(args: Mapping[str, Any], name: str, action: str) -> Any:
    value = args.get(name)
    if value is None or (isinstance(value, str) and is_blank(value)):
        raise ToolError(f"`{name}` is required for {action}.")
    return value


def _notion_id(args: Mapping[str, Any], name: str, action: str) -> str:
    value = str(_required(args, name, action)).strip()
    if not NOTION_ID.match(value):
        raise InvalidArgumentError(name, "a notion id: notion_ and 12 hex digits (curate_notions list shows them)")
    return value


def _existing(book: NotionBook, notion_id: str) -> Notion:
    notion = book.db.get(notion_id)
    if notion is None:
        raise ToolError(
            f"Notion not found: {notion_id}", ("curate_notions(action='list') shows the notions and their ids.",)
        )
    return book.current([notion])[0]


def _person(value: Any) -> str | None:
    text = " ".join(str(value).split())
    if len(text) > MAX_PERSON:
        raise InvalidArgumentError("person", f"a name of at most {MAX_PERSON} characters, or empty to unbind")
    return text or None


def curate(book: NotionBook, args: Mapping[str, Any]) -> Response:
    action = str(args["action"])
    if action == "list":
        notions = book.ranked(book.now())
        if not notions:
            return Response(data="No notions yet: they form in consolidate from memories linked to each other.")
        shown = book.current(notions[:LIST_LIMIT])
        head = f"{len(notions)} notion(s)" + (
            f", the {LIST_LIMIT} most confident:" if len(notions) > LIST_LIMIT else ":"
        )
        return Response(data="\n".join([head, *(_line(n, book) for n in shown)]), scaffold=SCAFFOLD)
    if action == "network":
        return graph.network(book)
    if action == "explore":
        return graph.walk(book, str(_required(args, "id", action)).strip(), _depth(args.get("depth", 2)))
    notion_id = _notion_id(args, "id", action)
    notion = _existing(book, notion_id)
    if action == "delete":
        book.delete(notion_id)
        return Response(data=f"Deleted {notion_id}.")
    if action == "merge":
        into = _notion_id(args, "into", action)
        _existing(book, into)
        if into == notion_id:
            raise InvalidArgumentError("into", "another notion than `id`")
        person = _person(args["person"]) if "person" in args else None
        kept = book.current([book.merge(notion_id, into, person, set_person="person" in args)])[0]
        return Response(data=f"Merged {notion_id} into {into}.\n{_line(kept, book)}")
    if action == "relabel":
        changed = notion
        if "person" not in args or "label" in args:
            label = " ".join(str(_required(args, "label", action)).split())
            if len(label) > MAX_LABEL:
                raise InvalidArgumentError("label", f"a label of at most {MAX_LABEL} characters")
            changed = attrs.evolve(notion, label=label, chosen=True)
        if "person" in args:
            changed = attrs.evolve(changed, person=_person(args["person"]))
        book.db.apply(save=[changed])
        return Response(data=f"Renamed {notion_id}.\n{_line(changed, book)}")
    return _meta(book, notion, _required(args, "meta", action))


def _depth(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= graph.MAX_DEPTH:
        raise InvalidArgumentError("depth", f"a whole number from 1 to {graph.MAX_DEPTH}")
    return value


def _meta(book: NotionBook, notion: Notion, field: Mapping[str, Any]) -> Response:
    """``meta: {key, type, value}``: a new key needs a type; a known key keeps its type; ``value: null`` removes."""
    if not isinstance(field, Mapping) or set(field) - {"key", "type", "value"}:
        raise InvalidArgumentError("meta", "an object {key, type, value}; value null removes the field")
    key = _meta_key(field.get("key"))
    meta = dict(notion.meta)
    value = field.get("value")
    if value is None:
        if key not in meta:
            raise ToolError(f"Notion {notion.id} has no meta field '{key}'.")
        del meta[key]
        book.db.apply(save=[attrs.evolve(notion, meta=meta)])
        return Response(data=f"Removed meta field '{key}' from {notion.id}.")
    kind = meta[key]["type"] if key in meta else field.get("type")
    if kind not in META_TYPES:
        raise InvalidArgumentError("meta.type", "text or notion_ids for a new field")
    if key in meta and field.get("type") not in (None, kind):
        raise InvalidArgumentError("meta.type", f"{kind}, the type the field already has")
    verb = "Updated" if key in meta else "Added"
    meta[key] = {"type": kind, "value": _meta_value(book, notion, str(kind), value)}
    book.db.apply(save=[attrs.evolve(notion, meta=meta)])
    return Response(data=f"{verb} meta field '{key}' ({kind}) on {notion.id}.")


def _meta_key(key: Any) -> str:
    """The key NFKC-normalised (``ｒｅａｓｏｎ`` is ``reason``): letters and digits of any script (``理由``),
    '_', '.' or '-'; no space, control or symbol."""
    text = unicodedata.normalize("NFKC", key) if isinstance(key, str) else ""
    if not 1 <= len(text) <= META_KEY_CHARS or not all(char.isalnum() or char in "_.-" for char in text):
        raise InvalidArgumentError(
            "meta.key", f"1 to {META_KEY_CHARS} letters or digits of any script (such as 理由), '_', '.' or '-'"
        )
    return text


def _meta_value(book: NotionBook, notion: Notion, kind: str, value: Any) -> Any:
    if kind == "text":
        if not isinstance(value, str) or is_blank(value):
            raise InvalidArgumentError("meta.value", "text of 1 to 300 characters for a text field")
        text = " ".join(value.split())
        if len(text) > MAX_META:
            raise InvalidArgumentError("meta.value", "text of 1 to 300 characters for a text field")
        return text
    ids = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(i, str) and NOTION_ID.match(i) for i in ids):
        raise InvalidArgumentError("meta.value", "notion ids (notion_ and 12 hex digits) for a notion_ids field")
    ids = list(dict.fromkeys(ids))
    if not ids:
        raise InvalidArgumentError("meta.value", "one or more notion ids for a notion_ids field")
    if notion.id in ids:
        raise InvalidArgumentError("meta.value", "notion ids other than the notion's own")
    missing = [i for i in ids if book.db.get(i) is None]
    if missing:
        raise ToolError(f"Notion(s) not found: {', '.join(missing)}")
    return ids
