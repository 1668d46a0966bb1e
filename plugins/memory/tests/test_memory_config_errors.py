"""A memory configuration that cannot work stops `ego serve` with exit code 2 naming the key."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import EgoChild


def serve(ego_child: EgoChild, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ego_child.command("serve", "--plugins", "memory"),
        env=ego_child.env(**env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_unknown_embedder_is_a_configuration_error(ego_child: EgoChild) -> None:
    done = serve(ego_child, EGO_EMBEDDER="nope")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip() == (
        "ego: error: invalid configuration: plugins.memory.embedder (or EGO_EMBEDDER): unknown embedder 'nope'; "
        "expected one of gemini, onnx, openai, sentence-transformers, use"
    )
    assert not (ego_child.data_dir / "memory").exists()


@pytest.mark.parametrize("variant", ["empty", "missing"])
def test_a_model_dir_without_the_model_is_a_configuration_error(
    ego_child: EgoChild, tmp_path: Path, variant: str
) -> None:
    """A configured model_dir must hold the model (unset, the onnx provider runs the int8 MiniLM installed with ego)."""
    model_dir = tmp_path / "models"
    if variant == "empty":
        model_dir.mkdir()
    done = serve(ego_child, EGO_EMBEDDER="onnx", EGO_EMBEDDING_MODEL_DIR=str(model_dir))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip().startswith(
        "ego: error: invalid configuration: plugins.memory.model_dir (or EGO_EMBEDDING_MODEL_DIR): "
        f"ONNX model directory {model_dir} is missing model.onnx, tokenizer.json"
    )
