"""Recall: a pipeline of stages over one candidate set, which :mod:`ego_memory.recall.engine` runs in order
(:mod:`~ego_memory.recall.candidates` with the :mod:`~ego_memory.recall.lexical` channel, then
:mod:`~ego_memory.recall.fusion`, :mod:`~ego_memory.recall.completion`, :mod:`~ego_memory.recall.reweigh`,
:mod:`~ego_memory.recall.cues`, :mod:`~ego_memory.recall.spread`, :mod:`~ego_memory.recall.final`, passing one
:class:`~ego_memory.recall.ranking.Ranking` on), and the recall strength it and the service read (decay, strength,
fuzzy recall, emotional history)."""
