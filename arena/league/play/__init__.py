"""Play: the ready versions at tables.

The ladder (:mod:`.ladder`) and each of its tables as a tournament run (:mod:`.table_run`, :mod:`.table_logs`), the
leaderboard's fit (:mod:`.leaderboard`), challenges (:mod:`.challenges`), the freeze and finals (:mod:`.finals`),
dial-in versions (:mod:`.dial_in`) and what the public pages read (:mod:`.pages`).
"""
