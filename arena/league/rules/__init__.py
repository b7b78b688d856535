"""The league's rules, pure: no database, no files, no processes, no clock of their own.

A league file's settings and limits (:mod:`.config`), a bot's manifest (:mod:`.manifest`), the errors every league
command speaks (:mod:`.errors`), the domain values the wings pass around (:mod:`.model`), a version's lifecycle and
suspension (:mod:`.lifecycle`), what is kept (:mod:`.retention`), who may do what (:mod:`.permissions`), the
matchmaker (:mod:`.matchmaking`), the online rating (:mod:`.rating`) and the leaderboard's rows (:mod:`.board`).
"""
