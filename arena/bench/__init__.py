"""The benchmarks of ``arena bench ...``: each measures one thing and prints its numbers as JSON. Only the command
line (``arena/cli/bench.py``) imports them; nothing in production depends on a benchmark.

- :mod:`arena.bench.referee`: the rules engine's playouts, the referee against a bot beside plain gRPC ping-pong,
  quick tournaments, record sizes and costs, the Parquet export, balanced schedules, worker processes
  (``engine``, ``protocol``, ``tournament``, ``records``, ``export``, ``schedule``, ``workers``);
- :mod:`arena.bench.dial_in`: a bot dialed in, behind ``arena connect`` or by itself, against the same bot called
  directly (``protocol --dial-in``);
- :mod:`arena.bench.search`: the search bot's decisions/s and playouts per decision (``search``);
- :mod:`arena.bench.env`: the PettingZoo and OpenSpiel environments' steps/s against the bare engine (``env``);
- :mod:`arena.bench.cluster`: in-process against Ray, and games/s on 1, 2, ... nodes of a local Ray cluster
  (``cluster``), with :mod:`arena.bench.sleepy_bot`, its bot that takes a fixed time per decision;
- :mod:`arena.bench.matchmaking`: the league matchmaker's decisions/s on a simulated ladder (``matchmaking``; the
  tests' simulated hour uses it too);
- :mod:`arena.bench.ratings`: the leaderboard's maximum-likelihood fit on a simulated league against OpenSkill
  (``ratings``);
- :mod:`arena.bench.league_db`: game results recorded per second by the league's database (``league-db``);
- :mod:`arena.bench.league_build`: upload-to-ready seconds per kit (``league-build``);
- :mod:`arena.bench.ladder`: the ladder's numbers for a large league, composed of the benchmarks above (``ladder``).
"""
