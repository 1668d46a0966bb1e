"""The store: SQLite (schema, tables, rows), the Chroma vector index, locking, maintenance and the filters
both apply; :class:`~ego_memory.store.memory_store.MemoryStore` is its one entry."""
