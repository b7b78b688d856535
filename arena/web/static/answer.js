// What a dashboard answer that is not OK says, shared by the dashboard's and the game page's scripts: a refusal is
// the API's JSON {error}; an answer that is not JSON (a crash's 500, a proxy's 502 page) is said by its status,
// not as the JSON parse error reply.json() would throw ("Unexpected token 'I'...").
'use strict';
window.arenaRefusal = async function arenaRefusal(reply) {
  const json = (reply.headers.get('content-type') || '').startsWith('application/json');
  const said = json ? (await reply.json()).error : '';
  return said || `the server answered ${reply.status} ${reply.statusText}`.trim();
};
