"""Patterns for secrets that must never reach a log line, a file or another agent.

Each pattern masks only the secret part and keeps enough context (``Authorization: Bearer``, ``?key=``) for
the line to stay useful when debugging.
"""

from __future__ import annotations

import re

import attrs

MASK = "[REDACTED]"


@attrs.frozen
class SecretPattern:
    kind: str
    regex: re.Pattern[str]
    keep_group: int = 0
    """Group kept in front of the mask (0: mask the whole match)."""

    def sub(self, text: str) -> str:
        if self.keep_group:
            return self.regex.sub(lambda m: m.group(self.keep_group) + MASK, text)
        return self.regex.sub(MASK, text)


_KEY_NAMES = (
    r"api[_-]?key|apikey|key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|auth|password|passwd|pwd"
    r"|secret|client[_-]?secret|signature|sig|x-amz-signature|x-goog-signature"
)

SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)"
        ),
    ),
    SecretPattern(
        "authorization header",
        re.compile(
            r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)?\s*)[^\s\"',;]+"
        ),
        keep_group=1,
    ),
    SecretPattern(
        "bearer token",
        re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{8,}=*"),
        keep_group=1,
    ),
    SecretPattern(
        "api key header",
        re.compile(r"(?i)(\b(?:x-api-key|x-goog-api-key|api-key|x-auth-token)\b[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]+"),
        keep_group=1,
    ),
    SecretPattern(
        "URL credentials",
        re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]+:)[^\s@/]+(?=@)"),
        keep_group=1,
    ),
    SecretPattern(
        "URL query secret",
        re.compile(rf"(?i)([?&;](?:{_KEY_NAMES})=)[^&#\s\"'<>]+"),
        keep_group=1,
    ),
    SecretPattern(
        "JWT",
        re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}"),
    ),
    SecretPattern(
        "API key",
        re.compile(
            r"\b(?:"
            r"sk-(?:ant-|proj-|live-|test-|svcacct-)?[A-Za-z0-9_\-]{16,}"  # OpenAI, Anthropic
            r"|AIza[0-9A-Za-z_\-]{35}"  # Google
            r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,}"  # GitHub
            r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
            r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
            r"|glpat-[A-Za-z0-9_\-]{20,}"  # GitLab
            r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
            r"|npm_[A-Za-z0-9]{36}"  # npm
            r")"
        ),
    ),
    SecretPattern(
        "header pair",
        # how HTTP clients log headers: (b'authorization', b'Basic dXNlcjpwYXNz'), ('x-api-key', '...')
        re.compile(
            r"(?i)(\(\s*b?[\"'](?:(?:proxy-)?authorization|x-api-key|x-goog-api-key|api-key|x-auth-token|cookie"
            r"|set-cookie)[\"']\s*,\s*b?([\"']))(?!\[REDACTED)(?:(?!\2).)+"
        ),
        keep_group=1,
    ),
    SecretPattern(
        "secret assignment",
        # a name with a secret word anywhere in it (DB_PASSWORD_PROD, AWS_SECRET_ACCESS_KEY, SECRET_KEY) or
        # ending in a key segment (GEMINI_KEY, signing-key), then = or :
        re.compile(
            r"(?i)(\b(?:(?:[a-z0-9]+[_-])*(?:password|passwd|pwd|secret|api[_-]?key|apikey|access[_-]?token"
            r"|auth[_-]?token|refresh[_-]?token|private[_-]?key|token|credentials?)(?:[_-][a-z0-9]+)*"
            r"|(?:[a-z0-9]+[_-])+key)\b[\"']?\s*(?:=|:)\s*[\"']?)"
            # a quoted value is masked up to its closing quote (pass phrases have spaces)
            r"(?!\[REDACTED)(?:(?<=\")[^\"\n]{3,}(?=\")|(?<=')[^'\n]{3,}(?=')|[^\s\"',;&]{3,})"
        ),
        keep_group=1,
    ),
)


def mask_secrets(text: str) -> str:
    """Mask every secret in ``text`` that the patterns above recognise."""
    for pattern in SECRET_PATTERNS:
        text = pattern.sub(text)
    return text


def secret_kinds(text: str) -> list[str]:
    """The kinds of secret found in ``text`` (never the secret itself)."""
    return [pattern.kind for pattern in SECRET_PATTERNS if pattern.regex.search(text)]
