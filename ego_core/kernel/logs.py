"""Logging: every record, whatever its origin, passes through the redaction pipeline.

- A log-record factory redacts the message, arguments and exception text of every record when it is
  created, so even handlers installed by third-party libraries only ever see redacted text.
- Our handlers write JSON lines to ``<log dir>/ego-YYYY-MM-DD.jsonl`` and short text lines to stderr; their
  formatters pass the final line through the pipeline once more.
- Nothing is ever written to stdout (it carries the MCP protocol) and nothing is sent anywhere.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import threading
import traceback
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ego_core.kernel.redaction import RedactionPipeline, default_pipeline
from ego_core.kernel.storage import private_directory

EGO_FIELDS = "ego"
"""Structured fields go in ``extra={"ego": {...}}``; the JSON formatter writes them at the top level."""

_state_lock = threading.Lock()


class _Active:
    pipeline: RedactionPipeline = default_pipeline()


_base_factory = logging.getLogRecordFactory()
_installed_handlers: list[logging.Handler] = []


def active_pipeline() -> RedactionPipeline:
    return _Active.pipeline


def _redacting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
    record = _base_factory(*args, **kwargs)
    pipeline = _Active.pipeline
    try:
        message = record.getMessage()
    except Exception:
        message = str(record.msg)
    record.msg = pipeline(message)
    record.args = None
    if record.exc_info and record.exc_info[0] is not None:
        record.exc_text = pipeline("".join(traceback.format_exception(*record.exc_info)).rstrip())
    if record.stack_info:
        record.stack_info = pipeline(record.stack_info)
    return record


def install_pipeline(pipeline: RedactionPipeline) -> None:
    """Make ``pipeline`` the one every log record passes through (process-wide)."""
    with _state_lock:
        _Active.pipeline = pipeline
        if logging.getLogRecordFactory() is not _redacting_factory:
            logging.setLogRecordFactory(_redacting_factory)


def _report_handler_error(handler: logging.Handler) -> None:
    """Replaces ``logging.Handler.handleError``, which prints the raw traceback of the exception being
    handled (unredacted) to stderr: say only which handler failed and how."""
    if not logging.raiseExceptions:
        return
    failure = sys.exc_info()[1]
    try:
        sys.stderr.write(f"ego: log handler {type(handler).__name__} failed: {type(failure).__name__}\n")
    except Exception:  # stderr itself may be what failed
        return


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, FILE_ONLY, False) and bool(super().filter(record))

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        _report_handler_error(self)


class DailyJsonlHandler(logging.Handler):
    """Appends one JSON object per line to ``ego-YYYY-MM-DD.jsonl`` (UTC date), safe for several processes.

    Each record is one ``write`` on a file opened with ``O_APPEND``, so lines from concurrent processes never
    interleave; no rotation by renaming, so there is nothing to race on.
    """

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        self._date = ""
        self._fd: int | None = None

    def _fd_for(self, date: str) -> int:
        if self._fd is None or date != self._date:
            if self._fd is not None:
                os.close(self._fd)
            private_directory(self.directory, tighten=False)  # it may be one the user named
            path = self.directory / f"ego-{date}.jsonl"
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._date = date
        return self._fd

    def check(self) -> str | None:
        """Why records cannot be written here (``None`` when they can): opens today's file."""
        try:
            with self.lock or threading.Lock():
                self._fd_for(datetime.now(UTC).strftime("%Y-%m-%d"))
        except OSError as exc:
            return f"cannot write logs to {self.directory} ({exc.strerror or exc})"
        return None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + "\n"
            date = datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%d")
            with self.lock or threading.Lock():
                os.write(self._fd_for(date), line.encode("utf-8"))
        except Exception:
            self.handleError(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        _report_handler_error(self)

    def close(self) -> None:
        with self.lock or threading.Lock():
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
        super().close()


class JsonFormatter(logging.Formatter):
    """One JSON object per record. The values are redacted, not the serialised line: masking a JSON line
    could eat the backslash of an escape and break the JSON (and a withheld line would not be JSON)."""

    def format(self, record: logging.LogRecord) -> str:
        pipeline = _Active.pipeline
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": pipeline(record.getMessage()),
            "pid": record.process,
        }
        fields = getattr(record, EGO_FIELDS, None)
        if isinstance(fields, Mapping):
            entry.update(_redact_json(pipeline, json.loads(json.dumps(dict(fields), default=str))))
        if record.exc_text:
            entry["exc"] = pipeline(record.exc_text)
        elif record.exc_info and record.exc_info[0] is not None:
            entry["exc"] = pipeline(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False, default=str, allow_nan=False)


def _redact_json(pipeline: RedactionPipeline, value: Any) -> Any:
    """Every string of a JSON value, keys included, through the pipeline; NaN and infinities as strings, so
    each line stays strict JSON."""
    if isinstance(value, str):
        return pipeline(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {pipeline(str(k)): _redact_json(pipeline, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(pipeline, v) for v in value]
    return value


TEXT_VALUE_LIMIT = 300
"""A structured field's value is cut to this many characters on a stderr line (the JSON log has it whole)."""
WHOLE_ON_STDERR = frozenset({"reason"})
"""Fields shown whole on stderr: a failure's reason is what the reader needs (it is bounded where it is made)."""
FILE_ONLY = "ego_file_only"
"""``extra={FILE_ONLY: True}``: the record goes to the JSON log only (a traceback whose one-line summary is
another record on stderr)."""


def _text_value(value: Any, limit: int = TEXT_VALUE_LIMIT) -> str:
    """A field value for a ``key=value`` pair: bare when it is one word, else JSON (quoted and escaped)."""
    if isinstance(value, str):
        text = value
        if text and not any(c.isspace() or c in "\"'=\\" for c in text):
            return text if len(text) <= limit else text[: limit - 1] + "…"
        if len(text) > limit:
            text = text[: limit - 1] + "…"
        return json.dumps(text, ensure_ascii=False)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TextFormatter(logging.Formatter):
    """``ego LEVEL logger: message``; a structured event adds its fields as ``key=value`` pairs, e.g.
    ``ego WARNING ego.host: plugin_failure plugin=x stage=call hook=on_wake_up reason="raised ..."``."""

    def __init__(self, *, tracebacks: bool = False) -> None:
        super().__init__("ego %(levelname)s %(name)s: %(message)s")
        self.tracebacks = tracebacks

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        line = super().formatMessage(record)
        fields = getattr(record, EGO_FIELDS, None)
        if not isinstance(fields, Mapping):
            return line
        pipeline = _Active.pipeline
        values = _redact_json(pipeline, json.loads(json.dumps(dict(fields), default=str)))
        pairs = [
            f"{key}={_text_value(value, 10_000 if key in WHOLE_ON_STDERR else TEXT_VALUE_LIMIT)}"
            for key, value in values.items()
            if value is not None and not (key == "event" and value == record.getMessage())
        ]
        return " ".join([line, *pairs])

    def format(self, record: logging.LogRecord) -> str:
        if self.tracebacks:
            return _Active.pipeline(super().format(record))
        # One line per record on stderr; the traceback goes to the JSON log file only.
        record.message = record.getMessage()
        line = self.formatMessage(record)
        if record.exc_info and record.exc_info[0] is not None:
            detail = str(record.exc_info[1]).strip().splitlines()
            summary = record.exc_info[0].__name__ + (f": {detail[0][:300]}" if detail else "")
            line += f" ({summary}; traceback in the log file)"
        elif record.exc_text:
            line += " (traceback in the log file)"
        return _Active.pipeline(line)


CHATTY_LOGGERS = {"mcp.server.streamable_http": logging.WARNING}
"""Third-party loggers whose INFO records say nothing useful (one "Terminating session: None" per stateless
HTTP request): kept at WARNING unless the log level is DEBUG."""


def configure_logging(log_dir: Path | None, level: str = "INFO", *, stderr_level: str = "WARNING") -> None:
    """Install our handlers on the root logger (replacing ones we installed before)."""
    root = logging.getLogger()
    for handler in _installed_handlers:
        root.removeHandler(handler)
        handler.close()
    _installed_handlers.clear()

    stderr = _StderrHandler(sys.stderr)
    stderr.setLevel(stderr_level.upper())
    stderr.setFormatter(TextFormatter(tracebacks=level.upper() == "DEBUG" or log_dir is None))
    _installed_handlers.append(stderr)
    if log_dir is not None:
        jsonl = DailyJsonlHandler(log_dir)
        jsonl.setLevel(level.upper())
        jsonl.setFormatter(JsonFormatter())
        _installed_handlers.append(jsonl)
    for handler in _installed_handlers:
        root.addHandler(handler)
    root.setLevel(min(logging.getLevelName(level.upper()), logging.getLevelName(stderr_level.upper())))
    for name, quiet_level in CHATTY_LOGGERS.items():
        logging.getLogger(name).setLevel(logging.NOTSET if level.upper() == "DEBUG" else quiet_level)
    logging.captureWarnings(True)
    if logging.getLogRecordFactory() is not _redacting_factory:
        install_pipeline(_Active.pipeline)


def log_file_problem() -> str | None:
    """Why the JSON log cannot be written (``None`` when it can, or when there is no log file)."""
    for handler in _installed_handlers:
        if isinstance(handler, DailyJsonlHandler):
            return handler.check()
    return None


def installed_handlers() -> tuple[logging.Handler, ...]:
    """The handlers :func:`configure_logging` installed (stderr first, then the JSON file)."""
    return tuple(_installed_handlers)


def reset_logging(level: int = logging.WARNING) -> None:
    """Remove our handlers and go back to the default pipeline (tests, and embedding ego in another app)."""
    from ego_core.kernel.redaction import default_pipeline

    root = logging.getLogger()
    for handler in _installed_handlers:
        root.removeHandler(handler)
        handler.close()
    _installed_handlers.clear()
    root.setLevel(level)
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET)
    logging.captureWarnings(False)
    install_pipeline(default_pipeline())


def log_event(logger: logging.Logger, event: str, level: int = logging.INFO, **fields: Any) -> None:
    """Write a structured record: ``{"event": event, **fields}`` in the JSON log."""
    logger.log(level, event, extra={EGO_FIELDS: {"event": event, **fields}})
