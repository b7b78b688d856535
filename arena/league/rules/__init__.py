"""The league's rules, pure: no database, no files, no processes, no clock of their own.

A league file's settings (:mod:`.config`), a bot's manifest (:mod:`.manifest`), the errors every league command
speaks (:mod:`.errors`), the matchmaker (:mod:`.matchmaking`) and the online rating (:mod:`.rating`).
"""
