// A league's page (arena/web/league.py) is rendered on the server; this keeps it current without a reload: the
// league's event stream (the body's data-events) sends "change" when a ladder table starts or ends or the board is
// refitted, or the league's phase moves, and the page fetches its own address again and swaps in the new main content
// and the header's phase. One fetch at a time; a change during a fetch is fetched once more after it, so the last
// change is always drawn.
(() => {
  'use strict';
  const stream = document.body.dataset.events;
  const state = document.getElementById('live-state');
  if (!stream || !window.EventSource) return;
  let busy = false, again = false;
  const redraw = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const reply = await fetch(location.pathname, {headers: {Accept: 'text/html'}, cache: 'no-store'});
      if (reply.ok) {
        const page = new DOMParser().parseFromString(await reply.text(), 'text/html');
        const main = page.getElementById('main');
        if (main) document.getElementById('main').innerHTML = main.innerHTML;
        const phase = page.getElementById('league-phase'), shown = document.getElementById('league-phase');
        if (phase && shown) shown.innerHTML = phase.innerHTML;
        document.body.dataset.redrawn = String(Number(document.body.dataset.redrawn || 0) + 1);
      }
    } catch (error) {
      if (state) { state.textContent = 'reconnecting'; state.className = 'live off'; }
    }
    busy = false;
    if (again) { again = false; redraw(); }
  };
  // The stream is closed as the page is left: a page kept in the back-forward cache would otherwise hold its
  // connection open, and a browser opens only six to one site (the seventh page would never load).
  let source = null;
  const open = () => {
    source = new EventSource(stream);
    source.addEventListener('change', redraw);
    source.onopen = () => { if (state) { state.textContent = 'live'; state.className = 'live on'; } };
    source.onerror = () => { if (state) { state.textContent = 'reconnecting'; state.className = 'live off'; } };
  };
  window.addEventListener('pagehide', () => { if (source) { source.close(); source = null; } });
  window.addEventListener('pageshow', (event) => { if (event.persisted && !source) open(); });
  open();
})();
