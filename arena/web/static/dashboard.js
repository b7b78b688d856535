// The arena's web dashboard: draws each page from the JSON under /api/ and keeps it current from the page's
// server-sent event stream (each "change" event: fetch the JSON again and redraw). No framework, no build step.
(function () {
  'use strict';
  const body = document.body;
  const PAGE = body.dataset.page;
  const TID = body.dataset.tournament;
  const ENTRANT = body.dataset.entrant || '';
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s === null || s === undefined ? '' : s).replace(/[&<>"']/g, (c) => (
    { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  const enc = encodeURIComponent;
  const when = (t) => t ? new Date(t * 1000).toLocaleString() : '-';
  const COLORS = ['#1f6fb2', '#c0392b', '#2e8b57', '#6c3483', '#b9770e', '#117a65', '#884ea0', '#a04000', '#1a5276',
                  '#922b21', '#196f3d', '#5b2c6f'];

  async function getJSON(url) {
    const reply = await fetch(url, { credentials: 'same-origin' });
    if (reply.ok) return reply.json();
    throw new Error(await window.arenaRefusal(reply));  // static/answer.js
  }
  function fail(error) { $('main').innerHTML = `<p class="message">${esc(error.message)}</p>`; }

  // Redraw on every change the server announces; one fetch at a time, the last change always drawn.
  function follow(streamUrl, draw) {
    let busy = false, again = false;
    const run = async () => {
      if (busy) { again = true; return; }
      busy = true;
      try { await draw(); } catch (error) { fail(error); }
      busy = false;
      if (again) { again = false; run(); }
    };
    // The stream is closed as the page is left: a page kept in the back-forward cache would otherwise hold its
    // connection open, and a browser opens only six to one site (the seventh page would never load). A page
    // brought back from that cache opens it again and redraws what changed meanwhile.
    let source = null;
    const open = () => {
      source = new EventSource(streamUrl);
      source.addEventListener('change', run);
      source.onopen = () => { $('live-state').textContent = 'live'; $('live-state').className = 'live on'; };
      source.onerror = () => { $('live-state').textContent = 'reconnecting'; $('live-state').className = 'live off'; };
    };
    window.addEventListener('pagehide', () => { if (source) { source.close(); source = null; } });
    window.addEventListener('pageshow', (event) => { if (event.persisted && !source) { open(); run(); } });
    open();
    run();
  }

  function crumbs(t) {
    const parts = [`<a href="/t/${enc(t.id)}">${esc(t.name)}</a>`];
    if (PAGE === 'games' || PAGE === 'entrant') parts.push(`<a href="/t/${enc(t.id)}/games">games</a>`);
    if (PAGE === 'entrant') parts.push(esc(ENTRANT));
    $('crumbs').innerHTML = '› ' + parts.join(' › ');
  }
  // With [sprt] the schedule's total is only the test's cap: no bar towards it, the count and the cap said as such.
  const progress = (t) => t.sprt
    ? `<span class="sprt-count">${t.games_done} recorded (SPRT: stops when it decides; cap ${t.games_total})</span>`
    : `<span class="progress"><span style="width:${t.games_total ? 100 * t.games_done / t.games_total : 0}%">` +
      `</span></span>${t.games_done}/${t.games_total}`;
  const state = (t) => `<span class="state ${esc(t.state)}">${esc(t.state)}</span>`;
  const entrantLink = (name) => `<a href="/t/${enc(TID)}/entrants/${enc(name)}">${esc(name)}</a>`;
  const gameLink = (index) => `<a href="/t/${enc(TID)}/games/${index}">game ${index}</a>`;
  // a game no one may open yet (its deal set still being played) is named, not linked: its page would refuse
  const heldGame = (index, why) => `<span class="held" title="${esc(why)}">game ${index}</span>`;
  const recordedGame = (g) => g.withheld.length
    ? heldGame(g.index, `withheld until game(s) ${g.withheld.join(', ')} of its deal set finish`) : gameLink(g.index);
  function table(headers, rows, id) {
    // A header is a text, or {t: text, l: left-aligned}: its text even when empty (never the object itself).
    const head = headers.map((h) => `<th class="${h.l ? 'l' : ''}">${esc(typeof h === 'string' ? h : h.t)}</th>`).join('');
    const lines = rows.map((r) => '<tr>' + r.map((c, i) => `<td class="${headers[i].l ? 'l' : ''}">${c}</td>`).join('') + '</tr>');
    return `<table${id ? ` id="${id}"` : ''}><thead><tr>${head}</tr></thead><tbody>${lines.join('')}</tbody></table>`;
  }

  // --- the tournaments ------------------------------------------------------------------------------------------
  async function drawTournaments() {
    const data = await getJSON('/api/tournaments');
    const rows = data.tournaments.slice().reverse().map((t) => [
      `<a href="/t/${enc(t.id)}">${esc(t.id)}</a>`, esc(t.name), esc(t.variant), t.players, state(t), progress(t),
      t.games_in_progress, esc(t.entrants.join(', ')), esc(when(t.created_at))]);
    $('main').innerHTML = '<h1>Tournaments</h1>' + (rows.length ? table(
      [{ t: 'id', l: 1 }, { t: 'name', l: 1 }, { t: 'variant', l: 1 }, 'players', { t: 'state', l: 1 },
       { t: 'games', l: 1 }, 'playing', { t: 'entrants', l: 1 }, { t: 'submitted', l: 1 }], rows, 'tournaments')
      : '<p>No tournaments yet: submit one with <code>arena submit FILE</code>.</p>');
  }

  // --- one tournament -------------------------------------------------------------------------------------------
  function standingsTable(detail) {
    const st = detail.standings, cells = detail.table.rows;
    const rows = st.entrants.map((e, i) => [i + 1, entrantLink(e.name), e.games, e.wins, e.draws, e.losses,
      esc(cells[i].points), esc(cells[i].scored), esc(cells[i].conceded),
      e.faults ? `<a class="fault" href="/t/${enc(TID)}/games?entrant=${enc(e.name)}&faults=yes">${e.faults}</a>` : 0,
      e.think_ms_per_decision === null || e.think_ms_per_decision === undefined ? '-' : e.think_ms_per_decision.toFixed(1),
      esc(cells[i].rating)].concat(detail.table.calibration_header ? [esc(cells[i].calibration)] : []));
    return table(['rank', { t: 'entrant', l: 1 }, 'games', 'W', 'D', 'L', 'points', 'scored', 'conceded', 'faults',
                  'think ms', detail.table.rating_header].concat(detail.table.calibration_header ? [detail.table.calibration_header] : []),
                 rows, 'standings') +
      `<div class="caption">${esc(detail.table.tie_rule)}</div>`;
  }
  // A gauntlet's table: its candidates as rows, the others as columns (no column of a candidate against itself),
  // as arena run prints it.
  function pairwiseTable(st, candidates) {
    const names = st.entrants.map((e) => e.name);
    const gauntlet = (candidates || []).length > 0;
    const rowNames = gauntlet ? names.filter((n) => candidates.includes(n)) : names;
    const columns = gauntlet ? names.filter((n) => !candidates.includes(n)) : names;
    const rows = rowNames.map((a) => [entrantLink(a), ...columns.map((b) => {
      const cell = (st.pairwise[a] || {})[b];
      return a === b ? '·' : cell ? `${cell.wins}-${cell.draws}-${cell.losses}` : '';
    })]);
    const title = gauntlet ? 'W-D-L of each candidate against each entrant' : 'W-D-L of the row against the column';
    return table([{ t: title, l: 1 }, ...columns], rows, 'pairwise');
  }
  // The SPRT as MatchupTest.to_json() gives it (standings.json's "sprt", the same live from the server).
  const VERDICTS = { continue: 'running', H0: 'H0 accepted', H1: 'H1 accepted' };
  const signed = (v) => (v > 0 ? '+' : v < 0 ? '−' : '') + Math.abs(v).toFixed(1);
  function verdict(sprt, t) {
    if (sprt.state !== 'continue') return VERDICTS[sprt.state];
    return t.state === 'running' || t.state === 'queued' ? 'running' : 'undecided';
  }
  function eloText(estimate) {
    if (estimate.score === null || estimate.score === undefined) return '-';
    if (estimate.elo === null || estimate.elo === undefined) return estimate.score >= 1 ? '+∞' : '−∞';
    const interval = estimate.elo_interval;
    return signed(estimate.elo) + (interval ? ` [${signed(interval[0])}, ${signed(interval[1])}] (95%)` : '');
  }
  // The LLR on a bar from the lower bound (H0) to the upper one (H1), clamped to the bar when outside.
  function llrBar(sprt) {
    const [lower, upper] = sprt.bounds;
    const W = 320, H = 34, L = 10, R = 10;
    const x = (v) => L + (W - L - R) * (Math.min(upper, Math.max(lower, v)) - lower) / (upper - lower);
    const zero = x(0).toFixed(1), mark = x(sprt.llr).toFixed(1);
    return `<svg class="llr-bar" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" ` +
      `aria-label="LLR ${sprt.llr.toFixed(2)} between ${lower.toFixed(2)} and ${upper.toFixed(2)}">` +
      `<rect class="h0" x="${L}" y="8" width="${zero - L}" height="10"/>` +
      `<rect class="h1" x="${zero}" y="8" width="${W - R - zero}" height="10"/>` +
      `<line class="zero" x1="${zero}" x2="${zero}" y1="5" y2="21"/>` +
      `<line class="llr" id="llr-mark" data-llr="${sprt.llr}" x1="${mark}" x2="${mark}" y1="2" y2="24"/>` +
      `<text x="${L}" y="33">${lower.toFixed(2)} H0</text>` +
      `<text x="${W - R}" y="33" text-anchor="end">H1 ${upper.toFixed(2)}</text></svg>`;
  }
  // The standings count every recorded game; the test only complete deal sets (sequential.py's summary says so too).
  function sprtNote(sprt, recorded) {
    const extra = recorded - sprt.games;
    if (sprt.unit === 'games' || extra <= 0) return '';
    return `<p class="caption" id="sprt-note">The standings also count ${extra} game${extra === 1 ? '' : 's'} of ` +
      `${extra === 1 ? 'a deal set' : 'deal sets'} left unfinished when the test decided (the test counts complete ` +
      'deal sets only), so their games and Elo differ from these.</p>';
  }
  function sprtBlock(sprt, t, recorded) {
    if (!sprt) return '';
    const said = verdict(sprt, t);
    const games = sprt.unit === 'games' ? '' : ` (${sprt.games} games)`;
    return `<h2>SPRT</h2><section class="card" id="sprt">` +
      `<div class="verdict ${esc(sprt.state)}" id="sprt-verdict">${esc(said)}</div>` +
      `<div class="matchup">${entrantLink(sprt.candidate)} vs ${entrantLink(sprt.opponent)} · ` +
      `H0: Elo ${signed(sprt.elo0)}, H1: Elo ${signed(sprt.elo1)} (α ${sprt.alpha}, β ${sprt.beta})</div>` +
      `<dl class="kv"><dt>LLR</dt><dd id="sprt-llr">${sprt.llr.toFixed(2)} [${sprt.bounds[0].toFixed(2)}, ` +
      `${sprt.bounds[1].toFixed(2)}]</dd><dt></dt><dd>${llrBar(sprt)}</dd>` +
      `<dt>Elo</dt><dd id="sprt-elo">${esc(eloText(sprt.estimate))}</dd>` +
      `<dt>counted</dt><dd id="sprt-units">${sprt.units} ${esc(sprt.unit)}${games}` +
      (sprt.decided_at ? `; decided at ${sprt.decided_at}` : '') + `</dd></dl>${sprtNote(sprt, recorded)}</section>`;
  }
  // Every Elo is infinite (each entrant won every game it counted, or none): say who (winners first) and why.
  function noFiniteRating(last) {
    const order = ([a, sa], [b, sb]) => (sa === sb ? (a < b ? -1 : a > b ? 1 : 0) : sa === '+' ? -1 : 1);
    const who = Object.entries(last.infinite || {}).sort(order).map(([name, sign]) =>
      `${esc(name)} ${sign === '+' ? '+∞ (won every game)' : '−∞ (won none)'}`);
    return `<p class="meta" id="no-finite-rating">No finite Elo after ${last.games} games: ${who.join(', ')}. ` +
      'An Elo is finite once an entrant has a score strictly between 0 and 1; the standings show the score.</p>';
  }
  function chart(history) {
    const points = history.points;
    if (points.length < 2) return '<p class="meta">The chart starts after two games.</p>';
    const names = Object.keys(points[points.length - 1].values);
    const left = Object.entries(history.left_out || {}).map(([name, n]) => `${esc(name)} at ${n}`);
    const note = left.length ? `<p class="meta" id="chart-left-out">Left out where an Elo is infinite (a score of 0 or ` +
      `1 so far): ${left.join(', ')} of the ${points.length} points.</p>` : '';
    if (!history.axis) return noFiniteRating(points[points.length - 1]);
    const lo = history.axis.low, hi = history.axis.high;
    const W = 760, H = 260, L = 48, R = 12, T = 10, B = 28;
    const x = (g) => L + (W - L - R) * (g - points[0].games) / Math.max(1, points[points.length - 1].games - points[0].games);
    const y = (v) => T + (H - T - B) * (hi - v) / (hi - lo);
    let svg = '';
    for (const tick of history.axis.ticks) {
      svg += `<line class="grid-line" x1="${L}" x2="${W - R}" y1="${y(tick.value)}" y2="${y(tick.value)}"/>` +
        `<text class="tick" x="${L - 6}" y="${y(tick.value) + 4}" text-anchor="end">${esc(tick.label)}</text>`;
    }
    svg += `<line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/>`;
    svg += `<text x="${L}" y="${H - 8}">${points[0].games}</text><text x="${W - R}" y="${H - 8}" text-anchor="end">${points[points.length - 1].games} games</text>`;
    // A line through each run of finite values; a value alone between left-out points is a dot.
    names.forEach((name, i) => {
      const color = COLORS[i % COLORS.length];
      let d = '', run = [];
      const close = () => {
        if (run.length === 1) svg += `<circle cx="${run[0][0]}" cy="${run[0][1]}" r="3" fill="${color}"/>`;
        run.forEach(([px, py], k) => { d += `${k ? 'L' : 'M'}${px},${py} `; });
        run = [];
      };
      for (const p of points) {
        const v = p.values[name];
        if (v === null || v === undefined) { close(); continue; }
        run.push([x(p.games).toFixed(1), y(v).toFixed(1)]);
      }
      close();
      svg += `<path d="${d}" fill="none" stroke="${color}" stroke-width="2" data-entrant="${esc(name)}"/>`;
    });
    const legend = names.map((n, i) => `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${esc(n)}</span>`).join('');
    return `<svg viewBox="0 0 ${W} ${H}" id="rating-chart" data-points="${points.length}">${svg}</svg><div class="legend">${legend}</div>` + note;
  }
  function inProgress(detail) {
    if (detail.access !== 'full') return '';
    const rows = detail.in_progress.map((g) => [
      g.live ? gameLink(g.index) : heldGame(g.index, 'held back until its deal set is played'), esc(g.seats.join(' v ')),
      g.live ? `<a href="/t/${enc(TID)}/games/${g.index}">follow live</a>` : 'held back until its deal set is played']);
    return '<h2>Being played</h2>' + (rows.length ? table([{ t: 'game', l: 1 }, { t: 'seats', l: 1 }, { t: 'moves', l: 1 }], rows, 'in-progress')
      : '<p class="meta">No game in progress.</p>');
  }
  async function drawTournament() {
    const [detail, history] = await Promise.all([getJSON(`/api/t/${enc(TID)}`), getJSON(`/api/t/${enc(TID)}/ratings`)]);
    const t = detail.tournament;
    crumbs(t);
    const faulty = detail.standings.entrants.filter((e) => e.faults);
    const api = `/api/t/${enc(TID)}`;
    $('main').innerHTML =
      `<h1>${esc(t.name)}</h1><div class="meta">${esc(t.variant)}, ${t.players} players · ${state(t)} · ` +
      `<span id="progress">${progress(t)}</span>${t.sprt ? '' : ' games'} · ${t.games_in_progress} being played · ` +
      `entrants ${t.entrants.map(entrantLink).join(', ')}</div>` +
      (t.error ? `<p class="message">${esc(t.error)}</p>` : '') +
      `<div class="meta">seed commitment <code>${esc(t.seed_commitment || '-')}</code>` +
      (t.master_seed ? ` · master seed revealed: <code>${esc(t.master_seed)}</code>` : ' · master seed revealed at the end') + '</div>' +
      `<div class="downloads"><a href="/t/${enc(TID)}/games">games</a>` +
      `<a download href="${api}/games.jsonl">games.jsonl</a><a download href="${api}/games.csv">games.csv</a>` +
      `<a download href="${api}/standings.json">standings.json</a><a download href="${api}/standings.csv">standings.csv</a></div>` +
      // a Swiss or knockout event: its table and rounds or its bracket, as the server drew it (arena/web/events.py)
      detail.event_html +
      `<h2>Standings after <span id="standings-games">${detail.standings.games}</span> games</h2>` +
      `<section class="card">${standingsTable(detail)}</section>` +
      sprtBlock(detail.sprt, t, detail.standings.games) +
      `<div class="grid"><div><h2>Pairwise</h2><section class="card">${pairwiseTable(detail.standings, detail.candidates)}</section>` +
      `<h2>Faults</h2><section class="card" id="faults">${faulty.length ? faulty.map((e) =>
        `<a class="fault" href="/t/${enc(TID)}/games?entrant=${enc(e.name)}&faults=yes">${esc(e.name)}: ${e.faults}</a>`).join(' · ')
        : 'none'}</section>${inProgress(detail)}</div>` +
      `<div><h2>${esc(history.rating)} as games accumulate</h2><section class="card chart">${chart(history)}</section></div></div>`;
  }

  // --- the games ------------------------------------------------------------------------------------------------
  function gamesTable(games, entrant) {
    const rows = games.map((g) => [recordedGame(g), esc(g.seats.join(' v ')), esc(g.scores.join(' – ')),
      esc(g.winner_names || 'drawn'), ...(entrant ? [esc(g.result)] : []),
      g.faults.length ? `<span class="fault">${esc(g.faults.map(([k, s]) => `${k} (seat ${s})`).join('; '))}</span>` : '',
      g.duration_s.toFixed(2)]);
    return table([{ t: 'game', l: 1 }, { t: 'seats', l: 1 }, 'scores', { t: 'winner', l: 1 },
                  ...(entrant ? [{ t: 'result', l: 1 }] : []), { t: 'faults', l: 1 }, 'seconds'], rows, 'games');
  }
  async function drawGames() {
    const query = new URLSearchParams(location.search);
    const data = await getJSON(`/api/t/${enc(TID)}/games?${query}`);
    const t = data.tournament;
    crumbs(t);
    const pick = (name, options) => `<label>${name} <select name="${name}">` + options.map(([v, label]) =>
      `<option value="${esc(v)}"${query.get(name) === v ? ' selected' : ''}>${esc(label)}</option>`).join('') + '</select></label>';
    $('main').innerHTML = `<h1>Games of ${esc(t.name)}</h1>` +
      `<form class="filters" method="get">${pick('entrant', [['', 'any'], ...t.entrants.map((e) => [e, e])])}` +
      pick('result', [['', 'any'], ['win', 'win (of the entrant)'], ['draw', 'draw'], ['loss', 'loss (of the entrant)'],
                      ['decided', 'decided'], ['drawn', 'drawn']]) +
      pick('faults', [['', 'any'], ['yes', 'with faults'], ['no', 'without']]) +
      `<button type="submit">filter</button></form>` +
      `<p class="meta"><span id="shown">${data.games.length}</span> shown of ${data.recorded} recorded (${t.games_total} in the schedule)</p>` +
      gamesTable(data.games, query.get('entrant'));
  }

  // --- one entrant ----------------------------------------------------------------------------------------------
  const MEETINGS = 'Counted by meeting, not by game: each game counts once against each opponent side at the table, ' +
    'a win when this entrant finished above it (so a game lost to a third side can still be a win against this one).';
  async function drawEntrant() {
    const data = await getJSON(`/api/t/${enc(TID)}/entrants/${enc(ENTRANT)}`);
    crumbs(data.tournament);
    const s = data.standing;
    const hello = data.handshake && data.handshake.hello;
    const opponents = Object.entries(data.by_opponent).map(([name, c]) => [entrantLink(name), c.wins, c.draws, c.losses]);
    const seats = data.by_seat.map((r) => [r.seat, r.win, r.draw, r.loss]);
    const gamesByIndex = new Map(data.games.map((g) => [g.index, g]));
    $('main').innerHTML = `<h1>${esc(data.name)}</h1>` +
      (s ? `<div class="meta" id="summary">${s.games} game${s.games === 1 ? '' : 's'}: ${s.wins} won, ${s.draws} drawn, ${s.losses} lost` +
           (data.tournament.players > 2 ? ' (a game is won by its winner alone; the table by opponent counts meetings)' : '') + ' · ' +
           `${s.faults} faults · mean think time ${s.think_ms_per_decision === null ? '-' : s.think_ms_per_decision.toFixed(1) + ' ms'} per decision</div>`
         : '<div class="meta">No game finished yet.</div>') +
      `<h2>Handshake</h2><section class="card" id="handshake">` + (hello ? `<dl class="kv"><dt>name</dt><dd>${esc(hello.name)}</dd>` +
        `<dt>version</dt><dd>${esc(hello.version)}</dd><dt>author</dt><dd>${esc(hello.author)}</dd>` +
        `<dt>protocol</dt><dd>${esc(hello.protocol_version)}</dd><dt>variants</dt><dd>${hello.variants.length
          ? esc(hello.variants.join(', ')) : 'every variant (the handshake names none, which claims them all)'}</dd>` +
        `<dt>processes</dt><dd>${esc(data.handshake.processes)} (started ${data.handshake.starts === 1 ? "once" : `${esc(data.handshake.starts)} times`})</dd></dl>`
        : 'not recorded yet') + '</section>' +
      `<div class="grid"><div><h2>By opponent</h2>${table([{ t: 'opponent', l: 1 }, 'W', 'D', 'L'], opponents, 'by-opponent')}` +
      (data.tournament.players > 2 ? `<div class="caption" id="by-opponent-note">${MEETINGS}</div>` : '') + '</div>' +
      `<div><h2>By seat</h2>${table(['seat', 'W', 'D', 'L'], seats, 'by-seat')}</div></div>` +
      `<h2>Faults</h2><section class="card">${data.faults.length ? data.faults.map((f) =>
        `${recordedGame(gamesByIndex.get(f.game))}: <span class="fault">${esc(f.kind)}</span> (seat ${f.seat})`).join('<br>') : 'none'}</section>` +
      `<h2>Games</h2>${gamesTable(data.games, data.name)}`;
  }

  const pages = {
    tournaments: () => follow('/api/events', drawTournaments),
    tournament: () => follow(`/api/t/${enc(TID)}/events`, drawTournament),
    games: () => follow(`/api/t/${enc(TID)}/events`, drawGames),
    entrant: () => follow(`/api/t/${enc(TID)}/events`, drawEntrant),
  };
  if (pages[PAGE]) pages[PAGE]();
})();
