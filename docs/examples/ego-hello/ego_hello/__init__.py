"""ego-hello: an example third-party ego plugin (notes the agent leaves for its future self).

The entry point ``hello = "ego_hello:HelloPlugin"`` in group ``ego`` makes it the plugin ``hello``.
"""

from __future__ import annotations

from ego_hello.notes import Note, NoteBook, NoteReader, NoteStoreError
from ego_hello.plugin import NOTES_SERVICE, HelloConfig, HelloPlugin

__all__ = ["NOTES_SERVICE", "HelloConfig", "HelloPlugin", "Note", "NoteBook", "NoteReader", "NoteStoreError"]
