// The game page of the arena's web dashboard: the records' viewer, kept current while the game is played. The
// server sends a "change" event at every move (and when the game is recorded); each fetches the viewer's data again
// and hands it to window.arenaViewer.update, which keeps following the game if it was at its last position.
(function () {
  'use strict';
  const bar = document.getElementById('arena-bar');
  if (!bar || bar.dataset.live !== '1') return;
  const base = `/api/t/${encodeURIComponent(bar.dataset.tournament)}/games/${bar.dataset.game}`;
  const state = document.getElementById('arena-live');
  let busy = false, again = false, over = false;
  // The stream is closed as the page is left (a page kept in the back-forward cache would hold its connection, and
  // a browser opens only six to one site); a live game brought back from that cache opens it again.
  let source = null;
  const open = () => {
    source = new EventSource(base + '/events');
    source.addEventListener('change', refresh);
  };
  const close = () => { if (source) { source.close(); source = null; } };
  window.addEventListener('pagehide', close);
  window.addEventListener('pageshow', (event) => { if (event.persisted && !source && !over) { open(); refresh(); } });
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const reply = await fetch(base + '/view', { credentials: 'same-origin' });
      if (!reply.ok) {  // said by static/answer.js (else the bar would go on saying "live")
        state.textContent = await window.arenaRefusal(reply);
        over = true; close(); return;
      }
      const data = await reply.json();
      window.arenaViewer.update(data);
      document.body.setAttribute('data-moves', data.moves.length);
      if (!data.live) { state.textContent = 'finished: the record is shown'; over = true; close(); }
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }
  window.arenaViewer.end();   // a live game opens at its latest position, and stays there as moves come
  open();
})();
