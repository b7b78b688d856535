"""The server's defaults and limits that its command line shows (``arena serve --data``, ``arena league share
--hours``), in a module that imports nothing: building the parser loads no server, no web dashboard."""

DEFAULT_DATA = "runs/server"
"""The data folder of ``arena serve`` when ``--data`` names none."""
MAX_SHARE_HOURS = 30 * 24
"""The longest a share link of a league's public pages opens it (:func:`arena.web.access.share_expiry`)."""
