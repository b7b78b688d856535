"""The application's errors: what a user can cause, printed by the command line as one ``error:`` line."""


class ArenaError(Exception):
    """An error the command line reports as one line (exit status 2), never as a traceback."""
