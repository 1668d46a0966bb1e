"""ego's inner-life dashboard, served as ``ego dashboard`` by the ``dashboard`` plugin."""
