"""The redaction pipeline: secrets are masked in any text, rules run in explicit order, failures fail closed."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ego_core import Redactor, hookimpl
from ego_core.kernel.logs import JsonFormatter, TextFormatter, configure_logging, install_pipeline
from ego_core.kernel.redaction import WITHHELD, RedactionPipeline, default_pipeline, secret_redactor
from ego_core.kernel.secrets import MASK, SECRET_PATTERNS, mask_secrets, secret_kinds

if TYPE_CHECKING:
    from conftest import JsonLog
    from ego_core.testing import HostFactory

GOOGLE_URL = "https://example.test/v1?key=AIzaSyA-1234567890abcdefghijklmnopqrstu"
GOOGLE_KEY = "AIzaSyA-1234567890abcdefghijklmnopqrstu"
BEARER = "sk-live-4f3c2b1a0987654321fedcba"

# --------------------------------------------------------------------------------------------------
# Each kind of secret: a strategy producing (text containing the secret, the secret itself).

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def chars(alphabet: str, low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=low, max_size=high)


@st.composite
def private_key(draw: st.DrawFn) -> tuple[str, str]:
    label = draw(st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]))
    body = "\n".join(draw(st.lists(chars(B64, 16, 64), min_size=1, max_size=4)))
    end = draw(st.booleans())  # a truncated log line may lose the END marker
    text = f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n" + (f"-----END {label}PRIVATE KEY-----" if end else "")
    return text, body


@st.composite
def authorization_header(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(["Authorization", "authorization", "Proxy-Authorization", "AUTHORIZATION"]))
    scheme = draw(st.sampled_from(["Bearer ", "Basic ", "Token ", "", "bearer "]))
    sep = draw(st.sampled_from([": ", ":", "=", '": "', "': '"]))
    secret = draw(chars(B64 + "._~-", 10, 60))
    return f"{name}{sep}{scheme}{secret}", secret


@st.composite
def bearer_token(draw: st.DrawFn) -> tuple[str, str]:
    word = draw(st.sampled_from(["Bearer", "bearer", "BEARER"]))
    secret = draw(chars(B64URL + ".~+/", 10, 60))
    return f"{word} {secret}", secret


@st.composite
def api_key_header(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(["x-api-key", "X-Api-Key", "x-goog-api-key", "api-key", "X-Auth-Token"]))
    sep = draw(st.sampled_from([": ", "=", '": "']))
    secret = draw(chars(ALNUM + "-_.", 10, 50))
    return f"{name}{sep}{secret}", secret


@st.composite
def url_credentials(draw: st.DrawFn) -> tuple[str, str]:
    scheme = draw(st.sampled_from(["https", "postgresql", "redis", "amqp+ssl"]))
    user = draw(chars(ALNUM, 1, 12))
    secret = draw(chars(ALNUM + "-._~!$*%", 8, 30))
    return f"{scheme}://{user}:{secret}@db.example.test:5432/ego", secret


@st.composite
def url_query_secret(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(
        st.sampled_from(["key", "api_key", "apiKey", "token", "access_token", "password", "sig", "X-Amz-Signature"])
    )
    first = draw(st.booleans())
    secret = draw(chars(ALNUM + "-._~%", 8, 50))
    query = f"?{name}={secret}" if first else f"?alt=json&{name}={secret}"
    return f"https://api.example.test/v1/models{query}", secret


@st.composite
def jwt(draw: st.DrawFn) -> tuple[str, str]:
    token = "eyJ" + draw(chars(B64URL, 8, 40)) + ".eyJ" + draw(chars(B64URL, 8, 80)) + "." + draw(chars(B64URL, 8, 60))
    return token, token


API_KEY_FORMS = [
    r"sk-(ant-|proj-|live-|test-|svcacct-)?[A-Za-z0-9_\-]{16,40}",
    r"AIza[0-9A-Za-z_\-]{35}",
    r"gh[pousr]_[A-Za-z0-9]{30,40}",
    r"github_pat_[A-Za-z0-9_]{40,60}",
    r"xox[abposr]-[A-Za-z0-9-]{10,30}",
    r"(AKIA|ASIA)[0-9A-Z]{16}",
    r"[sr]k_(live|test)_[A-Za-z0-9]{16,30}",
    r"glpat-[A-Za-z0-9_\-]{20,30}",
    r"hf_[A-Za-z0-9]{30,40}",
    r"npm_[A-Za-z0-9]{36}",
]


@st.composite
def api_key(draw: st.DrawFn) -> tuple[str, str]:
    secret = draw(st.one_of([st.from_regex(form, fullmatch=True) for form in API_KEY_FORMS]))
    return secret, secret


@st.composite
def secret_assignment(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(
        st.sampled_from(
            [
                *("password", "PASSWORD", "db_password", "passwd", "pwd", "client_secret", "api_key", "apikey"),
                *("token", "access-token", "refresh_token", "private_key", "MY_APP_SECRET", "auth_token"),
                *("SECRET_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD_PROD", "GEMINI_KEY", "signing-key"),
                *("credentials", "GOOGLE_APPLICATION_CREDENTIALS_JSON"),
            ]
        )
    )
    sep = draw(st.sampled_from(["=", ": ", " = ", '": "', "='"]))
    quote = sep[-1] if sep[-1] in "\"'" else ""
    # a quoted value may be a pass phrase with spaces; it ends at its closing quote
    secret = draw(chars(ALNUM + "!#$%()*+./:<>?@^_`{|}~-" + (" " if quote else ""), 8, 40))
    assume(not secret.startswith("[REDACTED") and secret.strip() == secret)
    return f"{name}{sep}{secret}{quote}", secret


@st.composite
def header_pair(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(st.sampled_from(["authorization", "Authorization", "x-api-key", "cookie", "proxy-authorization"]))
    quote = draw(st.sampled_from(["'", '"']))
    prefix = draw(st.sampled_from(["b", ""]))
    scheme = draw(st.sampled_from(["Basic ", "Digest ", ""]))
    secret = draw(chars(ALNUM + "+/=-_.;", 8, 40))
    return f"({prefix}{quote}{name}{quote}, {prefix}{quote}{scheme}{secret}{quote})", secret


SECRET_STRATEGIES: dict[str, st.SearchStrategy[tuple[str, str]]] = {
    "header pair": header_pair(),
    "private key": private_key(),
    "authorization header": authorization_header(),
    "bearer token": bearer_token(),
    "api key header": api_key_header(),
    "URL credentials": url_credentials(),
    "URL query secret": url_query_secret(),
    "JWT": jwt(),
    "API key": api_key(),
    "secret assignment": secret_assignment(),
}

# Surrounding text: anything, joined to the secret by a separator a log line would really have.
surrounding = st.text(max_size=40)
separators = st.sampled_from([" ", "\n", "\t", " (", ": ", ", ", " '", ' "', " <", "[", " | "])
closers = st.sampled_from(["", " ", "\n", ")", "'", '"', ",", ";", ">", "]", " |"])


def test_every_secret_kind_has_a_property_test() -> None:
    assert {p.kind for p in SECRET_PATTERNS} == set(SECRET_STRATEGIES)


@pytest.mark.parametrize("kind", sorted(SECRET_STRATEGIES))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_no_secret_gets_through_whatever_surrounds_it(kind: str, data: st.DataObject) -> None:
    text, secret = data.draw(SECRET_STRATEGIES[kind], label="secret")
    before, sep, close, after = (data.draw(s) for s in (surrounding, separators, closers, surrounding))
    assume(secret not in before and secret not in after and text.count(secret) == 1)
    line = f"{before}{sep}{text}{close}{after}"
    pipeline = default_pipeline()
    out = pipeline(line)
    assert secret not in out
    assert MASK in out
    assert secret_kinds(text), "the pattern list no longer recognises this kind"
    assert pipeline(out) == out, "masking is idempotent"


@pytest.mark.parametrize(
    ("line", "masked"),
    [
        (GOOGLE_URL, "https://example.test/v1?key=[REDACTED]"),
        (f"Authorization: Bearer {BEARER}", "Authorization: Bearer [REDACTED]"),
        ("postgresql://ego:hunter22@db:5432/ego", "postgresql://ego:[REDACTED]@db:5432/ego"),
        ('{"password": "correct horse battery"}', '{"password": "[REDACTED]"}'),
        ("DB_PASSWORD=hunter22;retries=3", "DB_PASSWORD=[REDACTED];retries=3"),
        ("SECRET_KEY=django-insecure-0123 DEBUG=1", "SECRET_KEY=[REDACTED] DEBUG=1"),
        ("(b'authorization', b'Basic dXNlcjpwYXNz')", "(b'authorization', b'[REDACTED]')"),
    ],
)
def test_masking_keeps_the_context_that_makes_a_line_useful(line: str, masked: str) -> None:
    assert mask_secrets(line) == masked


def test_ordinary_text_is_left_alone() -> None:
    text = (
        "recall(context='the walk by the river', n_results=3) -> 2 memories; keyboard and monkey business; "
        "the key: be kind; (b'content-type', b'application/json')"
    )
    assert mask_secrets(text) == text


# --------------------------------------------------------------------------------------------------
# Order and fail-closed behaviour


def test_redactors_run_in_ascending_order_then_by_name() -> None:
    seen: list[str] = []

    def rule(name: str) -> Callable[[str], str]:
        def redact(text: str) -> str:
            seen.append(name)
            return f"{text}>{name}"

        return redact

    pipeline = RedactionPipeline(
        [Redactor("late", rule("late"), order=900), Redactor("b-early", rule("b-early"), order=10)]
    )
    pipeline.extend([Redactor("a-early", rule("a-early"), order=10), secret_redactor()])
    assert [r.name for r in pipeline.redactors] == ["a-early", "b-early", "ego.secrets", "late"]
    assert pipeline("x") == "x>a-early>b-early>late"
    assert seen == ["a-early", "b-early", "late"]


def test_a_later_rule_sees_the_output_of_the_secret_rule() -> None:
    outputs: list[str] = []
    pipeline = RedactionPipeline([secret_redactor(), Redactor("spy", lambda t: outputs.append(t) or t, order=200)])
    pipeline(GOOGLE_URL)
    assert outputs == ["https://example.test/v1?key=[REDACTED]"]


def test_redactors_registered_by_plugins_run_in_their_order(make_host: HostFactory) -> None:
    class Private:
        @hookimpl
        def register_redactors(self, register: Callable[[Redactor], None]) -> None:
            register(Redactor("names", lambda t: t.replace("Aiko", "[NAME]"), order=50))
            register(Redactor("after-secrets", lambda t: t.replace("[REDACTED]", "[SECRET]"), order=150))

    host = make_host({"private": Private()})
    assert [r.name for r in host.redaction.redactors] == ["names", "ego.secrets", "after-secrets"]
    assert host.redaction(f"Aiko used {GOOGLE_URL}") == "[NAME] used https://example.test/v1?key=[SECRET]"


def test_the_ego_prefix_is_reserved_and_names_are_unique_across_plugins(make_host: HostFactory) -> None:
    class Impostor:
        @hookimpl
        def register_redactors(self, register: Callable[[Redactor], None]) -> None:
            register(Redactor("ego.secrets", lambda t: t, order=100))  # would switch off secret masking
            register(Redactor("impostor.names", lambda t: t.replace("Aiko", "[NAME]"), order=50))

    class First:
        @hookimpl
        def register_redactors(self, register: Callable[[Redactor], None]) -> None:
            register(Redactor("shared.rule", lambda t: t.replace("diary", "[D1]"), order=200))

    class Second:
        @hookimpl
        def register_redactors(self, register: Callable[[Redactor], None]) -> None:
            register(Redactor("shared.rule", lambda t: t, order=200))

    host = make_host({"impostor": Impostor(), "first": First(), "second": Second()})
    assert [r.name for r in host.redaction.redactors] == ["impostor.names", "ego.secrets", "shared.rule"]
    assert host.redaction(f"Aiko's diary at {GOOGLE_URL}") == "[NAME]'s [D1] at https://example.test/v1?key=[REDACTED]"
    failures = {f.plugin: f for f in host.failures}
    assert set(failures) == {"impostor", "second"}
    assert (failures["impostor"].stage, failures["impostor"].hook) == ("register", "register_redactors")
    assert "'ego.secrets'" in failures["impostor"].reason
    assert "reserved for the core" in failures["impostor"].reason
    assert "already registered by plugin 'first'" in failures["second"].reason


def test_a_raising_redactor_fails_closed(caplog: pytest.LogCaptureFixture) -> None:
    def broken(text: str) -> str:
        raise RuntimeError(f"cannot handle {text}")

    pipeline = RedactionPipeline([secret_redactor(), Redactor("broken", broken, order=300)])
    with caplog.at_level(logging.ERROR, logger="ego.redaction"):
        assert pipeline("diary: I miss Aiko") == WITHHELD
    assert pipeline.failures == 1
    assert "broken" in caplog.text
    assert "RuntimeError" in caplog.text
    assert "Aiko" not in caplog.text


def test_a_redactor_returning_a_non_string_fails_closed() -> None:
    pipeline = RedactionPipeline([Redactor("lazy", lambda t: None, order=300)])  # type: ignore[arg-type,return-value]
    assert pipeline("secret diary") == WITHHELD
    assert pipeline.failures == 1


def test_a_raising_redactor_in_the_logging_path_withholds_without_recursion(json_log: JsonLog) -> None:
    calls = {"n": 0}

    def broken(text: str) -> str:
        calls["n"] += 1
        logging.getLogger("plugin.noise").warning("redactor at work")  # a rule that logs: no endless recursion
        raise ValueError("nope")

    install_pipeline(RedactionPipeline([secret_redactor(), Redactor("broken", broken, order=300)]))
    logging.getLogger("httpx").warning("diary of Aiko, %s", GOOGLE_URL)
    install_pipeline(default_pipeline())

    text = json_log.text()
    assert "Aiko" not in text
    assert GOOGLE_KEY not in text
    assert WITHHELD in text
    assert "redactor broken raised ValueError" in text
    assert calls["n"] < 10  # a handful of calls, not a recursion
    # every line is still a JSON object, even the withheld ones
    records = json_log.records()
    assert any(r["msg"] == WITHHELD and r["logger"] == "httpx" for r in records)


def test_value_redacts_every_string_inside() -> None:
    pipeline = default_pipeline()
    value = {"url": GOOGLE_URL, "nested": [{"auth": f"Bearer {BEARER}"}, 3, None], "ok": True}
    assert pipeline.value(value) == {
        "url": "https://example.test/v1?key=[REDACTED]",
        "nested": [{"auth": "Bearer [REDACTED]"}, 3, None],
        "ok": True,
    }


# --------------------------------------------------------------------------------------------------
# Log records: ours and third-party libraries', messages, arguments and tracebacks


def test_records_of_a_third_party_logger_are_masked_everywhere(
    capsys: pytest.CaptureFixture[str], json_log: JsonLog
) -> None:
    # a handler a third-party library attached itself, with the stock formatter
    foreign = io.StringIO()
    handler = logging.StreamHandler(foreign)
    logging.getLogger("httpx").addHandler(handler)
    try:
        log = logging.getLogger("httpx")
        log.warning("HTTP Request: GET %s", GOOGLE_URL)
        log.warning("retrying with headers {'Authorization': 'Bearer %s'}", BEARER)
        log.warning("Authorization: Bearer " + BEARER)
    finally:
        logging.getLogger("httpx").removeHandler(handler)
    err = capsys.readouterr().err
    for text in (json_log.text(), err, foreign.getvalue()):
        assert GOOGLE_KEY not in text
        assert BEARER not in text
        assert "?key=[REDACTED]" in text
        assert "Bearer [REDACTED]" in text


def test_tracebacks_in_logs_are_redacted(capsys: pytest.CaptureFixture[str], json_log: JsonLog) -> None:
    def call_provider() -> None:
        raise ConnectionError(f"request to {GOOGLE_URL} failed with Authorization: Bearer {BEARER}")

    try:
        call_provider()
    except ConnectionError:
        logging.getLogger("ego.plugin.memory").exception("embedding failed")
    err = capsys.readouterr().err
    [record] = [r for r in json_log.records() if r["msg"] == "embedding failed"]
    assert "Traceback" in record["exc"]
    assert "ConnectionError" in record["exc"]
    for text in (record["exc"], err, json_log.text()):
        assert GOOGLE_KEY not in text
        assert BEARER not in text
    assert "?key=[REDACTED]" in record["exc"]


def test_structured_fields_are_redacted(json_log: JsonLog) -> None:
    from ego_core.kernel.logs import log_event

    log_event(logging.getLogger("ego.test"), "provider_call", url=GOOGLE_URL, headers={"auth": f"Bearer {BEARER}"})
    [record] = json_log.events("provider_call")
    assert record["url"] == "https://example.test/v1?key=[REDACTED]"
    assert record["headers"] == {"auth": "Bearer [REDACTED]"}


def test_stderr_lines_of_structured_events_show_their_fields_redacted(
    capsys: pytest.CaptureFixture[str], json_log: JsonLog
) -> None:
    from ego_core.kernel.logs import log_event

    log_event(
        logging.getLogger("ego.host"),
        "plugin_failure",
        logging.WARNING,
        plugin="x",
        stage="call",
        hook="on_wake_up",
        reason=f"raised ConnectionError: GET {GOOGLE_URL}",
        extra=None,
    )
    err = capsys.readouterr().err
    assert (
        'ego WARNING ego.host: plugin_failure plugin=x stage=call hook=on_wake_up reason="raised ConnectionError: '
        'GET https://example.test/v1?key=[REDACTED]"\n'
    ) in err
    assert GOOGLE_KEY not in err
    assert "extra=" not in err  # None fields are left out
    [record] = json_log.events("plugin_failure")
    assert record["hook"] == "on_wake_up"


def test_text_formatter_renders_values_compactly() -> None:
    from ego_core.kernel.logs import EGO_FIELDS

    record = logging.getLogger("ego.test").makeRecord("ego.test", logging.WARNING, __file__, 1, "slow_hook", (), None)
    setattr(record, EGO_FIELDS, {"event": "slow_hook", "ms": 1200, "ok": False, "hooks": ["a", "b"], "why": "x\ny"})
    line = TextFormatter().format(record)
    assert line == 'ego WARNING ego.test: slow_hook ms=1200 ok=false hooks=["a","b"] why="x\\ny"'


def test_make_host_puts_the_previous_pipeline_back(tmp_path: Path) -> None:
    """Run as a plugin author would (no ego conftest): the second test must not see the first one's redactor."""
    (tmp_path / "test_author.py").write_text(
        textwrap.dedent(
            """
            from ego_core import Redactor, hookimpl
            from ego_core.kernel.logs import active_pipeline

            class Names:
                @hookimpl
                def register_redactors(self, register):
                    register(Redactor("names.rule", lambda t: t.replace("Aiko", "[NAME]"), order=50))

            def test_a_uses_a_host(make_host):
                before = active_pipeline()
                make_host({"names": Names()})
                assert active_pipeline() is not before
                assert active_pipeline()("Aiko") == "[NAME]"

            def test_b_sees_the_default_pipeline_again():
                assert [r.name for r in active_pipeline().redactors] == ["ego.secrets"]
                assert active_pipeline()("Aiko") == "Aiko"
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "test_author.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_plugin_redactors_apply_to_every_log_record(make_host: HostFactory, json_log: JsonLog) -> None:
    class Names:
        @hookimpl
        def register_redactors(self, register: Callable[[Redactor], None]) -> None:
            register(Redactor("names", lambda t: t.replace("Aiko", "[NAME]"), order=50))

    make_host({"names": Names()})
    logging.getLogger("mcp.server").info("message from %s", "Aiko")
    assert "Aiko" not in json_log.text()
    assert "message from [NAME]" in json_log.text()


def test_a_failing_log_handler_does_not_print_the_raw_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the log directory should be")
    configure_logging(blocked, "INFO")
    try:
        raise ConnectionError(f"GET {GOOGLE_URL}")
    except ConnectionError:
        logging.getLogger("httpx").exception("request failed")
    err = capsys.readouterr().err
    assert "ego: log handler DailyJsonlHandler failed" in err
    assert "?key=[REDACTED]" in err  # the stderr handler still wrote the redacted record
    assert GOOGLE_KEY not in err


@pytest.mark.parametrize("kind", sorted(SECRET_STRATEGIES))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_log_records_with_secrets_in_message_and_traceback_stay_valid_json(kind: str, data: st.DataObject) -> None:
    text, secret = data.draw(SECRET_STRATEGIES[kind], label="secret")
    noise = data.draw(st.text(max_size=30), label="noise")
    assume(secret not in noise and text.count(secret) == 1)
    install_pipeline(default_pipeline())
    logger = logging.getLogger("httpx")
    try:
        raise RuntimeError(f'{noise} "{text}"\n{noise}')
    except RuntimeError:
        record = logger.makeRecord(
            "httpx", logging.ERROR, __file__, 1, "failed: %s", (f"{noise} {text}",), sys.exc_info()
        )
    line = JsonFormatter().format(record)
    entry = json.loads(line)  # masking never breaks the JSON
    assert secret not in line
    assert secret not in entry["msg"]
    assert secret not in entry["exc"]
    assert "RuntimeError" in entry["exc"]
    assert secret not in TextFormatter().format(record)
