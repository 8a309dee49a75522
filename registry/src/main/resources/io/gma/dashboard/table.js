// A monitoring table's page: a numeric column as a line per key, over the last 5 minutes, hour or day. The rows
// come from an archiver's HTTP listener (the registry names it in the attribute "charts"): the history of the
// period first (GET /data/v1/series), then the rows inserted since, as Server-Sent Events (GET /data/v1/live).
'use strict';

const page = {
  servers: [], // the archivers' chart data URLs
  schema: null, // {table, columns: [{name, type, key}]}
  epoch: 0, // a new choice starts a new one: what an older one receives is dropped
  source: null, // the EventSource of the live rows
  chart: null, // the uPlot
  shown: null, // the series keys the chart was made with
  data: null, // {bucket, rangeMs, top, keys: [...], buckets: Map key -> Map time -> [sum, n]}
  pending: false, // a redraw is scheduled
};

function status(text) {
  document.getElementById('status').textContent = text;
}

function note(text) {
  document.getElementById('note').textContent = text || '';
}

function params() {
  return new URLSearchParams(location.search);
}

// The page's choice, from its address: table, column, by, where, equals, range.
function choice() {
  const p = params();
  const c = {};
  for (const k of ['table', 'column', 'by', 'where', 'equals', 'range']) {
    if (p.get(k)) {
      c[k] = p.get(k);
    }
  }
  return c;
}

// A new choice: into the address (so that it can be kept and shared), then the chart again.
function choose(change) {
  const p = params();
  for (const [k, v] of Object.entries(change)) {
    if (v === null || v === '') {
      p.delete(k);
    } else {
      p.set(k, v);
    }
  }
  history.replaceState(null, '', '?' + p.toString());
  load();
}

async function start() {
  await loadConfig();
  const tables = await query('SELECT name FROM tables ORDER BY name');
  const names = tables.rows.map(r => r[0]).filter(n => NAME.test(n));
  document.getElementById('tables').replaceChildren(...names.map(n => {
    const a = el('a', { href: '?table=' + encodeURIComponent(n) }, n);
    a.className = n === choice().table ? 'here' : '';
    return a;
  }));
  if (!names.length) {
    status('no table is declared in the registry yet');
    return;
  }
  if (!choice().table || !names.includes(choice().table)) {
    history.replaceState(null, '', '?table=' + encodeURIComponent(names.includes('host_cpu') ? 'host_cpu'
      : names[0]));
    document.querySelector('#tables a[href="' + location.search + '"]').className = 'here';
  }
  const servers = await query("SELECT DISTINCT value FROM attributes WHERE key = 'charts' ORDER BY value");
  page.servers = servers.rows.map(r => r[0]);
  document.getElementById('server').textContent = page.servers.length ? page.servers.join(', ')
    : 'an archiver';
  await describe(choice().table);
  document.getElementById('choice').addEventListener('submit', e => e.preventDefault());
  document.getElementById('column').addEventListener('change', e => choose({ column: e.target.value }));
  document.getElementById('where').addEventListener('change', e => choose({ where: e.target.value,
    equals: e.target.value ? document.getElementById('equals').value : null }));
  document.getElementById('equals').addEventListener('change', e => choose({ equals: e.target.value }));
  window.addEventListener('resize', () => page.chart && page.chart.setSize(size()));
  load();
}

// The table's columns from the registry, into the choosers.
async function describe(table) {
  const r = await query('SELECT name, type, key_position FROM table_columns WHERE table_name = \'' + table
    + '\' ORDER BY position');
  page.schema = { table, columns: r.rows.map(([name, type, key]) => ({ name, type, key: key !== null })) };
  const c = choice();
  const numeric = page.schema.columns.filter(x => x.type === 'DOUBLE' || x.type === 'INTEGER');
  const column = c.column || (numeric.find(x => !x.key) || numeric[0] || {}).name;
  document.getElementById('title').textContent = table;
  document.getElementById('column').replaceChildren(...numeric.map(x => {
    const o = el('option', { value: x.name }, x.name);
    o.selected = x.name === column;
    return o;
  }));
  const keys = page.schema.columns.filter(x => x.key).map(x => x.name);
  const by = c.by ? c.by.split(',') : keys.filter(k => k !== column);
  document.getElementById('by').replaceChildren(...keys.map(k => {
    const box = el('input', { type: 'checkbox', value: k, id: 'by-' + k });
    box.checked = by.includes(k);
    box.addEventListener('change', () => {
      const chosen = [...document.querySelectorAll('#by input:checked')].map(b => b.value);
      choose({ by: chosen.join(',') });
    });
    return el('label', { class: 'check' }, box, ' ' + k);
  }));
  const where = document.getElementById('where');
  where.replaceChildren(el('option', { value: '' }, '(every row)'), ...page.schema.columns
    .filter(x => x.type === 'STRING' || x.type === 'INTEGER').map(x => {
      const o = el('option', { value: x.name }, x.name);
      o.selected = x.name === c.where;
      return o;
    }));
  document.getElementById('equals').value = c.equals || '';
  rangeButtons(document.getElementById('ranges'), c.range || '5m', name => choose({ range: name }));
}

// The query string of the current choice, for the archiver.
function request() {
  const c = choice();
  const q = new URLSearchParams({ table: c.table, column: c.column || document.getElementById('column').value,
    range: c.range || '5m' });
  for (const k of ['by', 'where', 'equals']) {
    if (c[k]) {
      q.set(k, c[k]);
    }
  }
  return q;
}

// The history of the period from the first archiver that answers, then its live rows.
async function load() {
  const mine = ++page.epoch;
  if (page.source) {
    page.source.close();
    page.source = null;
  }
  note('');
  if (!page.servers.length) {
    status('no archiver serves chart data: run one with an HTTP listener, such as gma archive --tables '
      + choice().table + ' --http 0');
    return;
  }
  const q = request();
  status('reading the history of ' + q.get('table') + '…');
  let answer = null;
  let server = null;
  for (const s of page.servers) {
    try {
      answer = await call(s + '/data/v1/series?' + q.toString(), { cache: 'no-store' });
      server = s;
      break;
    } catch (e) {
      if (e instanceof Refused) {
        if (mine === page.epoch) {
          status(s + ' refused the chart: ' + e.message);
        }
        return;
      }
    }
  }
  if (mine !== page.epoch) {
    return;
  }
  if (!answer) {
    status('no archiver answers: ' + page.servers.join(', '));
    return;
  }
  page.data = { bucket: answer.bucketMillis, rangeMs: answer.rangeMillis, top: answer.top, keys: [],
    buckets: new Map(), server };
  for (const s of answer.series) {
    page.data.keys.push(s.key);
    page.data.buckets.set(s.key, new Map(s.points.map(([t, v]) => [t, [v, 1]])));
  }
  note(answer.note || (answer.keys > answer.series.length ? answer.keys + ' keys; the ' + answer.series.length
    + ' of the highest latest values are drawn' : ''));
  const chart = document.getElementById('chart');
  chart.dataset.range = answer.range;
  redraw(true);
  status('history of ' + answer.table + '.' + answer.column + ' from ' + server + ' (' + answer.rowsRead
    + ' rows); live');
  q.set('after', String(answer.until));
  const source = new EventSource(server + '/data/v1/live?' + q.toString());
  page.source = source;
  source.addEventListener('rows', e => {
    if (mine === page.epoch) {
      add(JSON.parse(e.data));
    }
  });
  source.addEventListener('note', e => {
    if (mine === page.epoch) {
      note(JSON.parse(e.data).message);
    }
  });
  // a stream that ends or is refused is not resumed as it was (its rows since `after` would come twice): the page
  // reads the period again
  source.onerror = () => {
    source.close();
    if (mine === page.epoch) {
      status('the live rows stopped (' + server + ' does not answer, or has its most live charts open); reading'
        + ' again in 5 s');
      setTimeout(() => mine === page.epoch && load(), 5000);
    }
  };
}

// Live rows, [key, ms, value] each, into their buckets.
function add(rows) {
  const d = page.data;
  for (const [key, t, v] of rows) {
    let series = d.buckets.get(key);
    if (!series) {
      if (d.keys.length >= d.top) {
        continue; // the chart draws the top keys only
      }
      series = new Map();
      d.buckets.set(key, series);
      d.keys.push(key);
    }
    const bucket = Math.floor(t / d.bucket) * d.bucket;
    const sum = series.get(bucket);
    if (sum) {
      sum[0] += v;
      sum[1]++;
    } else {
      series.set(bucket, [v, 1]);
    }
  }
  if (!page.pending) {
    page.pending = true;
    setTimeout(() => {
      page.pending = false;
      redraw(false);
    }, 500);
  }
}

function size() {
  const w = document.getElementById('chart').clientWidth || 900;
  return { width: Math.max(300, w - 10), height: 380 };
}

// The buckets as uPlot's data: the times every series shares (s), then each series' means (null: none).
function redraw(fresh) {
  const d = page.data;
  const now = Date.now();
  const oldest = now - d.rangeMs;
  const times = new Set();
  for (const series of d.buckets.values()) {
    for (const t of [...series.keys()]) {
      if (t < oldest) {
        series.delete(t); // out of the period: the browser keeps the period's buckets only
      } else {
        times.add(t);
      }
    }
  }
  const xs = [...times].sort((a, b) => a - b);
  const data = [xs.map(t => t / 1000), ...d.keys.map(k => {
    const series = d.buckets.get(k);
    return xs.map(t => {
      const sum = series.get(t);
      return sum ? sum[0] / sum[1] : null;
    });
  })];
  const chart = document.getElementById('chart');
  chart.dataset.points = String(data.slice(1).reduce((n, ys) => n + ys.filter(y => y !== null).length, 0));
  chart.dataset.series = String(d.keys.length);
  const range = d.rangeMs / 1000;
  if (fresh || !page.chart || page.shown !== d.keys.join('\n')) {
    if (page.chart) {
      page.chart.destroy();
    }
    const column = request().get('column');
    page.chart = new uPlot(Object.assign(size(), {
      scales: { x: { time: true, range: () => [Date.now() / 1000 - range, Date.now() / 1000] } },
      series: [{}, ...d.keys.map((k, i) => ({ label: k, stroke: COLOURS[i % COLOURS.length], width: 1.5,
        spanGaps: true }))], // uPlot marks the points where they are few: a bucket alone shows
      axes: [{}, { label: column, size: 60 }],
    }), data, chart);
    page.shown = d.keys.join('\n');
    window.gmaChart = page.chart; // for the browser test
  } else {
    page.chart.setData(data);
  }
}

start().catch(e => status((e instanceof Refused && e.status === 401 ? 'not signed in: sign in on the overview'
  + ' page first (' : 'cannot read the registry: ') + e.message + (e.status === 401 ? ')' : '')));
