"""The self_model plugin's part of ``ego import --from ego-mcp``: ``self_model.json`` (the self-model fields, the
growth log, the questions) and ``relationships/models.json`` (the people) of an ego-mcp 1.x data directory, as
this plugin's export records (``ego_self_model.portable``). docs/importing.md says what maps to what."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ego_core import (
    IMPORT_SOURCE,
    ImportFormat,
    ImportFormatError,
    ImportOptions,
    read_json,
    source_moment,
    stable_id,
)
from ego_self_model.config import SelfModelConfig

PLUGIN = "self_model"
QUESTION = re.compile(r"^q_[0-9a-f]{12}$")


def _texts(values: Iterable[Any], config: SelfModelConfig, limit: int | None = None) -> list[str]:
    """Non-empty strings, folded, cut to the configured length and count."""
    found = [" ".join(str(v).split())[: limit or config.max_text_chars] for v in values]
    return list(dict.fromkeys(v for v in found if v))[: config.max_list_items]


def _ranked(value: Any) -> list[str]:
    """The keys of a weight map, strongest first (a list is taken as it is)."""
    if isinstance(value, Mapping):
        weights = {str(k): _weight(v) for k, v in value.items()}
        return sorted(weights, key=lambda k: -weights[k])
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def _weight(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _unit(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return max(0.0, min(1.0, float(value)))


def question_id_of(ident: str) -> str:
    return ident if QUESTION.match(ident) else stable_id("q_", "ego-mcp", ident)


def self_records(data: Mapping[str, Any], options: ImportOptions, config: SelfModelConfig) -> list[dict[str, Any]]:
    tz = options.tz
    updated = source_moment(data.get("last_updated"), tz, datetime.now(UTC))
    records: list[dict[str, Any]] = []
    fields = {
        "preferences": _texts(_ranked(data.get("preferences")), config),
        "values": _texts(_ranked(data.get("discovered_values")), config),
        "goals": _texts(data.get("current_goals") or [], config),
        "identity": _texts(data.get("identity_narratives") or [], config),
    }
    for field, value in fields.items():
        if value:
            records.append({"type": "self", "field": field, "value": value, "updated": updated.isoformat()})
    skills = data.get("skill_confidence")
    if isinstance(skills, Mapping) and skills:
        value_map = {" ".join(str(k).split())[: config.max_name_chars]: _unit(v, 0.5) for k, v in skills.items()}
        records.append(
            {"type": "self", "field": "skill_confidence", "value": value_map, "updated": updated.isoformat()}
        )
    for entry in data.get("growth_log") or []:
        text = entry if isinstance(entry, str) else None
        at = updated
        if isinstance(entry, Mapping):
            text = next(
                (str(entry[k]) for k in ("entry", "text", "change", "description", "note") if entry.get(k)), None
            )
            at = source_moment(entry.get("timestamp") or entry.get("at") or entry.get("date"), tz, updated)
        if text and text.strip():
            records.append({"type": "growth", "at": at.isoformat(), "text": _texts([text], config)[0]})
    open_ids = {str(i) for i in data.get("unresolved_questions") or []}
    for item in data.get("question_log") or []:
        if not isinstance(item, Mapping) or not isinstance(item.get("question"), str) or not item["question"].strip():
            continue
        created = source_moment(item.get("created_at"), tz, updated)
        resolved = bool(item.get("resolved")) or (bool(open_ids) and str(item.get("id")) not in open_ids)
        importance = item.get("importance", 3)
        person = item.get("person_id")
        records.append(
            {
                "type": "question",
                "id": question_id_of(str(item.get("id") or item["question"])),
                "text": _texts([item["question"]], config)[0],
                "importance": max(1, min(5, int(importance))) if isinstance(importance, int | float) else 3,
                "created": created.isoformat(),
                "surfaced": created.isoformat(),
                "resolved": updated.isoformat() if resolved else None,
                "answer": None,
                "resurfaced": 0,
                "triggered": None,
                "person": person[: config.max_name_chars] if isinstance(person, str) and person.strip() else None,
                "lineage": [question_id_of(str(q)) for q in item.get("lineage") or []],
                "last_fed": source_moment(item.get("last_fed_at"), tz, created).isoformat()
                if item.get("last_fed_at")
                else None,
                IMPORT_SOURCE: f"self_model.json: question {item.get('id')}",
            }
        )
    return records


def person_records(
    data: Mapping[str, Any], options: ImportOptions, config: SelfModelConfig, fallback: datetime
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for key, raw in data.items():
        if not isinstance(raw, Mapping):
            raise ImportFormatError("relationships/models.json", f"person {key}: expected an object")
        name = " ".join(str(raw.get("name") or key).split())[: config.max_name_chars]
        if not name or name.casefold() in seen:
            continue
        seen.add(name.casefold())
        created = source_moment(raw.get("first_interaction"), options.tz, fallback)
        aliases = [a for a in _texts(raw.get("aliases") or [], config, config.max_name_chars) if a != name]
        if str(key) != name and str(key) not in aliases:
            aliases = [*aliases, str(key)[: config.max_name_chars]][: config.max_list_items]
        style = ", ".join(_ranked(raw.get("communication_style"))[:3])[: config.max_text_chars]
        records.append(
            {
                "type": "person",
                "name": name,
                "trust": _unit(raw.get("trust_level"), 0.5),
                "preferred_topics": _texts(raw.get("preferred_topics") or [], config),
                "sensitive_topics": _texts(raw.get("sensitive_topics") or [], config),
                "aliases": aliases,
                "notes": _texts(raw.get("known_facts") or [], config),
                "communication_style": style,
                "created": created.isoformat(),
                "updated": source_moment(raw.get("last_interaction"), options.tz, created).isoformat(),
                IMPORT_SOURCE: f"relationships/models.json: {key}",
            }
        )
    return records


def read_ego_mcp(path: Path, options: ImportOptions, config: SelfModelConfig) -> dict[str, list[dict[str, Any]]]:
    if not path.is_dir():
        return {}
    records: list[dict[str, Any]] = []
    self_file = path / "self_model.json"
    if self_file.is_file():
        data = read_json(self_file, "self_model.json")
        if not isinstance(data, Mapping):
            raise ImportFormatError("self_model.json", "expected an object", 1)
        try:
            records.extend(self_records(data, options, config))
        except (TypeError, ValueError) as exc:
            raise ImportFormatError("self_model.json", str(exc)) from None
        options.progress(1)
    people = path / "relationships" / "models.json"
    if people.is_file():
        data = read_json(people, "relationships/models.json")
        if not isinstance(data, Mapping):
            raise ImportFormatError("relationships/models.json", "expected an object of people by id", 1)
        fallback = datetime.fromtimestamp(people.stat().st_mtime, UTC)
        try:
            records.extend(person_records(data, options, config, fallback))
        except (TypeError, ValueError) as exc:
            raise ImportFormatError("relationships/models.json", str(exc)) from None
        options.progress(1)
    return {PLUGIN: [{"type": "meta", "record_version": 1}, *records]} if records else {}


def ego_mcp_format(config: SelfModelConfig) -> ImportFormat:
    return ImportFormat(
        name="ego-mcp",
        description="ego-mcp self-model, questions and relationships",
        read=lambda path, options: read_ego_mcp(path, options, config),
    )
