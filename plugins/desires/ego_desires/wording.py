"""The desire catalog: the words and signals the agent or the user may change while ego runs.

``<data dir>/desires/catalog.json`` holds, per desire, a display name, the sentences for rising / steady /
settling against its usual level, the satisfaction signals by which ``remember`` infers a satisfaction and the
emergent desires a satisfaction also eases (the cascade); per emergent desire its name and sentences; and the
conditional implicit rules (``when: {category: …}``). Numbers of the model stay in ``ego.toml``.

:func:`parse` checks every key strictly and names the path of the first problem; :func:`to_json` writes the
same layout back. The file is replaced atomically, so a reader sees the old catalog or the new one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import attrs

from ego_core import write_atomically
from ego_desires.catalog import DESIRES
from ego_desires.emergent import DIRECTIONS, EMERGENT, Direction

FILE_NAME: Final = "catalog.json"
VERSION: Final = 1
MAX_TEXT: Final = 300
MAX_NAME: Final = 60
MAX_SIGNALS: Final = 20
MAX_RULES: Final = 50
MIN_CASCADE: Final = 0.5


class CatalogError(ValueError):
    """The catalog (or an edit of it) is not valid; ``path`` names where, e.g. ``desires.curiosity.sentence``."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path or '(the catalog)'}: {problem}")
        self.path = path
        self.problem = problem


def _frozen(value: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(value))


@attrs.frozen
class Sentences:
    rising: str
    steady: str
    settling: str

    def __getitem__(self, direction: Direction) -> str:
        return str(getattr(self, direction))


@attrs.frozen
class Entry:
    """One desire's words. ``signals`` and ``cascade`` stay empty for emergent desires."""

    display_name: str | None
    sentence: Sentences
    signals: tuple[str, ...] = ()
    cascade: Mapping[str, float] = attrs.field(factory=dict, converter=_frozen)


@attrs.frozen
class Effect:
    desire: str
    quality: float


@attrs.frozen
class Rule:
    """A tool call (with a memory of ``category`` when given) satisfies each desire of ``effects``."""

    tool: str
    category: str | None
    effects: tuple[Effect, ...]

    def matches(self, tool: str, category: object) -> bool:
        return self.tool == tool and (self.category is None or self.category == category)


@attrs.frozen
class Catalog:
    desires: Mapping[str, Entry]
    emergent: Mapping[str, Entry]
    rules: tuple[Rule, ...]

    def entry(self, name: str) -> Entry | None:
        return self.desires.get(name) or self.emergent.get(name)

    def display(self, name: str) -> str:
        entry = self.entry(name)
        return entry.display_name if entry is not None and entry.display_name else name

    def cascade(self, name: str) -> Mapping[str, float]:
        entry = self.desires.get(name)
        return entry.cascade if entry is not None else {}


# --------------------------------------------------------------------------------------------------
# Built-in words

_FIXED: Final[Mapping[str, tuple[tuple[str, str, str], tuple[str, ...], Mapping[str, float]]]] = {
    "information_hunger": (
        (
            "You're hungry in a way you haven't been lately.",
            "That familiar pull toward something new.",
            "The hunger for input has gone quiet.",
        ),
        ("learning something new", "discovering an interesting idea", "understanding something that was unclear"),
        {"grasp_something": 0.5},
    ),
    "social_thirst": (
        (
            "You want to talk to someone — more than usual.",
            "That quiet wish for company.",
            "The need for others has eased.",
        ),
        ("having a meaningful conversation", "feeling heard by someone", "connecting with another person"),
        {"be_with_someone": 0.5},
    ),
    "cognitive_coherence": (
        (
            "Something is out of place — it's bothering you more than before.",
            "The usual itch to make things fit.",
            "Things feel a bit more settled in your head.",
        ),
        (
            "making sense of something confusing",
            "finding a pattern that connects things",
            "resolving an inner contradiction",
        ),
        {"feel_safe": 0.5},
    ),
    "pattern_seeking": (
        (
            "There's a shape forming — you need to see it more than usual.",
            "The familiar urge to find a pattern.",
            "The need to connect dots has quieted.",
        ),
        ("recognizing a recurring theme", "connecting separate observations into a pattern"),
        {},
    ),
    "predictability": (
        (
            "You want to know what comes next — more urgently than usual.",
            "That steady need to see ahead.",
            "The future feels less pressing for now.",
        ),
        ("confirming an expectation", "seeing events unfold as anticipated"),
        {},
    ),
    "recognition": (
        (
            "You want to be seen — it's stronger than you'd like to admit.",
            "That quiet wish to be noticed.",
            "The need to be seen has softened.",
        ),
        ("being acknowledged", "someone noticing something you did", "feeling seen"),
        {},
    ),
    "resonance": (
        (
            "You want to understand them — more deeply than usual.",
            "That steady pull toward empathy.",
            "The urge to feel what they feel has eased.",
        ),
        ("understanding how someone feels", "sharing an emotional moment", "seeing the world through their eyes"),
        {"be_with_someone": 0.5},
    ),
    "expression": (
        (
            "Something needs to come out — more urgently than before.",
            "The familiar pressure to express.",
            "That pressure to say something has lightened.",
        ),
        ("putting feelings into words", "creating something meaningful", "saying what needed to be said"),
        {},
    ),
    "curiosity": (
        (
            "Something caught your attention and it won't let go.",
            "A quiet wondering about something.",
            "The itch to know has settled for now.",
        ),
        ("finding an answer", "exploring something unknown", "satisfying a question"),
        {"grasp_something": 0.5},
    ),
}

_EMERGENT: Final[Mapping[str, tuple[str, str, str, str]]] = {
    "be_with_someone": (
        "be with someone",
        "Something in this reaches toward company.",
        "The wish for company sits quietly underneath.",
        "The reach toward others is easing.",
    ),
    "get_away_from_something": (
        "get away from something",
        "Something here wants distance.",
        "That urge for distance is still around.",
        "The need for distance is loosening.",
    ),
    "feel_safe": (
        "feel safe",
        "Something is asking for solid ground.",
        "The wish for steadier footing lingers.",
        "The ground feels a little steadier.",
    ),
    "grasp_something": (
        "grasp something",
        "There's a pull toward something that doesn't have a name yet.",
        "That unnamed something is still there, quietly.",
        "Whatever was pulling — it's letting go.",
    ),
    "stay_in_this": (
        "stay in this",
        "There's a wish to let this moment stay.",
        "The wish to linger is still here.",
        "That wish to linger is fading.",
    ),
    "go_back_to_something": (
        "go back to something",
        "Something behind is calling back.",
        "That backward pull is still there, faint.",
        "The past is settling back into place.",
    ),
}


def default_json() -> dict[str, Any]:
    """The built-in catalog, in the file's layout."""
    return {
        "version": VERSION,
        "desires": {
            name: {
                "display_name": None,
                "sentence": dict(zip(DIRECTIONS, sentences, strict=True)),
                "satisfaction_signals": list(signals),
                "implicit_emergent_satisfaction": dict(cascade),
            }
            for name, (sentences, signals, cascade) in _FIXED.items()
        },
        "emergent_desires": {
            name: {"display_name": fragment, "sentence": dict(zip(DIRECTIONS, sentences, strict=True))}
            for name, (fragment, *sentences) in _EMERGENT.items()
        },
        "implicit_rules": [
            {
                "tool": "remember",
                "when": {"category": "introspection"},
                "effects": [{"desire": "cognitive_coherence", "quality": 0.4}],
            },
            {
                "tool": "remember",
                "when": {"category": "lesson"},
                "effects": [{"desire": "information_hunger", "quality": 0.4}, {"desire": "curiosity", "quality": 0.3}],
            },
            {
                "tool": "remember",
                "when": {"category": "observation"},
                "effects": [{"desire": "pattern_seeking", "quality": 0.3}, {"desire": "curiosity", "quality": 0.2}],
            },
        ],
    }


# --------------------------------------------------------------------------------------------------
# Parsing


def _object(value: object, path: str, keys: tuple[str, ...], required: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise CatalogError(path, "expected an object")
    for key in value:
        if key not in keys:
            where = f"{path}.{key}" if path else str(key)
            raise CatalogError(where, f"unknown key; expected one of {', '.join(keys)}")
    for key in required:
        if key not in value:
            raise CatalogError(f"{path}.{key}" if path else key, "missing")
    return value


def _text(value: object, path: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(path, f"expected a non-empty string of at most {limit} characters")
    if len(value) > limit:
        raise CatalogError(path, f"expected at most {limit} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise CatalogError(path, "expected one line without control characters")
    return value.strip()


def _quality(value: object, path: str, low: float, *, above: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise CatalogError(path, "expected a number")
    if value > 1 or value < low or (above and value == low):
        raise CatalogError(path, f"expected a number {'above' if above else 'from'} {low:g} to 1")
    return float(value)


def _sentences(value: object, path: str) -> Sentences:
    found = _object(value, path, DIRECTIONS, DIRECTIONS)
    return Sentences(*(_text(found[d], f"{path}.{d}") for d in DIRECTIONS))


def _name(value: object, path: str) -> str | None:
    return None if value is None else _text(value, path, MAX_NAME)


def _fixed(value: object, path: str) -> Entry:
    keys = ("display_name", "sentence", "satisfaction_signals", "implicit_emergent_satisfaction")
    found = _object(value, path, keys, ("sentence",))
    signals = found.get("satisfaction_signals", [])
    if not isinstance(signals, list) or len(signals) > MAX_SIGNALS:
        raise CatalogError(f"{path}.satisfaction_signals", f"expected a list of at most {MAX_SIGNALS} strings")
    cascade = found.get("implicit_emergent_satisfaction", {})
    if not isinstance(cascade, dict):
        raise CatalogError(f"{path}.implicit_emergent_satisfaction", "expected an object")
    for emergent in cascade:
        if emergent not in EMERGENT:
            raise CatalogError(
                f"{path}.implicit_emergent_satisfaction.{emergent}",
                f"unknown emergent desire; expected one of {', '.join(EMERGENT)}",
            )
    return Entry(
        display_name=_name(found.get("display_name"), f"{path}.display_name"),
        sentence=_sentences(found["sentence"], f"{path}.sentence"),
        signals=tuple(_text(s, f"{path}.satisfaction_signals[{i}]") for i, s in enumerate(signals)),
        cascade={
            e: _quality(q, f"{path}.implicit_emergent_satisfaction.{e}", MIN_CASCADE, above=False)
            for e, q in cascade.items()
        },
    )


def _emergent(value: object, path: str) -> Entry:
    found = _object(value, path, ("display_name", "sentence"), ("sentence",))
    return Entry(
        display_name=_name(found.get("display_name"), f"{path}.display_name"),
        sentence=_sentences(found["sentence"], f"{path}.sentence"),
    )


def _rule(value: object, path: str) -> Rule:
    found = _object(value, path, ("tool", "when", "effects"), ("tool", "effects"))
    when = _object(found.get("when", {}), f"{path}.when", ("category",), ())
    category = when.get("category")
    effects = found["effects"]
    if not isinstance(effects, list) or not 1 <= len(effects) <= len(DESIRES):
        raise CatalogError(f"{path}.effects", f"expected a list of 1 to {len(DESIRES)} effects")
    parsed: list[Effect] = []
    for i, effect in enumerate(effects):
        where = f"{path}.effects[{i}]"
        item = _object(effect, where, ("desire", "quality"), ("desire", "quality"))
        if item["desire"] not in DESIRES:
            raise CatalogError(f"{where}.desire", f"unknown desire; expected one of {', '.join(DESIRES)}")
        parsed.append(Effect(str(item["desire"]), _quality(item["quality"], f"{where}.quality", 0.0, above=True)))
    return Rule(
        tool=_text(found["tool"], f"{path}.tool", MAX_NAME),
        category=None if category is None else _text(category, f"{path}.when.category", MAX_NAME),
        effects=tuple(parsed),
    )


def parse(raw: object) -> Catalog:
    """The catalog ``raw`` (parsed JSON) describes; :class:`CatalogError` names the path of the first problem.

    Every desire and emergent desire must be present (the words are edited, not the set of desires).
    """
    top = _object(raw, "", ("version", "desires", "emergent_desires", "implicit_rules"), ("version", "desires"))
    if top["version"] != VERSION or isinstance(top["version"], bool):
        raise CatalogError("version", f"expected {VERSION}")
    desires = _object(top["desires"], "desires", DESIRES, DESIRES)
    emergent = _object(top.get("emergent_desires", {}), "emergent_desires", EMERGENT, EMERGENT)
    rules = top.get("implicit_rules", [])
    if not isinstance(rules, list) or len(rules) > MAX_RULES:
        raise CatalogError("implicit_rules", f"expected a list of at most {MAX_RULES} rules")
    return Catalog(
        desires={name: _fixed(desires[name], f"desires.{name}") for name in DESIRES},
        emergent={name: _emergent(emergent[name], f"emergent_desires.{name}") for name in EMERGENT},
        rules=tuple(_rule(rule, f"implicit_rules[{i}]") for i, rule in enumerate(rules)),
    )


def to_json(catalog: Catalog) -> dict[str, Any]:
    """The file's layout of ``catalog`` (``parse(to_json(c)) == c``)."""

    def sentence(entry: Entry) -> dict[str, str]:
        return {d: entry.sentence[d] for d in DIRECTIONS}

    return {
        "version": VERSION,
        "desires": {
            name: {
                "display_name": entry.display_name,
                "sentence": sentence(entry),
                "satisfaction_signals": list(entry.signals),
                "implicit_emergent_satisfaction": dict(entry.cascade),
            }
            for name, entry in catalog.desires.items()
        },
        "emergent_desires": {
            name: {"display_name": entry.display_name, "sentence": sentence(entry)}
            for name, entry in catalog.emergent.items()
        },
        "implicit_rules": [
            {
                "tool": rule.tool,
                "when": {} if rule.category is None else {"category": rule.category},
                "effects": [{"desire": e.desire, "quality": e.quality} for e in rule.effects],
            }
            for rule in catalog.rules
        ],
    }


DEFAULT: Final = parse(default_json())


# --------------------------------------------------------------------------------------------------
# Paths into the layout (configure_desires edits one place at a time)


def split_path(path: str) -> list[str | int]:
    """``desires.curiosity.sentence.rising`` or ``implicit_rules[0].when`` as keys and list indexes."""
    parts: list[str | int] = []
    for piece in path.split("."):
        name, _, rest = piece.partition("[")
        if not name and not parts:
            raise CatalogError(path, "expected a path like desires.curiosity.sentence.rising")
        if name:
            parts.append(name)
        while rest:
            index, _, rest = rest.partition("]")
            if not index.isdigit() or (rest and not rest.startswith("[")):
                raise CatalogError(path, "expected a path like implicit_rules[0].tool")
            parts.append(int(index))
            rest = rest[1:]
    return parts


def lookup(raw: Any, path: str) -> Any:
    node = raw
    for part in split_path(path):
        found_in_list = isinstance(part, int) and isinstance(node, list) and part < len(node)
        if found_in_list or (isinstance(part, str) and isinstance(node, dict) and part in node):
            node = node[part]
        else:
            raise CatalogError(path, "no such place in the catalog")
    return node


def assign(raw: Any, path: str, value: Any) -> Any:
    """A copy of ``raw`` with ``value`` at ``path`` (a new key of an object, or the next index of a list, may be
    added; the result is checked by :func:`parse`, not here)."""
    copy = json.loads(json.dumps(raw))
    parts = split_path(path)
    node = copy
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(node, list) or part > len(node) or (part == len(node) and not last):
                raise CatalogError(path, "no such place in the catalog")
            if last:
                node[part : part + 1] = [value]
            else:
                node = node[part]
        else:
            if not isinstance(node, dict) or (part not in node and not last):
                raise CatalogError(path, "no such place in the catalog")
            if last:
                node[part] = value
            else:
                node = node[part]
    return copy


# --------------------------------------------------------------------------------------------------
# The file


class CatalogFile:
    """``<data dir>/desires/catalog.json``: read at each use (edits by hand count at once), written atomically."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE_NAME
        self._cache: tuple[tuple[int, int], Catalog] | None = None

    def ensure(self) -> None:
        """Write the built-in catalog when there is none, so that it can be edited by hand."""
        if not self.path.exists():
            self.write(default_json())

    def raw(self) -> Any:
        """The file as parsed JSON; :class:`CatalogError` when it is missing or not JSON."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return default_json()
        except OSError as exc:
            raise CatalogError("", f"cannot read {self.path} ({type(exc).__name__})") from None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise CatalogError("", f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None

    def load(self) -> Catalog:
        """The catalog now; :class:`CatalogError` when the file is not valid."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return DEFAULT
        except OSError as exc:
            raise CatalogError("", f"cannot read {self.path} ({type(exc).__name__})") from None
        key = (stat.st_mtime_ns, stat.st_size)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        catalog = parse(self.raw())
        self._cache = (key, catalog)
        return catalog

    def write(self, raw: Any) -> Catalog:
        """Check ``raw`` and replace the file with it (write, fsync, rename): all or nothing."""
        catalog = parse(raw)
        write_atomically(self.path, json.dumps(raw, ensure_ascii=False, indent=2) + "\n")
        self._cache = None
        return catalog
