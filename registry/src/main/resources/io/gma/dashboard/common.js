// What the dashboard's pages share: the configuration the server gives, calls to the registry, and small helpers.
'use strict';

const gma = {
  config: null, // {query, session, pcs}: where to post SQL, where to sign in (null: open), the PC servlets' samples
};

// A refusal, with the HTTP status and the sentence of the answer.
class Refused extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The JSON answer of a call. A refusal is thrown with its sentence: the registry's is JSON, a PC servlet's or an
// archiver's plain text (such as a relay's "FORBIDDEN the registry relay is off while security is on...").
async function call(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch (notJson) {
    body = null;
  }
  if (!r.ok) {
    throw new Refused(r.status, (body && body.message) || text.trim() || ('HTTP ' + r.status));
  }
  if (body === null) {
    throw new Error('the answer (HTTP ' + r.status + ') is not JSON');
  }
  return body;
}

// The registry's answer to one query (through the page's server: the registry, or a PC servlet's relay).
async function query(sql) {
  const body = await call(gma.config.query, { method: 'POST', headers: { 'Content-Type': 'text/plain' },
    body: sql });
  if (!Array.isArray(body.rows)) {
    throw new Error('the answer is not a query result');
  }
  return body;
}

async function loadConfig() {
  gma.config = await call('config.json', { cache: 'no-store' });
  return gma.config;
}

// An element with attributes and children (strings become text).
function el(tag, attributes, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes || {})) {
    e.setAttribute(k, v);
  }
  for (const c of children) {
    e.append(c);
  }
  return e;
}

// A table or column name as the registry declares them: only these are put into a query's text.
const NAME = /^[a-z][a-z0-9_]{0,63}$/;

// The colours of series, in order (uPlot draws what it is given).
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf', '#393b79', '#ad494a', '#637939', '#8c6d31', '#843c39', '#7b4173', '#3182bd', '#e6550d',
  '#31a354', '#756bb1'];

// The three periods a chart shows, as the servers name them.
const RANGES = [['5m', 'last 5 minutes', 300], ['1h', 'last hour', 3600], ['1d', 'last day', 86400]];

// Buttons for the periods, calling choose(name) on a click; the one chosen is marked.
function rangeButtons(container, chosen, choose) {
  container.replaceChildren(...RANGES.map(([name, label]) => {
    const b = el('button', { type: 'button', 'data-range': name }, label);
    b.className = name === chosen ? 'chosen' : '';
    b.addEventListener('click', () => {
      for (const other of container.querySelectorAll('button')) {
        other.className = other === b ? 'chosen' : '';
      }
      choose(name);
    });
    return b;
  }));
}
