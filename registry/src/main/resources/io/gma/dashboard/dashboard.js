// The GMA dashboard's overview: the registry's tables, each reachable PC servlet's status and the picture of the
// domains' routes, every second (common.js and routes.js are loaded before it).
'use strict';

let sessionUrl = null; // where to sign in, when the registry authenticates; null: nothing to sign in to
let epoch = 0; // a sign-in or sign-out starts a new one: refreshes of an older one stop and show nothing
const previous = {}; // domain -> {at, sent, received}: for rates
let drawn = null; // what the routes picture shows now, to draw it again only when that changes

function cell(tr, text, numeric) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '' : String(text);
  if (numeric) {
    td.className = 'num';
  }
  tr.appendChild(td);
}

function fill(id, rows) {
  const body = document.querySelector('#' + id + ' tbody');
  body.replaceChildren(...rows);
}

function seconds(ms) {
  return (ms / 1000).toFixed(0) + ' s';
}

// A PC servlet's status, or null when it does not answer in 2 s, answers something else, or names
// another domain (a URL taken over by another PC servlet before the old lease ran out).
async function status(url, domain) {
  try {
    const r = await fetch(url + '/gma/v1/status', { cache: 'no-store', signal: AbortSignal.timeout(2000) });
    const s = r.ok ? await r.json() : null;
    const shaped = s && s.domain === domain && s.counters && Array.isArray(s.outbound)
        && Array.isArray(s.relayed) && Array.isArray(s.clients);
    return shaped ? s : null;
  } catch (unreachable) {
    return null;
  }
}

async function refresh(mine) {
  const now = Date.now();
  const domains = await query('SELECT domain, url, via FROM domains ORDER BY domain');
  const endpoints = await query('SELECT name, kind, domain, registered_at, expires_at FROM endpoints ORDER BY name');
  const attributes = await query('SELECT name, key, value FROM attributes ORDER BY name, key');
  if (mine !== epoch) {
    return; // signed out meanwhile
  }

  const attrs = {};
  for (const [name, key, value] of attributes.rows) {
    (attrs[name] = attrs[name] || []).push(key + '=' + value);
  }
  fill('endpoints', endpoints.rows.map(([name, kind, domain, registered, expires]) => {
    const tr = document.createElement('tr');
    cell(tr, name);
    cell(tr, kind);
    cell(tr, domain);
    cell(tr, (attrs[name] || []).join(' '));
    cell(tr, seconds(now - Date.parse(registered)), true);
    cell(tr, seconds(Date.parse(expires) - now), true);
    return tr;
  }));

  const statuses = await Promise.all(domains.rows.map(([domain, url]) => url ? status(url, domain)
      : Promise.resolve(null)));
  if (mine !== epoch) {
    return;
  }
  const domainRows = [];
  const queueRows = [];
  domains.rows.forEach(([domain, url, via], i) => {
    const s = statuses[i];
    const tr = document.createElement('tr');
    cell(tr, domain);
    cell(tr, url || '(outbound-only)');
    cell(tr, via);
    if (s) {
      const c = s.counters;
      const queued = s.outbound.concat(s.relayed).concat(s.clients);
      const prev = previous[domain];
      const dt = prev ? (now - prev.at) / 1000 : 0;
      cell(tr, s.clients.filter(x => x.connected).length, true);
      cell(tr, queued.reduce((n, q) => n + q.queuedMessages, 0), true);
      cell(tr, queued.reduce((n, q) => n + q.queuedBytes, 0), true);
      cell(tr, c.throttledSent, true);
      cell(tr, c.throttledReceived, true);
      cell(tr, c.retries, true);
      cell(tr, c.drops, true);
      cell(tr, dt > 0 ? ((c.messagesSent - prev.sent) / dt).toFixed(1) : '', true);
      cell(tr, dt > 0 ? ((c.messagesReceived - prev.received) / dt).toFixed(1) : '', true);
      previous[domain] = { at: now, sent: c.messagesSent, received: c.messagesReceived };
      for (const q of s.outbound.concat(s.relayed)) {
        const qr = document.createElement('tr');
        cell(qr, domain);
        cell(qr, q.domain);
        cell(qr, q.queuedMessages, true);
        cell(qr, q.queuedBytes, true);
        queueRows.push(qr);
      }
    } else {
      cell(tr, url ? 'no answer' : '');
      for (let k = 0; k < 8; k++) {
        cell(tr, '');
      }
    }
    domainRows.push(tr);
  });
  fill('domains', domainRows);
  fill('queues', queueRows);
  const answering = {};
  domains.rows.forEach(([domain, url], i) => {
    answering[domain] = url ? statuses[i] !== null : undefined;
  });
  const picture = JSON.stringify([domains.rows, answering]);
  if (picture !== drawn) {
    drawRoutes(document.getElementById('routes'), domains.rows, answering);
    drawn = picture;
  }
  document.getElementById('status').textContent = 'updated ' + new Date(now).toLocaleTimeString();
}

async function runQuery(event) {
  event.preventDefault();
  const error = document.getElementById('sql-error');
  const head = document.querySelector('#result thead');
  error.textContent = '';
  try {
    const r = await query(document.getElementById('sql').value);
    const tr = document.createElement('tr');
    for (const c of r.columns) {
      const th = document.createElement('th');
      th.textContent = c;
      tr.appendChild(th);
    }
    head.replaceChildren(tr);
    fill('result', r.rows.map(row => {
      const rtr = document.createElement('tr');
      row.forEach(v => cell(rtr, v, typeof v === 'number'));
      return rtr;
    }));
  } catch (e) {
    head.replaceChildren();
    fill('result', []);
    error.textContent = e.message;
  }
}

// Every second, until the registry asks for a sign-in (or another epoch begins).
async function tick(mine) {
  if (mine !== epoch) {
    return;
  }
  try {
    await refresh(mine);
  } catch (e) {
    if (mine !== epoch) {
      return;
    }
    if (sessionUrl && e instanceof Refused && e.status === 401) {
      showSignIn(e.message, false);
      return;
    }
    document.getElementById('status').textContent = 'cannot read the registry: ' + e.message;
  }
  setTimeout(() => tick(mine), 1000);
}

// The sign-in form, with the registry's sentence (in red when it refused a token the person gave); the tables
// are emptied, as they showed what the identity signed out may read.
function showSignIn(message, refused) {
  epoch++;
  document.getElementById('signin').hidden = false;
  const error = document.getElementById('signin-error');
  error.textContent = message;
  error.className = refused ? 'refused' : '';
  document.getElementById('who').textContent = '';
  document.getElementById('signout').hidden = true;
  for (const id of ['domains', 'endpoints', 'queues', 'result']) {
    fill(id, []);
  }
  document.getElementById('routes').replaceChildren();
  drawn = null;
  document.querySelector('#result thead').replaceChildren();
  document.getElementById('status').textContent = 'not signed in';
  document.getElementById('token').focus();
}

// Signed in (by this dashboard's session, or by a client certificate): who, and the tables again.
function signedIn(answer) {
  document.getElementById('signin').hidden = true;
  document.getElementById('signin-error').textContent = '';
  document.getElementById('who').textContent = 'signed in as ' + answer.identity;
  document.getElementById('signout').hidden = !answer.session; // a certificate is the browser's to drop
  epoch++;
  tick(epoch);
}

async function signIn(event) {
  event.preventDefault();
  const field = document.getElementById('token');
  const token = field.value.trim().replace(/^Bearer\s+/i, '');
  if (!token) {
    showSignIn('paste a token first', true);
    return;
  }
  try {
    // in a header, as every caller of the registry shows it; the registry keeps it, the page forgets it
    const answer = await call(sessionUrl, { method: 'POST', headers: { Authorization: 'Bearer ' + token } });
    field.value = '';
    signedIn(answer);
  } catch (e) {
    showSignIn('not signed in: ' + e.message, true);
  }
}

async function signOut() {
  let message = 'signed out';
  try {
    await call(sessionUrl, { method: 'DELETE' });
  } catch (e) {
    message = 'signed out (' + e.message + ')';
  }
  showSignIn(message, false);
}

async function start() {
  const config = await loadConfig();
  sessionUrl = config.session || null;
  document.getElementById('sql-form').addEventListener('submit', runQuery);
  if (!sessionUrl) {
    tick(epoch);
    return;
  }
  document.getElementById('signin-form').addEventListener('submit', signIn);
  document.getElementById('signout').addEventListener('click', signOut);
  whoAmI();
}

// Whether this browser is signed in already (a session, or a client certificate), else the form.
async function whoAmI() {
  try {
    signedIn(await call(sessionUrl, { cache: 'no-store' }));
  } catch (e) {
    if (e instanceof Refused && e.status === 401) {
      showSignIn(e.message, false);
    } else {
      document.getElementById('status').textContent = 'cannot read the registry: ' + e.message;
      setTimeout(whoAmI, 1000);
    }
  }
}

start();
