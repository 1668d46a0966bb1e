"""Spreading activation over links from the strongest candidates (one hop, and optionally a second): a linked
memory rises, and one only a link reaches joins the ranking."""

from __future__ import annotations

from ego_memory.config import RecallConfig
from ego_memory.recall.candidates import Candidates
from ego_memory.recall.ranking import Ranking
from ego_memory.store.filters import Filters
from ego_memory.store.memory_store import MemoryStore


def spread(
    ranking: Ranking, found: Candidates, cfg: RecallConfig, store: MemoryStore, filters: Filters | None
) -> Ranking:
    """Activation from the ``spreading_sources`` strongest candidates along their links (and the first hop's,
    with ``two_hop``); a memory only a link reaches joins when it exists and the filters admit it."""
    link_map, score_of, stages = found.link_map, ranking.scores, ranking.stages
    if not (cfg.spreading and score_of):
        return ranking
    stages.append("spreading")
    floor = min(score_of.values())
    ordered = sorted(score_of, key=lambda m: -score_of[m])
    sources = ordered[: cfg.spreading_sources]
    # What a source passes on: its lead over the best memory that is not a source (contrast), or over
    # the weakest candidate (the earlier rule, which grows with the pool the first stages found).
    baseline = score_of[ordered[min(len(ordered) - 1, len(sources))]] if cfg.spreading_contrast else floor
    found.read_links(store, sources)
    activation: dict[str, float] = {}
    for source in sources:
        lift = score_of[source] - baseline
        if cfg.spreading_contrast:  # a source keeps exciting itself, as if linked to itself
            activation[source] = activation.get(source, 0.0) + cfg.sequence_gain * lift
        for target, link_type, confidence in link_map.get(source, []):
            gain = cfg.similar_gain if link_type == "similar" else cfg.sequence_gain
            activation[target] = activation.get(target, 0.0) + gain * confidence * lift
    if cfg.two_hop:
        stages.append("two_hop")
        found.read_links(store, list(activation))  # the first hop's, read once per candidate set
        second: dict[str, float] = {}
        for node, passed in activation.items():
            for target, link_type, confidence in link_map.get(node, []):
                if target in sources:
                    continue
                gain = cfg.similar_gain if link_type == "similar" else cfg.sequence_gain
                second[target] = second.get(target, 0.0) + cfg.two_hop_gain * gain * confidence * passed
        for target, value in second.items():
            activation[target] = activation.get(target, 0.0) + value
    newcomers = [m for m in activation if m not in score_of]
    if newcomers:
        if filters is None:  # the ones that still exist
            present_ids = set(found.texts(store, newcomers))
        else:
            present_ids = {mem.id for mem in store.get(newcomers, with_links=False) if filters.matches(mem)}
        activation = {m: a for m, a in activation.items() if m in score_of or m in present_ids}
    for m, a in activation.items():
        score_of[m] = score_of.get(m, floor) + a
    return ranking
