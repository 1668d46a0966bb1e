"""ego's benchmarks, served as ``ego bench ...`` commands by the ``bench`` plugin."""
