"""The ``hello`` plugin: notes the agent leaves for its future self.

- tool ``leave_note(text)`` (backend) keeps a short note in ``<data dir>/hello/notes.json``;
- ``on_wake_up`` shows the newest note ("A note you left yourself (2h ago): ...");
- ``scaffold_for("wake_up")`` offers ``leave_note`` as an option;
- a redactor keeps private notes (text starting with ``private:``) out of every log line;
- the notebook is offered to other plugins as the ``hello.notes`` service, and the body sense
  (``interoception.body``) is used when some plugin provides it.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from ego_core import (
    BODY_SENSE,
    PRIVATE_MARK,
    BodySense,
    Check,
    InvalidArgumentError,
    PluginBase,
    PluginContext,
    Redactor,
    Response,
    ScaffoldLine,
    Section,
    Tool,
    ToolError,
    hookimpl,
    relative_age,
    truncate,
)
from ego_hello.notes import NoteBook, NoteStoreError, body, fold, is_private

NOTES_SERVICE = "hello.notes"
MAX_TEXT = 500


def _max_notes_in_range(_instance: object, _attribute: object, value: int) -> None:
    if not 1 <= value <= 1000:
        raise ValueError("max_notes must be from 1 to 1000")


@attrs.frozen
class HelloConfig:
    """``[plugins.hello]`` in ego.toml."""

    max_notes: int = attrs.field(default=20, validator=_max_notes_in_range)
    """How many notes are kept; the oldest are dropped first."""


LEAVE_NOTE_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_TEXT,
            "description": "Start with private: to keep it out of logs.",
        },
    },
    "required": ["text"],
    "additionalProperties": False,
}

# A private note at the start of a quoted string (as in a JSON or repr() dump of the arguments), up to the
# closing quote, honouring backslash escapes; or a text that is itself a private note.
_QUOTED_PRIVATE = re.compile(r"""(?is)(?P<q>["'])(?=\s*private:)(?:\\.|(?!(?P=q)).)*""")
_LEADING_PRIVATE = re.compile(r"(?is)\A\s*private:.*")


def _notebook(ctx: PluginContext) -> NoteBook:
    config: HelloConfig = ctx.config
    return NoteBook(ctx.data_dir / "notes.json", max_notes=config.max_notes)


def _log_view(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """What the core's ``tool_call`` log record shows of the arguments: sizes, never the text."""
    text = str(args.get("text", ""))
    return {"text_chars": len(text), "private": is_private(text)}


class HelloPlugin(PluginBase):
    """Registered by the entry point ``hello = "ego_hello:HelloPlugin"``; the host instantiates it."""

    config_class = HelloConfig
    config_env: Mapping[str, str] = {"EGO_HELLO_MAX_NOTES": "max_notes"}

    def __init__(self) -> None:
        self._book: NoteBook | None = None
        self._private_lock = threading.Lock()
        self._private_forms: tuple[str, ...] = ()

    # -- lifecycle ---------------------------------------------------------------------------------

    @hookimpl
    def on_startup(self, ctx: PluginContext) -> None:
        book = _notebook(ctx)
        # A damaged file raises here: the host marks the plugin failed (``ego plugins`` says why) and
        # withdraws its tool, instead of letting a later write replace the user's notes.
        notes = book.notes()
        self._learn_private((n.text for n in notes if n.is_private), reset=True)
        self._book = book
        ctx.provide(NOTES_SERVICE, book)

    @hookimpl
    def on_shutdown(self) -> None:
        self._book = None

    # -- the tool ----------------------------------------------------------------------------------

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(
            Tool(
                name="leave_note",
                description="Leave a short note for your future self; it greets you at the next wake_up.",
                input_schema=LEAVE_NOTE_SCHEMA,
                handler=self.leave_note,
                tier="backend",
                log_view=_log_view,
            )
        )

    def leave_note(self, args: Mapping[str, Any], ctx: PluginContext) -> Response:
        """Sync handler: the core runs it in a worker thread, so it may block on the file lock. ``ctx`` is this
        plugin's context (config, clock, services), as the hooks get it."""
        book = self._book
        if book is None:  # opened in on_startup; the core serves no tool of a plugin that failed to start
            raise RuntimeError("the hello plugin is not started")
        raw = str(args["text"])
        text = fold(raw)
        if not body(text):
            raise InvalidArgumentError("text", f"1 to {MAX_TEXT} characters with words in them (also after private:)")
        private = is_private(text)
        if private:
            self._learn_private({raw, text})  # before anything is written, so no later log line can show it
        sense = ctx.services.get(BODY_SENSE, BodySense)
        phase = sense.time_phase() if sense is not None else None
        try:
            _note, kept = book.add(text, now=ctx.now(), time_phase=phase)
        except NoteStoreError as exc:
            raise ToolError(
                f"Nothing was saved: your notes file is damaged ({exc}). "
                "Your companion can inspect it with `ego doctor`."
            ) from None
        lines = [f"Note kept; it greets you at the next wake_up ({kept} of at most {book.max_notes} kept)."]
        if private:
            lines.append("It is private: it stays out of logs.")
        return Response("\n".join(lines), scaffold=("What do you hope your future self makes of it?",))

    # -- composed responses ------------------------------------------------------------------------

    @hookimpl
    def on_wake_up(self, ctx: PluginContext) -> Section | None:
        if self._book is None:
            return None
        note = self._book.latest()
        if note is None:
            return None
        when = relative_age(note.created, ctx.now())
        if note.time_phase:
            when += ", " + note.time_phase.replace("_", " ")
        kind = "A private note" if note.is_private else "A note"
        # no slot and the default order: after the built-in sections
        return Section(key="hello", text=f"{kind} you left yourself ({when}): {truncate(body(note.text), 200)}")

    @hookimpl
    def scaffold_for(self, tool: str) -> Sequence[ScaffoldLine] | None:
        if tool != "wake_up":
            return None
        line = "Is there something your next self should find here? leave_note keeps it."
        return [ScaffoldLine(line, needs={"leave_note"})]

    @hookimpl
    def doctor_checks(self, ctx: PluginContext) -> list[Check]:
        book = _notebook(ctx)
        try:
            notes = book.notes()
        except NoteStoreError as exc:
            return [Check("notes", False, f"{exc}; move {book.path} aside to start a new notebook")]
        return [Check("notes", True, f"{len(notes)} kept (at most {book.max_notes}) in {book.path}")]

    # -- redaction ---------------------------------------------------------------------------------

    @hookimpl
    def register_redactors(self, register: Callable[[Redactor], None], ctx: PluginContext) -> None:
        # Registration comes before on_startup: learn the stored private notes now, so that log lines
        # written while other plugins start are covered too. A damaged file is on_startup's to report.
        with contextlib.suppress(NoteStoreError):
            self._learn_private((n.text for n in _notebook(ctx).notes() if n.is_private), reset=True)
        register(Redactor(name="hello.private_notes", redact=self.redact, order=200))

    def _learn_private(self, texts: Iterable[str], *, reset: bool = False) -> None:
        """Remember private notes in every form a log line may quote them in (raw, JSON, repr).

        ``reset`` (at startup) starts again from the notes in the file, so the set stays bounded.
        """
        with self._private_lock:
            forms: set[str] = set() if reset else set(self._private_forms)
            for text in texts:
                quoted = (json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1], repr(text)[1:-1])
                forms.update(form for form in (text, *quoted) if form)
            self._private_forms = tuple(sorted(forms, key=len, reverse=True))

    def redact(self, text: str) -> str:
        """Mask private notes in ``text``: the known ones wherever they appear, and any quoted or whole
        text that starts with ``private:`` (a note that arrives in a log line before it is stored)."""
        for form in self._private_forms:
            if form in text:
                text = text.replace(form, PRIVATE_MARK)
        text = _QUOTED_PRIVATE.sub(lambda m: m.group("q") + PRIVATE_MARK, text)
        return _LEADING_PRIVATE.sub(PRIVATE_MARK, text)
