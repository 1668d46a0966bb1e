"""Memories that come back unasked: echoes on remember, involuntary recall, anticipated moments, embers."""
