// The game page of the arena's web dashboard: the records' viewer, kept current while the game is played. The
// server sends a "change" event at every move (and when the game is recorded); each fetches the viewer's data again
// and hands it to window.arenaViewer.update, which keeps following the game if it was at its last position.
(function () {
  'use strict';
  const bar = document.getElementById('arena-bar');
  if (!bar || bar.dataset.live !== '1') return;
  const base = `/api/t/${encodeURIComponent(bar.dataset.tournament)}/games/${bar.dataset.game}`;
  const state = document.getElementById('arena-live');
  let busy = false, again = false;
  const source = new EventSource(base + '/events');
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const reply = await fetch(base + '/view', { credentials: 'same-origin' });
      const data = await reply.json();
      if (!reply.ok) { state.textContent = data.error; source.close(); return; }
      window.arenaViewer.update(data);
      document.body.setAttribute('data-moves', data.moves.length);
      if (!data.live) { state.textContent = 'finished: the record is shown'; source.close(); }
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }
  window.arenaViewer.end();   // a live game opens at its latest position, and stays there as moves come
  source.addEventListener('change', refresh);
})();
