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
    const data = await reply.json();
    if (!reply.ok) throw new Error(data.error || reply.statusText);
    return data;
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
    const source = new EventSource(streamUrl);
    source.addEventListener('change', run);
    source.onopen = () => { $('live-state').textContent = 'live'; $('live-state').className = 'live on'; };
    source.onerror = () => { $('live-state').textContent = 'reconnecting'; $('live-state').className = 'live off'; };
    run();
  }

  function crumbs(t) {
    const parts = [`<a href="/t/${enc(t.id)}">${esc(t.name)}</a>`];
    if (PAGE === 'games' || PAGE === 'entrant') parts.push(`<a href="/t/${enc(t.id)}/games">games</a>`);
    if (PAGE === 'entrant') parts.push(esc(ENTRANT));
    $('crumbs').innerHTML = '› ' + parts.join(' › ');
  }
  const progress = (t) => `<span class="progress"><span style="width:${t.games_total ? 100 * t.games_done / t.games_total : 0}%">` +
    `</span></span>${t.games_done}/${t.games_total}`;
  const state = (t) => `<span class="state ${esc(t.state)}">${esc(t.state)}</span>`;
  const entrantLink = (name) => `<a href="/t/${enc(TID)}/entrants/${enc(name)}">${esc(name)}</a>`;
  const gameLink = (index) => `<a href="/t/${enc(TID)}/games/${index}">game ${index}</a>`;
  function table(headers, rows, id) {
    const head = headers.map((h) => `<th class="${h.l ? 'l' : ''}">${esc(h.t || h)}</th>`).join('');
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
      esc(cells[i].rating)]);
    return table(['rank', { t: 'entrant', l: 1 }, 'games', 'W', 'D', 'L', 'points', 'scored', 'conceded', 'faults',
                  'think ms', detail.table.rating_header], rows, 'standings') +
      `<div class="caption">${esc(detail.table.tie_rule)}</div>`;
  }
  function pairwiseTable(st) {
    const names = st.entrants.map((e) => e.name);
    const rows = names.map((a) => [entrantLink(a), ...names.map((b) => {
      const cell = (st.pairwise[a] || {})[b];
      return a === b ? '·' : cell ? `${cell.wins}-${cell.draws}-${cell.losses}` : '';
    })]);
    return table([{ t: 'W-D-L of the row against the column', l: 1 }, ...names], rows, 'pairwise');
  }
  function sprtBlock(sprt) {
    if (!sprt) return '';
    const items = Object.entries(sprt).map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(typeof v === 'object' ? JSON.stringify(v) : v)}</dd>`);
    return `<h2>SPRT</h2><section class="card" id="sprt"><dl class="kv">${items.join('')}</dl></section>`;
  }
  function chart(history) {
    const points = history.points;
    if (points.length < 2) return '<p class="meta">The chart starts after two games.</p>';
    const names = Object.keys(points[points.length - 1].values);
    const values = points.flatMap((p) => Object.values(p.values)).filter((v) => v !== null);
    if (!values.length) return '<p class="meta">No finite rating yet.</p>';
    let lo = Math.min(...values), hi = Math.max(...values);
    if (hi - lo < 1) { lo -= 1; hi += 1; }
    const W = 760, H = 260, L = 48, R = 12, T = 10, B = 28;
    const x = (g) => L + (W - L - R) * (g - points[0].games) / Math.max(1, points[points.length - 1].games - points[0].games);
    const y = (v) => T + (H - T - B) * (hi - v) / (hi - lo);
    let svg = '';
    for (let k = 0; k <= 4; k++) {
      const v = lo + (hi - lo) * k / 4;
      svg += `<line class="grid-line" x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}"/><text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${Math.round(v)}</text>`;
    }
    svg += `<line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/>`;
    svg += `<text x="${L}" y="${H - 8}">${points[0].games}</text><text x="${W - R}" y="${H - 8}" text-anchor="end">${points[points.length - 1].games} games</text>`;
    names.forEach((name, i) => {
      let d = '', pen = 'M';
      for (const p of points) {
        const v = p.values[name];
        if (v === null || v === undefined) { pen = 'M'; continue; }
        d += `${pen}${x(p.games).toFixed(1)},${y(v).toFixed(1)} `;
        pen = 'L';
      }
      svg += `<path d="${d}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2" data-entrant="${esc(name)}"/>`;
    });
    const legend = names.map((n, i) => `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${esc(n)}</span>`).join('');
    return `<svg viewBox="0 0 ${W} ${H}" id="rating-chart" data-points="${points.length}">${svg}</svg><div class="legend">${legend}</div>`;
  }
  function inProgress(detail) {
    if (detail.access !== 'full') return '';
    const rows = detail.in_progress.map((g) => [gameLink(g.index), esc(g.seats.join(' v ')),
      g.live ? `<a href="/t/${enc(TID)}/games/${g.index}">follow live</a>` : 'held back until its deal set is played']);
    return '<h2>Being played</h2>' + (rows.length ? table([{ t: 'game', l: 1 }, { t: 'seats', l: 1 }, { t: '', l: 1 }], rows, 'in-progress')
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
      `<span id="progress">${progress(t)}</span> games · ${t.games_in_progress} being played · ` +
      `entrants ${t.entrants.map(entrantLink).join(', ')}</div>` +
      (t.error ? `<p class="message">${esc(t.error)}</p>` : '') +
      `<div class="meta">seed commitment <code>${esc(t.seed_commitment || '-')}</code>` +
      (t.master_seed ? ` · master seed revealed: <code>${esc(t.master_seed)}</code>` : ' · master seed revealed at the end') + '</div>' +
      `<div class="downloads"><a href="/t/${enc(TID)}/games">games</a>` +
      `<a download href="${api}/games.jsonl">games.jsonl</a><a download href="${api}/games.csv">games.csv</a>` +
      `<a download href="${api}/standings.json">standings.json</a><a download href="${api}/standings.csv">standings.csv</a></div>` +
      `<h2>Standings after <span id="standings-games">${detail.standings.games}</span> games</h2>` +
      `<section class="card">${standingsTable(detail)}</section>` +
      sprtBlock(detail.sprt) +
      `<div class="grid"><div><h2>Pairwise</h2><section class="card">${pairwiseTable(detail.standings)}</section>` +
      `<h2>Faults</h2><section class="card" id="faults">${faulty.length ? faulty.map((e) =>
        `<a class="fault" href="/t/${enc(TID)}/games?entrant=${enc(e.name)}&faults=yes">${esc(e.name)}: ${e.faults}</a>`).join(' · ')
        : 'none'}</section>${inProgress(detail)}</div>` +
      `<div><h2>${esc(history.rating)} as games accumulate</h2><section class="card chart">${chart(history)}</section></div></div>`;
  }

  // --- the games ------------------------------------------------------------------------------------------------
  function gamesTable(games, entrant) {
    const rows = games.map((g) => [gameLink(g.index), esc(g.seats.join(' v ')), esc(g.scores.join(' – ')),
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
  async function drawEntrant() {
    const data = await getJSON(`/api/t/${enc(TID)}/entrants/${enc(ENTRANT)}`);
    crumbs(data.tournament);
    const s = data.standing;
    const hello = data.handshake && data.handshake.hello;
    const opponents = Object.entries(data.by_opponent).map(([name, c]) => [entrantLink(name), c.wins, c.draws, c.losses]);
    const seats = data.by_seat.map((r) => [r.seat, r.win, r.draw, r.loss]);
    $('main').innerHTML = `<h1>${esc(data.name)}</h1>` +
      (s ? `<div class="meta" id="summary">${s.games} games: ${s.wins} won, ${s.draws} drawn, ${s.losses} lost · ` +
           `${s.faults} faults · mean think time ${s.think_ms_per_decision === null ? '-' : s.think_ms_per_decision.toFixed(1) + ' ms'} per decision</div>`
         : '<div class="meta">No game finished yet.</div>') +
      `<h2>Handshake</h2><section class="card" id="handshake">` + (hello ? `<dl class="kv"><dt>name</dt><dd>${esc(hello.name)}</dd>` +
        `<dt>version</dt><dd>${esc(hello.version)}</dd><dt>author</dt><dd>${esc(hello.author)}</dd>` +
        `<dt>protocol</dt><dd>${esc(hello.protocol_version)}</dd><dt>variants</dt><dd>${esc(hello.variants.join(', '))}</dd>` +
        `<dt>processes</dt><dd>${esc(data.handshake.processes)} (started ${esc(data.handshake.starts)} times)</dd></dl>`
        : 'not recorded yet') + '</section>' +
      `<div class="grid"><div><h2>By opponent</h2>${table([{ t: 'opponent', l: 1 }, 'W', 'D', 'L'], opponents, 'by-opponent')}</div>` +
      `<div><h2>By seat</h2>${table(['seat', 'W', 'D', 'L'], seats, 'by-seat')}</div></div>` +
      `<h2>Faults</h2><section class="card">${data.faults.length ? data.faults.map((f) =>
        `${gameLink(f.game)}: <span class="fault">${esc(f.kind)}</span> (seat ${f.seat})`).join('<br>') : 'none'}</section>` +
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
