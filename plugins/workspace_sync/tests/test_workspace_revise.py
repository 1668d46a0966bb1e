"""A memory revised after the fact: made private it leaves every workspace file; made public again, or raised to
curated importance, it is written as remember would have written it."""

from __future__ import annotations

from pathlib import Path

from workspace_helpers import SyncHostFactory, all_files_text, call, lines_of, remember

KYOTO = "京都の桜を一緒に見た。マスターが写真を撮ってくれた。"
BUILD = "Fixed the flaky build by pinning the container version."


def test_made_private_leaves_every_file_and_made_public_returns(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    kept = remember(host, BUILD, importance=4)
    target = remember(host, KYOTO, importance=5, category="introspection")
    daily = workspace / "memory" / "2025-03-14.md"
    assert KYOTO in all_files_text(workspace)

    answer = call(host, "revise_memory", memory_id=target, private=True)

    assert answer == f"Revised (id: {target}): now private."
    assert KYOTO not in all_files_text(workspace)
    assert "京都の桜" not in all_files_text(workspace)
    assert any(line.endswith(f"[id:{kept}]") for line in lines_of(workspace / "MEMORY.md"))
    assert not (workspace / "memory" / "inner-monologue-latest.md").exists()

    call(host, "revise_memory", memory_id=target, private=False)

    assert [line for line in lines_of(daily) if line.endswith(f"[id:{target}]")]
    assert [line for line in lines_of(workspace / "MEMORY.md") if line.endswith(f"[id:{target}]")]


def test_raised_importance_joins_memory_md_once(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    target = remember(host, BUILD, importance=2)
    curated = workspace / "MEMORY.md"
    assert not [line for line in lines_of(curated) if line.endswith(f"[id:{target}]")]

    call(host, "revise_memory", memory_id=target, importance=5)
    call(host, "revise_memory", memory_id=target, importance=4, tags=["build"])

    assert len([line for line in lines_of(curated) if line.endswith(f"[id:{target}]")]) == 1


def test_a_private_memory_revised_stays_out(sync_host: SyncHostFactory, workspace: Path) -> None:
    host = sync_host(workspace)
    host.start()
    target = remember(host, KYOTO, private=True)

    call(host, "revise_memory", memory_id=target, importance=5, tags=["桜"])

    assert KYOTO not in all_files_text(workspace)
