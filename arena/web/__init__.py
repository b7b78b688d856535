"""The web dashboard of ``arena serve --http``: live standings, games and the game viewer in a browser (see app.py)."""

from arena.web.access import Access as Access
from arena.web.access import AccessRules as AccessRules
from arena.web.app import create_app as create_app
from arena.web.app import serve_web as serve_web

__all__ = ["Access", "AccessRules", "create_app", "serve_web"]
