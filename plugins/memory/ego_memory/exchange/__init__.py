"""``ego export`` / ``ego import``: the memory plugin's records and the formats it imports from."""
