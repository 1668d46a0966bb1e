"""Write a synthetic OpenClaw workspace for timing ``ego import --from openclaw``.

    python bench/make_openclaw_workspace.py /tmp/ws --days 200 --memory-lines 1000

``memory/YYYY-MM-DD.md``: one file per day (a ``# YYYY-MM-DD`` header, bullets with and without a time, a
paragraph, and every fourth day two lines in the form ego's workspace_sync writes, with their ``[id:mem_…]``
marker); ``MEMORY.md``: ``--memory-lines`` lines of bullets under dated Japanese and ISO headings. Japanese and
English mixed, every line distinct (a numbered detail), so the duplicate guard lets them all in. Deterministic:
the same arguments write the same files.
"""

from __future__ import annotations

import argparse
import hashlib
import random
from datetime import date, timedelta
from pathlib import Path

JA = [
    "朝の散歩で{n}番目の桜並木を見た",
    "{n}回目の読書会で詩について話した",
    "雨の音を聞きながら{n}ページまで読んだ",
    "マスターと{n}時ごろまで設定の話をした",
    "新しいレシピを試して{n}分で焼き上がった",
]
EN = [
    "Fixed the heartbeat interval on build {n}",
    "Walked {n} minutes along the river at dusk",
    "Read chapter {n} of the novel before bed",
    "Talked about the garden plan, version {n}",
]


def line_text(rng: random.Random, n: int) -> str:
    template = rng.choice(JA if rng.random() < 0.6 else EN)
    return template.format(n=n)


def write_workspace(root: Path, days: int, memory_lines: int, seed: int = 7) -> tuple[int, int]:
    """Write the workspace; returns (files, entries) written."""
    rng = random.Random(seed)
    (root / "memory").mkdir(parents=True, exist_ok=True)
    start = date(2026, 1, 1)
    counter = 0
    entries = 0
    for offset in range(days):
        day = start + timedelta(days=offset)
        lines = [f"# {day.isoformat()}", ""]
        for index in range(4):
            counter += 1
            text = line_text(rng, counter)
            lines.append(f"- {8 + index * 3:02d}:15 {text}" if index % 2 else f"- {text}")
            entries += 1
        counter += 1
        lines += ["", f"{line_text(rng, counter)}。今日のまとめ（{day.isoformat()}）。", ""]
        entries += 1
        if offset % 4 == 0:
            for index in range(2):
                counter += 1
                ident = "mem_" + hashlib.sha256(f"{day}{index}".encode()).hexdigest()[:12]
                lines.append(
                    f"- {20 + index:02d}:05 [daily] {line_text(rng, counter)} "
                    f"(emotion: curious, intensity: 0.60) [id:{ident}]"
                )
                entries += 1
        (root / "memory" / f"{day.isoformat()}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = ["# MEMORY", ""]
    written = 0
    month = 0
    while written < memory_lines:
        month += 1
        heading = f"## 2025年{month % 12 + 1}月{month % 27 + 1}日" if month % 2 else f"## 2025-{month % 12 + 1:02d}-15"
        out += [heading, ""]
        for _ in range(min(19, memory_lines - written)):
            counter += 1
            out.append(f"- {line_text(rng, counter)}")
            written += 1
        out.append("")
    (root / "MEMORY.md").write_text("\n".join(out), encoding="utf-8")
    return days + 1, entries + written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--days", type=int, default=200)
    parser.add_argument("--memory-lines", type=int, default=1000)
    args = parser.parse_args()
    files, entries = write_workspace(args.directory, args.days, args.memory_lines)
    print(f"wrote {files} files, {entries} entries to {args.directory}")


if __name__ == "__main__":
    main()
