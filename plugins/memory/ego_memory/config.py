"""Configuration of the memory plugin (``[plugins.memory]`` and ``[plugins.memory.recall]``)."""

from __future__ import annotations

import math
from pathlib import Path

import attrs


@attrs.frozen
class RecallConfig:
    """The recall pipeline. Each stage can be switched off; ``ego bench locomo --ablate`` does.

    The defaults were chosen on the LoCoMo benchmark (docs/benchmarks.md shows what each stage earns).
    """

    dense_candidates: int = 60
    lexical_candidates: int = 60
    lexical_max_df: float = 0.05
    """In stores of at least ``lexical_min_corpus`` memories, BM25 leaves out query terms found in more than
    this fraction of memories: they carry almost no weight, and ranking every memory they match is what makes
    lexical search slow on a large store."""
    lexical_min_corpus: int = 2000
    fusion: bool = True
    fusion_method: str = attrs.field(default="zscore", validator=attrs.validators.in_(("zscore", "rrf")))
    """zscore: convex combination of z-normalised BM25 and cosine scores; rrf: reciprocal rank fusion."""
    lexical_weight: float = 0.85
    """The BM25 share of the fusion (the multilingual model's dense scores are the weaker evidence on LoCoMo and
    JSQuAD: 0.85 was the best of 0.6-0.9 on both)."""
    rrf_k: float = 60.0
    english_weight: float = 0.4
    """For a context in Latin script, the English channel's weight beside the fused BM25 and multilingual
    evidence (which weigh 1 together): the fused score is (fusion + english_weight × English) / (1 +
    english_weight). Memories in Latin script carry a second, English-only embedding (``english_channel``)."""
    english_candidates: int = 60
    """The English channel's nearest memories that join the candidates (not when the recall has filters)."""
    hopfield: bool = False
    """Off by default: over the multilingual model's embeddings the completion lowered hit@5 on LoCoMo and JSQuAD
    (docs/benchmarks.md); on for an embedder where it earns its place."""
    hopfield_beta: float = 8.0
    hopfield_lexical_bias: float = 2.0
    hopfield_blend: float = 0.5
    hopfield_weight: float = 0.3
    decay: bool = True
    half_life_days: float = 90.0
    decay_weight: float = 0.1
    interference_threshold: float = 0.70
    """Part of decay: an older memory nearly identical (cosine above this) to a newer one fades (interference),
    unless it holds a cue of the context (word, CJK trigram) that the newer one lacks."""
    interference_weight: float = 1.5
    interference_pool: int = 20
    boosts: bool = True
    emotion_weight: float = 2.0
    importance_gain: float = 0.1
    spreading: bool = True
    spreading_sources: int = 5
    spreading_contrast: bool = True
    """Competitive spreading: a source passes on its lead over the best memory that is not a source (how
    distinctly the context evoked it, whatever the size of the candidate pool), and it keeps exciting itself
    as strongly as it excites a linked memory (on-centre self-excitation). Several middling sources in one
    chain of links (the paragraphs of one article) then no longer lift the memory between them above the one
    the context evoked most, while a memory linked to a clear winner still rises (docs/benchmarks.md: JSQuAD
    hit@5 0.965 → 0.971, LoCoMo leave-one-out hit@5 0.732 → 0.741). False: the earlier rule, each source's lead
    over the weakest candidate and no self-excitation (its gain was half this one: ``sequence_gain`` 0.3)."""
    sequence_gain: float = 0.6
    """Spreading along sequence, causal and explicit links (leads_to, caused_by, related)."""
    similar_gain: float = 0.05
    """Spreading along similarity links (auto-links of near neighbours add little new)."""
    two_hop: bool = True
    """Spreading goes one more hop (along the links of the memories the first hop reached)."""
    two_hop_gain: float = 0.25
    """The second hop's activation, as a fraction of what the first hop passed on."""
    speaker: bool = True
    """Field-aware matching: a memory written as ``<label>: <text>`` (a speaker, a source) whose label the
    context names gets ``speaker_weight``."""
    speaker_weight: float = 0.15
    temporal: bool = True
    """A context asking when (when, what date, how long ago) favours memories that carry a time expression."""
    temporal_weight: float = 0.3
    dated: bool = True
    """A context naming a calendar period ("in July 2022", "the week before 16 November") also searches the
    memories of that period and favours them by ``dated_weight``; a memory written up to ``dated_slack_days``
    after the period still counts (events are told after they happen)."""
    dated_weight: float = 0.5
    dated_candidates: int = 20
    dated_slack_days: float = 14.0
    relevance: bool = True
    """Only memories related to the context are returned: above the embedding model's calibrated floor of
    similarity, or holding a word of the context; the shown score is that relevance (0-1) fitted to the order
    (:func:`ego_memory.service.shown_scores`), and the header counts the related memories. Nothing related:
    "No related memories found."."""
    hedges: bool = True
    """Words that only hedge a question (likely, might, probably, considered) are left out of the lexical
    query: rare in memories, they would otherwise weigh as much as the words that name what is asked."""
    equivalents: bool = True
    """The context's words also find the memories holding other words for them (:mod:`ego_memory.text.equivalents`):
    a Japanese synonym in the lexical channel at half weight (最初 finds 初めて), a word of the other language as
    evidence of its own ("scolded" finds 叱る, 褒める finds "praised"), weighed by ``translation_weight``. (A proper
    noun's reading is the same name, not an equivalent: "Uji" meets 宇治 through the word index itself.)"""
    across_languages: bool = True
    """In a store holding both languages, the memories written in the other language from the context are scored on
    the context's words too, on the scale of the memories written in its language (which BM25 reads): a memory
    earns the BM25 weight (IDF) of each word of the context it holds through a translation (the equivalents
    table), as if at average length, or, where the embedding model reads more of it, its calibrated similarity
    times the weight of all the context's words. Without it, a memory in the context's language holding one or two
    of its words ("Master", 俳句) passed the memory in the other language that held them all: a month of a
    household writing both languages, recall@1 0.8 → 1.0; Tanaka in one store of both languages (the Japanese of
    half the pairs, the English of the other half), hit@5 en→ja 0.37 → 0.98 and ja→en 0.06 → 0.94. Only when the
    context's own words found a memory in its language: in a store of the other language alone (Tanaka, unchanged)
    a word found through its translation stays evidence of its own (``translation_weight``)."""
    translation_candidates: int = 20
    """The memories holding the context's words in the other language that join the candidates (the best by BM25):
    a few are enough to put the one asked for among them, and every candidate costs recall time."""
    translation_weight: float = 0.15
    """The share, beside the fusion's (``lexical_weight`` for the context's own words, the rest for the dense
    similarity), of how many of the context's words a memory holds in the other language: as much as the dense
    similarity's, the other evidence across languages, where the embedding model sees nothing (its closest
    candidate at the model's ``floor`` or below: "scolded" against a Japanese diary, 0.21), fading to nothing
    where it sees the match (at its ``link`` similarity: a Tanaka sentence's translation, median 0.70). Tanaka
    hit@5 / hit@1 en→ja at 0, 0.15, 0.3: 0.954 / 0.894, 0.952 / 0.890, 0.952 / 0.884; ja→en 0.964 / 0.884,
    0.964 / 0.884, 0.960 / 0.878. Without the fading, at 0.15: en→ja 0.952 / 0.836, ja→en 0.956 / 0.848 (a shared
    common word outvoted the model's translation); in the lexical channel itself en→ja hit@5 0.880. Below 0.15 a
    lived month's 褒められた found "Master said he was proud of me" before "Master praised the cake I baked"
    when recall's searches are crowded."""


def _similarity(_instance: object, attribute: attrs.Attribute[float | None], value: float | None) -> None:
    if value is not None and not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise ValueError(f"{attribute.name}: expected a cosine similarity greater than 0 and at most 1, got {value}")


def _probability(_instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise ValueError(f"{attribute.name}: expected a probability from 0 (never) to 1 (always), got {value}")


@attrs.frozen
class MemoryConfig:
    embedder: str = "use"
    """Embedding provider: use (default: multilingual, local, installed with its weights), onnx
    (all-MiniLM-L6-v2 int8, English, installed too), sentence-transformers, openai, gemini, or a plugin's."""
    model_dir: Path | None = None
    """Local model directory (onnx: its model.onnx and tokenizer.json instead of the installed int8 model;
    sentence-transformers). Env: EGO_EMBEDDING_MODEL_DIR."""
    model: str | None = None
    """Model name for sentence-transformers / openai / gemini."""
    api_key_env: str | None = None
    """Name of the environment variable that holds the provider's API key (the key never goes in a file)."""
    base_url: str | None = None
    english_channel: bool = True
    """Memories in Latin script also get an English-only embedding (all-MiniLM-L6-v2 int8, installed with
    ego), blended into recall for an English context by ``recall.english_weight``. Ignored when the embedder is
    all-MiniLM-L6-v2 itself."""
    chroma_url: str | None = None
    """Use a Chroma server (e.g. http://127.0.0.1:8000) instead of the embedded store. Env: EGO_CHROMA_URL."""
    link_threshold: float | None = attrs.field(default=None, validator=_similarity)
    """A new memory is linked (``similar``) to existing ones at least this similar; default: the embedding
    model's calibrated profile (0.65 for use, 0.70 for onnx)."""
    max_links: int = 5
    sequence_links: int = 2
    """A new memory is linked (leads_to) to up to this many memories stored just before it ..."""
    sequence_window_minutes: float = 60.0
    """... if they were stored at most this long before it (the same moment of life)."""
    max_content_chars: int = 8000
    exact_search_limit: int = attrs.field(default=50_000, validator=attrs.validators.ge(0))
    """Recall's dense search runs exactly, on a copy of every vector in the process (2 KB a memory), while the
    store holds at most this many memories; beyond, and for searches with filters, Chroma's index answers."""
    revise_tool: bool = False
    """Offer ``revise_memory`` (change a memory's importance, tags or privacy) to the agent; without it only the
    owner's surfaces run it (the dashboard's corrections), and the agent's tool list stays shorter."""
    involuntary_probability: float = attrs.field(default=0.25, validator=_probability)
    """The chance that a recall or a wake_up brings back a dormant memory nobody asked for (0: never)."""
    recall: RecallConfig = attrs.field(factory=RecallConfig)


CONFIG_ENV = {
    "EGO_EMBEDDING_MODEL_DIR": "model_dir",
    "EGO_EMBEDDER": "embedder",
    "EGO_CHROMA_URL": "chroma_url",
}
