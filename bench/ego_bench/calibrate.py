"""Calibrate an embedder's similarity profile on real pairs: ``ego bench calibrate``.

    ego bench calibrate --data bench/data/ja [--embedder NAME] --output bench/results/calibration.json

The texts are embedded by the memory plugin's configured embedder (``[plugins.memory]``, or ``--embedder``),
through ``Memories.embed``: pairs and memories with the ``document`` role, queries with the ``query`` role.
Cosines are computed on the normalised vectors. Every value of the profile comes from an explicit rule:

- **duplicate** and **merge** (one value: the guard's net is never wider than consolidate's): the lowest value of
  the grid 0.80..0.98 (step 0.01) at which both hold. The guard (``ego_memory.contrast``: a pair is refused when
  its cosine reaches the value and neither negations, numbers nor content words differ, or when both texts are
  the same) refuses at most 0.25 % of the JSTS pairs scored ≤ 3.0 and at most 0.5 % of the JNLI contradictions:
  half the product targets (0.5 % / 1 %), a margin for unseen data. Consolidate's rule (cosine at least the
  value, contrast none or wording) lists at most 2 % of the JSTS ≤ 3.0 pairs. The figures of each part alone are
  reported (``guard_alone``, ``merge.uncapped``).
- **link**: the highest, over the sources, of the 99.9th percentile of the cosine between unrelated texts,
  rounded up to 0.05: the densest language decides, so a link means the same in every one. Unrelated: random
  pairs (``UNRELATED_SAMPLES`` from each source, seeded) of distinct Tanaka sentences ja-ja, en-en and en-ja (an
  English sentence and the Japanese of another one), and of distinct JSQuAD paragraphs of different articles.
- **related**: the lowest multiple of 0.05 that at most 2.5 % of the same unrelated pairs (pooled) reach. A
  question and the memory that answers it in the other language score about 0.44, so the 99th percentile would
  be too strict; resurfacing also needs a fading question and waits out a cooldown.
- **floor**: the highest multiple of 0.05 under which at most 0.5 % of translation pairs fall (Tanaka, the
  English sentence as the query, its Japanese as the memory): the floor never hides what only the other
  language's words can find. What it lets through is reported: the highest cosine of each nonsense query
  (:data:`NONSENSE`, ``query`` role) against the Tanaka sentences and the JSQuAD paragraphs.

The English pairs (:data:`ENGLISH_SAME`, :data:`ENGLISH_DIFFERENT`) are reported beside the rules, not used by
them: the share of each group the duplicate guard refuses at the derived and at the shipped value. Beside the
rules, the report also shows the guard without the contrast check (``refused_cosine_only``), the pairs the
contrast check lets through and their cosines (``says_the_same``: when the guard's refusals do not change across
the grid, ``at_grid_floor`` says the cosine bound is not what decides), the merge value before the cap
(``uncapped``) and the highest cosine of each nonsense query.
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import attrs
import numpy as np

from ego_bench.common import memory_host, report_header
from ego_bench.ja import load_jsquad, load_pairs, load_tanaka
from ego_core import Clock, EmbedRole, Settings, SimilarityProfile
from ego_memory.contrast import contrast
from ego_memory.embedding.profiles import profile_for
from ego_memory.progress import progress
from ego_memory.service import Memories

GRID: Final = tuple(round(0.80 + 0.01 * i, 2) for i in range(19))
"""The duplicate and merge values tried, 0.80..0.98."""
DUPLICATE_TARGETS: Final = {"jsts_low": 0.0025, "jnli_contradiction": 0.005}
"""The largest share of each group the duplicate guard may refuse (half of 0.5 % and 1 %)."""
MERGE_TARGET: Final = 0.02
"""The largest share of JSTS ≤ 3.0 pairs consolidate may list as merge candidates."""
MERGE_BELOW: Final = 0.05
"""How far below duplicate the merge value may go."""
MERGEABLE: Final = frozenset({None, "wording"})
LINK_PERCENTILE: Final = 99.9
RELATED_PERCENTILE: Final = 99.0
ROUND_UP_STEP: Final = 0.05
TRANSLATION_PERCENTILE: Final = 5.0
RELATED_SHARE: Final = 0.025
"""related: the share of unrelated pairs that may reach it."""
FLOOR_HIDES: Final = 0.005
"""floor: the share of translation pairs it may hide."""
UNRELATED_SAMPLES: Final = 50_000
"""Random pairs drawn from each unrelated source (all of them when a source has fewer)."""
SEED: Final = 20
BATCH: Final = 64
GROUPS: Final = ("jsts_low", "jnli_contradiction", "jsts_high")
ORIGIN: Final = datetime(2025, 1, 1, tzinfo=UTC)

NONSENSE: Final = (
    "xyzzy qwerty plugh",
    "asdf jkl qwer uiop",
    "zxcvbnm asdfghjkl",
    "qwertyuiop",
    "hjkl hjkl hjkl",
    "lorem ipsum dolor sit amet",
    "consectetur adipiscing elit sed do eiusmod",
    "flibber jabberwock snorkfuzzle",
    "blorptastic wug quindle",
    "grmph zzt kqx vlorn",
    "frobnicate the glimwort",
    "xyzzy ほげ plugh",
    "ぬるぽ がっ ぴよぴよ",
    "あいうえお かきくけこ",
    "ほげほげ ふがふが",
    "ぱぴぷぺぽ ぱぴぷぺぽ",
    "もちょりん ぺけぽん",
    "ぐにゃらら ぽてちん",
    "アイウエオ カキクケコ",
    "ずんどこ べろりんちょ",
    "ほにゃらら ぴろぴろ",
)
"""Queries that mean nothing (keyboard mashes, lorem ipsum, made-up words; Latin and kana)."""

ENGLISH_SAME: Final = (
    ("I finished the quarterly report.", "I finished the quarterly report!"),
    ("We visited the science museum on Sunday.", "We visited the science museum on Sunday!"),
    ("Master likes strong coffee in the morning.", "Master likes strong coffee in the morning..."),
    ("The cat sleeps on the sofa.", "The cat sleeps on a sofa."),
    ("My brother moved to Osaka last spring.", "My brother moved to Osaka last spring!"),
    ("I really enjoyed the concert.", "I enjoyed the concert."),
    ("The meeting was moved to Friday.", "The meeting was moved to Friday!!"),
    ("I have finished reading the novel.", "I finished reading the novel."),
    ("The train was very crowded this morning.", "The train was crowded this morning."),
    ("Master prefers tea over coffee.", "Master prefers tea over coffee!"),
    ("I lost my umbrella at the station.", "I lost my umbrella at the station..."),
    ("The printer in the office is broken.", "The printer in the office is broken!"),
    ("She just started learning the piano.", "She started learning piano."),
    ("Our team won the final match.", "Our team won the final match!"),
    ("It snowed in Sapporo yesterday.", "It snowed in Sapporo yesterday!"),
    ("I also bought some fresh bread.", "I bought some fresh bread."),
    ("The dog barked at the mailman.", "The dog barked at a mailman."),
    ("We had dinner at the Italian restaurant.", "We had dinner at an Italian restaurant."),
    ("The garden is full of roses.", "The garden is full of roses!"),
    ("I forgot my password again.", "I forgot my password."),
    ("He repaired the old bicycle.", "He repaired an old bicycle."),
    ("The library closes at 8 pm.", "The library closes at 8 pm!"),
    ("Master wants to learn Japanese.", "Master wants to learn Japanese!"),
    ("The project deadline is next week.", "The project deadline is next week?!"),
)
"""The same statement twice, differing only in punctuation or function words: the guard should refuse ``b``."""

ENGLISH_DIFFERENT: Final = (
    # negations
    ("I finished the quarterly report.", "I did not finish the quarterly report."),
    ("The cat sleeps on the sofa.", "The cat never sleeps on the sofa."),
    ("Master likes strong coffee in the morning.", "Master doesn't like strong coffee in the morning."),
    ("The printer in the office is broken.", "The printer in the office is not broken."),
    ("We went to the beach on Saturday.", "We didn't go to the beach on Saturday."),
    ("I remembered to lock the door.", "I forgot to lock the door."),
    # numbers
    ("The library closes at 8 pm.", "The library closes at 9 pm."),
    ("I paid 3,000 yen for the ticket.", "I paid 5,000 yen for the ticket."),
    ("The meeting is on March 3.", "The meeting is on March 13."),
    ("We have 2 cats.", "We have 3 cats."),
    ("My flight leaves at 7:30.", "My flight leaves at 9:30."),
    ("The train was 10 minutes late.", "The train was 40 minutes late."),
    # swapped roles
    ("Alice called Bob last night.", "Bob called Alice last night."),
    ("The dog chased the cat.", "The cat chased the dog."),
    ("Master taught Ken to play chess.", "Ken taught Master to play chess."),
    ("The teacher praised the student.", "The student praised the teacher."),
    ("Tokyo beat Osaka in the final.", "Osaka beat Tokyo in the final."),
    ("My sister borrowed money from my brother.", "My brother borrowed money from my sister."),
    # different objects
    ("I bought a new laptop.", "I bought a new phone."),
    ("We visited the science museum on Sunday.", "We visited the art museum on Sunday."),
    ("Master likes strong coffee.", "Master likes green tea."),
    ("I lost my umbrella at the station.", "I lost my wallet at the station."),
    ("She started learning the piano.", "She started learning the violin."),
    ("We had dinner at the Italian restaurant.", "We had dinner at the Thai restaurant."),
)
"""Two statements that embed alike but say different things: the guard must keep ``b``."""


@attrs.frozen
class Scored:
    """A pair as the duplicate guard and consolidate see it."""

    cosine: float
    contrast: str | None
    exact: bool = False

    def refused(self, duplicate: float) -> bool:
        """The guard declines ``b``: the same text, or at least ``duplicate`` similar and saying the same."""
        return self.exact or (self.cosine >= duplicate and self.contrast is None)

    def listed(self, merge: float) -> bool:
        """Consolidate lists the pair: at least ``merge`` similar, and no negation or number contrast."""
        return self.exact or (self.cosine >= merge and self.contrast in MERGEABLE)


Groups = Mapping[str, Sequence[Scored]]


# ----------------------------------------------------------------------------------------------------
# the rules (pure: the tests give them hand-made pairs)


def share(pairs: Sequence[Scored], keep: Callable[[Scored], bool]) -> float | None:
    if not pairs:
        return None
    return round(sum(1 for p in pairs if keep(p)) / len(pairs), 5)


def refused_at(value: float) -> Callable[[Scored], bool]:
    return lambda pair: pair.refused(value)


def listed_at(value: float) -> Callable[[Scored], bool]:
    return lambda pair: pair.listed(value)


def cosine_at(value: float) -> Callable[[Scored], bool]:
    """The guard without the contrast check."""
    return lambda pair: pair.exact or pair.cosine >= value


def says_the_same(pairs: Sequence[Scored]) -> dict[str, Any]:
    """The pairs the contrast check lets through (the guard refuses them at any value up to their cosine)."""
    through = [p.cosine for p in pairs if p.exact or p.contrast is None]
    return {
        "pairs": len(through),
        "min_cosine": round(min(through), 4) if through else None,
        "max_cosine": round(max(through), 4) if through else None,
    }


def count(pairs: Sequence[Scored], keep: Callable[[Scored], bool]) -> int:
    return sum(1 for p in pairs if keep(p))


def duplicate_meets(groups: Groups, value: float) -> bool:
    for group, target in DUPLICATE_TARGETS.items():
        found = share(groups.get(group, ()), refused_at(value))
        if found is not None and found > target:
            return False
    return True


def choose_duplicate(groups: Groups) -> tuple[float, bool]:
    """The lowest grid value meeting both targets and whether one did (else the highest grid value)."""
    for value in GRID:
        if duplicate_meets(groups, value):
            return value, True
    return GRID[-1], False


def merge_target_value(jsts_low: Sequence[Scored], duplicate: float) -> float | None:
    """The lowest grid value from duplicate - 0.05 at which at most 2 % of ``jsts_low`` are listed (uncapped)."""
    low = round(duplicate - MERGE_BELOW, 2)
    for value in GRID:
        if value < low:
            continue
        found = share(jsts_low, listed_at(value))
        if found is None or found <= MERGE_TARGET:
            return value
    return None


def choose_merge(jsts_low: Sequence[Scored], duplicate: float) -> tuple[float, bool]:
    """:func:`merge_target_value` capped at duplicate, and whether the cap decided (no value up to duplicate met
    the target)."""
    value = merge_target_value(jsts_low, duplicate)
    if value is None:
        return duplicate, True
    return min(value, duplicate), value > duplicate


def round_up(value: float, step: float = ROUND_UP_STEP) -> float:
    """``value`` rounded up to a multiple of ``step`` (0.613 -> 0.65; 0.65 stays 0.65)."""
    return round(math.ceil(round(value / step, 4)) * step, 2)


def choose_shared(groups: Groups) -> tuple[float, bool]:
    """duplicate = merge: the lowest grid value where the guard meets its targets and consolidate lists at most
    ``MERGE_TARGET`` of the JSTS ≤ 3.0 pairs; and whether both were met."""
    guard, met = choose_duplicate(groups)
    merge = merge_target_value(groups.get("jsts_low", ()), GRID[0] + MERGE_BELOW)
    if merge is None:
        return GRID[-1], False
    return max(guard, merge), met


def steps(step: float = ROUND_UP_STEP) -> list[float]:
    return [round(step * i, 2) for i in range(1, round(1 / step))]


def related_value(pooled: np.ndarray) -> float:
    """The lowest multiple of 0.05 that at most ``RELATED_SHARE`` of the unrelated pairs reach."""
    return next((v for v in steps() if float(np.mean(pooled >= v)) <= RELATED_SHARE), 1.0)


def floor_value(translations: np.ndarray) -> float:
    """The highest multiple of 0.05 under which at most ``FLOOR_HIDES`` of the translation pairs fall."""
    below = [v for v in steps() if float(np.mean(translations < v)) <= FLOOR_HIDES]
    return below[-1] if below else 0.0


def percentile(values: np.ndarray, q: float) -> float:
    return round(float(np.percentile(values, q)), 4) if len(values) else float("nan")


# ----------------------------------------------------------------------------------------------------
# embedding and pairs


class Embeddings:
    """Each distinct text embedded once per role, normalised, in batches."""

    def __init__(self, memories: Memories, *, show: bool) -> None:
        self.memories = memories
        self.show = show
        self.vectors: dict[tuple[EmbedRole, str], np.ndarray] = {}

    def add(self, texts: Sequence[str], role: EmbedRole, desc: str) -> None:
        missing = list(dict.fromkeys(t for t in texts if (role, t) not in self.vectors))
        batches = [missing[i : i + BATCH] for i in range(0, len(missing), BATCH)]
        for batch in progress(batches, total=len(batches), desc=f"embed {desc}", enabled=self.show):
            found = np.asarray(self.memories.embed(batch, role), dtype=np.float64)
            norms = np.linalg.norm(found, axis=1, keepdims=True)
            found = found / np.where(norms > 0, norms, 1.0)
            for text, vector in zip(batch, found, strict=True):
                self.vectors[(role, text)] = vector

    def matrix(self, texts: Sequence[str], role: EmbedRole = "document") -> np.ndarray:
        self.add(texts, role, role)
        if not texts:
            return np.zeros((0, 1))
        return np.stack([self.vectors[(role, t)] for t in texts])


def score_pairs(pairs: Sequence[tuple[str, str]], embeddings: Embeddings) -> list[Scored]:
    first = embeddings.matrix([a for a, _ in pairs])
    second = embeddings.matrix([b for _, b in pairs])
    cosines = np.einsum("ij,ij->i", first, second) if pairs else np.zeros(0)
    return [
        Scored(cosine=float(c), contrast=contrast(a, b), exact=a == b) for (a, b), c in zip(pairs, cosines, strict=True)
    ]


def sample_pairs(total: int, rng: np.random.Generator, samples: int) -> np.ndarray:
    """Indices into ``total`` candidate pairs: all of them, or ``samples`` distinct ones drawn at random."""
    if total <= samples:
        return np.arange(total)
    return np.sort(rng.choice(total, size=samples, replace=False))


def unrelated_within(vectors: np.ndarray, rng: np.random.Generator, samples: int, groups: Sequence[str] = ()) -> Any:
    """Cosines of random pairs of distinct rows (of different ``groups`` when given)."""
    rows, cols = np.triu_indices(len(vectors), k=1)
    if len(groups):
        labels = np.asarray(groups)
        keep = labels[rows] != labels[cols]
        rows, cols = rows[keep], cols[keep]
    chosen = sample_pairs(len(rows), rng, samples)
    rows, cols = rows[chosen], cols[chosen]
    return np.einsum("ij,ij->i", vectors[rows], vectors[cols])


def unrelated_across(first: np.ndarray, second: np.ndarray, rng: np.random.Generator, samples: int) -> Any:
    """Cosines of random (first[i], second[j]) with i != j (a sentence and another sentence's translation)."""
    n = len(first)
    rows, cols = np.nonzero(~np.eye(n, dtype=bool))
    chosen = sample_pairs(len(rows), rng, samples)
    return np.einsum("ij,ij->i", first[rows[chosen]], second[cols[chosen]])


def distribution(values: np.ndarray) -> dict[str, Any]:
    return {
        "n": len(values),
        "p99": percentile(values, RELATED_PERCENTILE),
        "p99.9": percentile(values, LINK_PERCENTILE),
        "max": round(float(values.max()), 4) if len(values) else None,
    }


# ----------------------------------------------------------------------------------------------------
# the report


def at_values(groups: Groups, english: Groups, duplicate: float, merge: float) -> dict[str, Any]:
    """What the guard and consolidate do with each group at these values."""
    refused = {g: share(groups[g], refused_at(duplicate)) for g in GROUPS}
    listed = {g: share(groups[g], listed_at(merge)) for g in GROUPS}
    return {
        "duplicate": duplicate,
        "merge": merge,
        "refused": refused,
        "refused_count": {g: count(groups[g], refused_at(duplicate)) for g in GROUPS},
        "listed": listed,
        "jsts_high_refused_or_listed": share(groups["jsts_high"], lambda p: p.refused(duplicate) or p.listed(merge)),
        "english_refused": {g: share(english[g], refused_at(duplicate)) for g in ("same", "different")},
    }


def derive(
    groups: Groups,
    english: Groups,
    unrelated: Mapping[str, np.ndarray],
    floor_sides: Mapping[str, Any],
    shipped: SimilarityProfile,
) -> tuple[dict[str, float], dict[str, Any]]:
    """The profile and the figures behind it."""
    guard_alone, guard_met = choose_duplicate(groups)
    duplicate, met = choose_shared(groups)
    merge, capped = duplicate, False
    pooled = np.concatenate([np.asarray(v, dtype=np.float64) for v in unrelated.values()])
    link_raw = max(percentile(np.asarray(v, dtype=np.float64), LINK_PERCENTILE) for v in unrelated.values())
    related_raw = percentile(pooled, RELATED_PERCENTILE)
    link, related = round_up(link_raw), related_value(pooled)
    nonsense_max = float(floor_sides["nonsense_max"]["cosine"])
    translations = np.asarray(floor_sides["translations"], dtype=np.float64)
    translation_low = percentile(translations, TRANSLATION_PERCENTILE)
    floor = floor_value(translations)
    profile = {"duplicate": duplicate, "merge": merge, "link": link, "related": related, "floor": floor}
    nonsense = np.asarray(floor_sides["nonsense_all"], dtype=np.float64)

    def at_or_above(values: np.ndarray, value: float) -> float:
        return round(float(np.mean(values >= value)), 5) if len(values) else float("nan")

    figures: dict[str, Any] = {
        "counts": {
            **{g: len(groups[g]) for g in GROUPS},
            "english_same": len(english["same"]),
            "english_different": len(english["different"]),
            **{f"unrelated_{k}": len(v) for k, v in unrelated.items()},
            "nonsense_queries": floor_sides["nonsense_queries"],
            "translation_pairs": len(translations),
        },
        "duplicate": {
            "rule": (
                "lowest grid value with jsts_low refused <= 0.25 %, jnli_contradiction refused <= 0.5 % and "
                "jsts_low listed as merge candidates <= 2 % (duplicate = merge)"
            ),
            "targets": dict(DUPLICATE_TARGETS),
            "met": met,
            "guard_alone": {"value": guard_alone, "met": guard_met},
            "at_grid_floor": met and duplicate == GRID[0],
            "says_the_same": {g: says_the_same(groups[g]) for g in GROUPS},
            "grid": [
                {
                    "value": v,
                    "refused": {g: share(groups[g], refused_at(v)) for g in GROUPS},
                    "listed": {g: share(groups[g], listed_at(v)) for g in GROUPS},
                    "refused_cosine_only": {g: share(groups[g], cosine_at(v)) for g in GROUPS},
                }
                for v in GRID
            ],
        },
        "merge": {
            "rule": "the duplicate value (the guard's net is never wider than consolidate's)",
            "target": MERGE_TARGET,
            "searched": [v for v in GRID if v >= round(duplicate - MERGE_BELOW, 2)],
            "capped": capped,
            "uncapped": merge_target_value(groups["jsts_low"], duplicate),
        },
        "at_derived": at_values(groups, english, duplicate, merge),
        "at_shipped": at_values(groups, english, shipped.duplicate, shipped.merge),
        "english_different_refused_at_shipped": [
            [a, b]
            for (a, b), p in zip(ENGLISH_DIFFERENT, english["different"], strict=True)
            if p.refused(shipped.duplicate)
        ],
        "english_same_kept_at_shipped": [
            [a, b] for (a, b), p in zip(ENGLISH_SAME, english["same"], strict=True) if not p.refused(shipped.duplicate)
        ],
        "unrelated": {
            "rule": (
                "link: the highest per-source p99.9, rounded up to 0.05; related: the lowest multiple of 0.05 "
                "reached by at most 2.5 % of the pooled pairs (p99 beside it)"
            ),
            "samples_per_source": UNRELATED_SAMPLES,
            "seed": SEED,
            "sources": {k: distribution(np.asarray(v, dtype=np.float64)) for k, v in unrelated.items()},
            "pooled": distribution(pooled),
            "link_raw": link_raw,
            "related_raw": related_raw,
            "at_or_above": {
                "derived_link": at_or_above(pooled, link),
                "shipped_link": at_or_above(pooled, shipped.link),
                "derived_related": at_or_above(pooled, related),
                "shipped_related": at_or_above(pooled, shipped.related),
            },
        },
        "floor": {
            "rule": "the highest multiple of 0.05 under which at most 0.5 % of translation pairs fall",
            "nonsense_max": floor_sides["nonsense_max"],
            "nonsense_max_by_corpus": floor_sides["nonsense_max_by_corpus"],
            "nonsense_max_by_query": floor_sides["nonsense_max_by_query"],
            "translation": {
                "min": round(float(translations.min()), 4) if len(translations) else None,
                "p5": translation_low,
                "p50": percentile(translations, 50),
            },
            "separated": nonsense_max < translation_low,
            "nonsense_pairs_at_or_above": {
                "derived": at_or_above(nonsense, floor),
                "shipped": at_or_above(nonsense, shipped.floor),
            },
            "translations_below": {
                "derived": round(1 - at_or_above(translations, floor), 5),
                "shipped": round(1 - at_or_above(translations, shipped.floor), 5),
            },
        },
    }
    return profile, figures


def floor_sides(embeddings: Embeddings, tanaka: Sequence[tuple[str, str]], passages: Sequence[str]) -> dict[str, Any]:
    queries = embeddings.matrix(list(NONSENSE), "query")
    corpora = {
        "tanaka_en": embeddings.matrix([en for en, _ in tanaka]),
        "tanaka_ja": embeddings.matrix([ja for _, ja in tanaka]),
        "jsquad": embeddings.matrix(list(passages)),
    }
    texts = {"tanaka_en": [en for en, _ in tanaka], "tanaka_ja": [ja for _, ja in tanaka], "jsquad": list(passages)}
    best: dict[str, Any] = {}
    by_corpus: dict[str, float] = {}
    by_query = np.full(len(NONSENSE), -1.0)
    everything = []
    for name, matrix in corpora.items():
        cosines = queries @ matrix.T
        everything.append(cosines.ravel())
        by_query = np.maximum(by_query, cosines.max(axis=1))
        q, d = np.unravel_index(int(np.argmax(cosines)), cosines.shape)
        value = round(float(cosines[q, d]), 4)
        by_corpus[name] = value
        if not best or value > best["cosine"]:
            best = {"cosine": value, "query": NONSENSE[q], "against": texts[name][d][:80], "corpus": name}
    english = embeddings.matrix([en for en, _ in tanaka], "query")
    translations = np.einsum("ij,ij->i", english, corpora["tanaka_ja"])
    return {
        "nonsense_max": best,
        "nonsense_max_by_corpus": by_corpus,
        "nonsense_max_by_query": {q: round(float(v), 4) for q, v in zip(NONSENSE, by_query, strict=True)},
        "nonsense_all": np.concatenate(everything),
        "nonsense_queries": len(NONSENSE),
        "translations": translations,
    }


def run_calibrate(
    data_dir: Path,
    settings: Settings,
    memory_table: Mapping[str, Any],
    *,
    command: str,
    work_dir: Path | None = None,
    show: bool = True,
    samples: int = UNRELATED_SAMPLES,
) -> dict[str, Any]:
    """Derive the similarity profile of the configured embedder from the data in ``data_dir`` (see the module)."""
    if not data_dir.is_dir():
        raise ValueError(f"--data {data_dir} is not a directory with jsquad.json, tanaka.json and pairs.json")
    pairs = load_pairs(data_dir, None)
    tanaka = load_tanaka(data_dir, None)
    if len(tanaka) < 2:
        raise ValueError(f"{data_dir / 'tanaka.json'}: at least two sentence pairs are needed (unrelated pairs)")
    jsquad = load_jsquad(data_dir, None)
    by_group = {g: [(p.a, p.b) for p in pairs if p.group == g] for g in GROUPS}
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="ego-bench-calibrate-", dir=work_dir) as tmp,
        memory_host(Path(tmp) / "store", settings, memory_table, Clock(ORIGIN)) as (_host, memories),
    ):
        model = memories.embedding_model
        shipped = profile_for(model)
        embeddings = Embeddings(memories, show=show)
        groups = {g: score_pairs(by_group[g], embeddings) for g in GROUPS}
        english = {
            "same": score_pairs(ENGLISH_SAME, embeddings),
            "different": score_pairs(ENGLISH_DIFFERENT, embeddings),
        }
        rng = np.random.default_rng(SEED)
        passages = [text for _pid, text in jsquad.passages]
        unrelated = {
            "tanaka_ja_ja": unrelated_within(embeddings.matrix([ja for _, ja in tanaka]), rng, samples),
            "tanaka_en_en": unrelated_within(embeddings.matrix([en for en, _ in tanaka]), rng, samples),
            "tanaka_en_ja": unrelated_across(
                embeddings.matrix([en for en, _ in tanaka]), embeddings.matrix([ja for _, ja in tanaka]), rng, samples
            ),
            "jsquad": unrelated_within(
                embeddings.matrix(passages), rng, samples, [text.split("\n", 1)[0] for text in passages]
            ),
        }
        sides = floor_sides(embeddings, tanaka, passages)
    profile, figures = derive(groups, english, unrelated, sides, shipped)
    shipped_values = {k: getattr(shipped, k) for k in ("duplicate", "merge", "link", "related", "floor")}
    print(
        f"calibrate {model}: derived "
        + ", ".join(f"{k} {v:.2f}" for k, v in profile.items())
        + " | shipped "
        + ", ".join(f"{k} {v:.2f}" for k, v in shipped_values.items())
        + ("" if shipped.calibrated else " (uncalibrated)"),
        file=sys.stderr,
    )
    return {
        **report_header(command, model),
        "embedder": model,
        "profile": profile,
        "shipped": {**shipped_values, "calibrated": shipped.calibrated},
        "figures": figures,
        "seconds": round(time.perf_counter() - started, 1),
    }
