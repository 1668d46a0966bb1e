"""The MCP surface: tool schemas and handlers (remember, recall, search_memories and the lifecycle tools),
resources and prompt steps. The handlers use the ``memory.store`` service (:mod:`ego_memory.service`)."""
