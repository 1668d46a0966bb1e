"""ego notions: concepts formed from densely linked memories, reinforced into convictions."""

from __future__ import annotations

from ego_notions.book import NotionBook, PassReport
from ego_notions.model import Notion
from ego_notions.plugin import NotionsPlugin
from ego_notions.store import NotionDB

__all__ = ["Notion", "NotionBook", "NotionDB", "NotionsPlugin", "PassReport"]
