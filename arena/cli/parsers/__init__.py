"""The parser of every ``arena`` command, apart from what the commands do.

A command's arguments (``arena/cli/parsers/league.py``) and its handler (``arena/cli/league.py``) live in two
modules: building the parser (``arena --help``, ``arena league sign-up --help``, a mistyped flag) imports only the
argument modules, which import nothing heavy, and each command names its handler as ``"module:function"``
(``set_defaults(handler=...)``), which :func:`arena.cli.main` imports once the line is parsed. So a command imports
only what it uses: a league client's gRPC stubs, not the league's database; ``arena run``, not the web dashboard.
A split rather than imports inside the handlers keeps every module's imports at its top, where they are read and
checked (tests/cli/test_command_imports.py checks what building the parser and each command import).
"""
