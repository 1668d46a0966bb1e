"""The benchmarks as ``ego bench locomo|scale|consolidate|stages|tokens|emotion-trend|notions|…`` commands (JSON
reports)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ego_bench.gateway import gateway_options, gateway_run
from ego_core import Command, PluginHost, hookimpl

BenchRun = Callable[[argparse.Namespace, PluginHost, dict[str, Any], str], dict[str, Any]]


def _write(report: dict[str, Any], output: Path | None) -> None:
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if output is None:
        print(text)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_suffix(output.suffix + ".tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(output)
    print(f"wrote {output}", file=sys.stderr)


REPO = Path(__file__).resolve().parents[2]
"""The repository the reports are committed to (``bench/results``)."""


def _recorded_path(value: str, cwd: Path, root: Path) -> str:
    """A path argument as the report records it: relative to the repository (``bench/data/locomo``,
    ``bench/results/x.json``, ``../shared/data/locomo`` beside it), never the absolute path of the machine that ran
    it; a path elsewhere (a temporary directory) keeps only its name."""
    path = Path(os.path.normpath(cwd / value))
    for base, prefix in ((root, ""), (root.parent, "../")):
        if path == base or base in path.parents:
            relative = path.relative_to(base).as_posix()
            return prefix + relative if relative != "." else (prefix.rstrip("/") or ".")
    return f"<elsewhere>/{path.name}"


def recorded_command(argv: list[str], cwd: Path | None = None, root: Path = REPO) -> str:
    """``ego bench …`` as it was run, with every path argument (``--output=FILE`` too) made repository-relative,
    so a committed report says how to run it again from a checkout and nothing about the machine it ran on."""
    here = Path.cwd() if cwd is None else cwd
    words = ["ego"]
    for arg in argv:
        option, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        if "/" in value or os.sep in value or (value and not value.startswith("-") and (here / value).exists()):
            value = _recorded_path(value, here, root)
        words.append(f"{option}{eq}{value}")
    return " ".join(words)


def _int_list(value: str, option: str) -> list[int]:
    try:
        return [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"{option} expects comma-separated integers") from None


def bench_command(name: str, help: str, options: Callable[[argparse.ArgumentParser], None], run: BenchRun) -> Command:
    """An ``ego bench <name>`` command: builds its own temporary stores (never the data dir), prints JSON.

    ``run(args, host, memory_table, command_line)`` returns the report; a ValueError is a usage error (exit 2).
    """

    def configure(parser: argparse.ArgumentParser) -> None:
        options(parser)
        parser.add_argument("--output", type=Path, default=None, help="write the JSON report here (default: stdout)")
        parser.add_argument("--work-dir", type=Path, default=None, help="where temporary stores go (default: temp)")
        parser.add_argument("--quiet", action="store_true", help="no progress bars")

    def execute(args: argparse.Namespace, host: PluginHost) -> int:
        table = dict(host.settings.plugin_tables.get("memory", {}))
        try:
            report = run(args, host, table, recorded_command(sys.argv[1:]))
        except ValueError as exc:
            print(f"ego: error: {exc}", file=sys.stderr)
            return 2
        _write(report, args.output)
        return 0

    return Command(name=name, group="bench", help=help, configure=configure, run=execute, starts_host=False)


# ----------------------------------------------------------------------------------------------------
# ego bench ...


def _locomo_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, required=True, help="folder of LoCoMo *.json conversations (bench/data/locomo)"
    )
    parser.add_argument("--ablate", action="store_true", help="also run with each recall stage switched off")
    parser.add_argument(
        "--loo",
        action="store_true",
        help="also tune the recall parameters on four conversations and score the fifth, for each of the five",
    )
    parser.add_argument(
        "--link-modes",
        default="links,no_links",
        help="comma-separated: links (remember's automatic links), no_links (none)",
    )


def _locomo(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.locomo import NEW_STAGES, run_locomo

    if not args.data.is_dir():
        raise ValueError(f"--data {args.data} is not a directory of LoCoMo *.json files")
    return run_locomo(
        args.data,
        host.settings,
        table,
        command=command,
        ablate=args.ablate,
        loo=args.loo,
        link_modes=[mode.strip() for mode in args.link_modes.split(",") if mode.strip()],
        new_stages=NEW_STAGES,
        work_dir=args.work_dir,
        show=not args.quiet,
    )


def _scale_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated increasing store sizes")
    parser.add_argument("--operations", type=int, default=200, help="timed remembers and recalls per size")
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder of LoCoMo *.json conversations (bench/data/locomo): grow the store from their turns "
        "(default: synthetic text)",
    )


def _scale(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.scale import run_scale

    if args.operations < 1:
        raise ValueError("--operations must be at least 1")
    sizes = _int_list(args.sizes, "--sizes")
    return run_scale(
        sizes,
        host.settings,
        table,
        command=command,
        operations=args.operations,
        work_dir=args.work_dir,
        show=not args.quiet,
        data_dir=args.data,
    )


def _consolidate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", type=int, default=20000, help="memories in the store (at least 1440)")
    parser.add_argument("--recent", default="100,200,400,800,1440", help="memories in the last 24 h, comma-separated")


def _consolidate(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.consolidate import run_consolidate

    recents = _int_list(args.recent, "--recent")
    return run_consolidate(
        args.size, recents, host.settings, table, command=command, work_dir=args.work_dir, show=not args.quiet
    )


def _stages(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.stages import run_stages

    return run_stages(host.settings, table, command=command, work_dir=args.work_dir)


def _tokens_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sets",
        default="minimal,cognitive,everything,multi-agent",
        help="comma-separated plugin sets to measure (minimal, cognitive, everything, multi-agent)",
    )


def _tokens(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.tokens import run_tokens

    sets = [name.strip() for name in args.sets.split(",") if name.strip()]
    return run_tokens(command=command, embedder=str(table.get("embedder", "onnx")), work_dir=args.work_dir, sets=sets)


def _emotion_trend_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", type=int, default=100000, help="memories in the store (at least 1000)")
    parser.add_argument("--days", type=int, default=365, help="days the memories are spread over (at least 31)")
    parser.add_argument("--runs", type=int, default=200, help="timed calls of each kind")


def _emotion_trend(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.emotion_trend import run_emotion_trend

    return run_emotion_trend(
        args.size,
        args.days,
        host.settings,
        table,
        command=command,
        runs=args.runs,
        work_dir=args.work_dir,
        show=not args.quiet,
    )


def _calibrate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, required=True, help="folder with jsquad.json, tanaka.json, pairs.json (bench/data/ja)"
    )
    parser.add_argument(
        "--embedder", default=None, help="the memory plugin's embedder to calibrate (default: configured)"
    )


def _calibrate(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.calibrate import run_calibrate

    if args.embedder:
        table = {**table, "embedder": args.embedder}
    return run_calibrate(args.data, host.settings, table, command=command, work_dir=args.work_dir, show=not args.quiet)


def _ja_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, required=True, help="folder with jsquad.json, tanaka.json, pairs.json (bench/data/ja)"
    )
    parser.add_argument("--tasks", default="jsquad,tanaka,pairs", help="comma-separated: jsquad, tanaka, pairs")
    parser.add_argument("--limit", type=int, default=None, help="only the first N items of each task")


def _ja(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.ja import parse_tasks, run_ja

    return run_ja(
        args.data,
        host.settings,
        table,
        dict(host.settings.plugin_tables.get("dedup", {})),
        command=command,
        tasks=parse_tasks(args.tasks),
        limit=args.limit,
        work_dir=args.work_dir,
        show=not args.quiet,
    )


def _detector_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="1024,16384,65536", help="comma-separated text sizes in characters")
    parser.add_argument("--runs", type=int, default=5, help="timed calls per input and size (median)")
    parser.add_argument(
        "--prose", default=None, help="real prose to count false positives in (a folder like bench/data/ja, or a file)"
    )


def _detector(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.detector import run_detector_bench

    prose = Path(args.prose) if args.prose else None
    return run_detector_bench(command=command, sizes=_int_list(args.sizes, "--sizes"), runs=args.runs, prose=prose)


def _notions_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--size", default="10000,100000", help="comma-separated store sizes (memories)")
    parser.add_argument("--runs", type=int, default=7, help="daily notion passes timed per size")


def _notions(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.notions import run_notions

    return run_notions(
        _int_list(args.size, "--size"),
        host.settings,
        table,
        command=command,
        runs=args.runs,
        work_dir=args.work_dir,
        show=not args.quiet,
    )


def _life_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenario", type=Path, required=True, help="a lived-time scenario (TOML; bench/scenarios/*.toml)"
    )
    parser.add_argument(
        "--answers", type=Path, default=None, help="also write every answer and its claims here (JSON lines)"
    )


def _life(args: argparse.Namespace, host: PluginHost, table: dict[str, Any], command: str) -> dict[str, Any]:
    from ego_bench.life import run_life

    if not args.scenario.is_file():
        raise ValueError(f"--scenario {args.scenario} is not a file")
    return run_life(args.scenario, command=command, work_dir=args.work_dir, keep=args.answers)


def bench_commands() -> list[Command]:
    return [
        bench_command(
            "locomo", "LoCoMo retrieval benchmark (quality and latency), JSON report", _locomo_options, _locomo
        ),
        bench_command(
            "scale", "remember/recall latency and store size at growing sizes, JSON report", _scale_options, _scale
        ),
        bench_command(
            "consolidate",
            "consolidate duration on a large store against the number of recent memories",
            _consolidate_options,
            _consolidate,
        ),
        bench_command(
            "stages",
            "knowledge-update and salience scenarios: what time decay and the boosts change",
            lambda _parser: None,
            _stages,
        ),
        bench_command("gateway", "shared memory gateway: appends/s and snapshot latency", gateway_options, gateway_run),
        bench_command(
            "tokens",
            "the size of tools/list per plugin set and of typical responses, in characters and tokens",
            _tokens_options,
            _tokens,
        ),
        bench_command(
            "emotion-trend",
            "emotion_trend on a large store: the month window and the whole tool, JSON report",
            _emotion_trend_options,
            _emotion_trend,
        ),
        bench_command(
            "calibrate",
            "derive the embedder's similarity profile (duplicate, merge, link, related, floor) from real pairs",
            _calibrate_options,
            _calibrate,
        ),
        bench_command(
            "ja",
            "Japanese and cross-language recall, the duplicate guard on real pairs, latency (JSON report)",
            _ja_options,
            _ja,
        ),
        bench_command(
            "detector",
            "the shared memory's secret/PII detector on adversarial and ordinary texts of 1 to 64 KB (linear time)",
            _detector_options,
            _detector,
        ),
        bench_command(
            "notions",
            "consolidate's notion pass, the explore walk and the network view at growing store sizes (JSON report)",
            _notions_options,
            _notions,
        ),
        bench_command(
            "life",
            "a month of lived time over MCP: every claim ego made held against the scenario's ground truth",
            _life_options,
            _life,
        ),
    ]


class BenchPlugin:
    """Registers the benchmarks; they build their own temporary stores and never touch the data dir."""

    @hookimpl
    def register_commands(self, register: Callable[[Command], None]) -> None:
        for command in bench_commands():
            register(command)
