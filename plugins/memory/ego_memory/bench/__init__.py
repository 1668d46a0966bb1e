"""Benchmarks of the memory plugin: LoCoMo retrieval quality and scale (``ego bench ...``)."""
