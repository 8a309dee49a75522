// Each PC servlet's messages per second in and out and its queue depths over time, from the samples the registry
// keeps (GET /registry/v1/pcs?range=5m|1h|1d), read again every sampling interval.
'use strict';

const pcs = {
  range: '5m',
  charts: new Map(), // domain -> uPlot
  epoch: 0,
};

function say(text) {
  document.getElementById('status').textContent = text;
}

function chartSize() {
  const w = document.getElementById('pcs').clientWidth || 900;
  return { width: Math.max(300, w - 10), height: 240 };
}

function rangeSeconds() {
  return RANGES.find(([name]) => name === pcs.range)[2];
}

// A chart of a PC servlet: rates on the left axis, queued messages on the right.
function chartOf(domain) {
  let chart = pcs.charts.get(domain);
  if (chart) {
    return chart;
  }
  const box = el('div', { class: 'pc', 'data-domain': domain }, el('h3', {}, domain), el('p', { class: 'error' }),
    el('div', { class: 'chart' }));
  document.getElementById('pcs').appendChild(box);
  chart = new uPlot(Object.assign(chartSize(), {
    scales: { x: { time: true, range: () => [Date.now() / 1000 - rangeSeconds(), Date.now() / 1000] },
      q: { range: (u, min, max) => [0, Math.max(10, max)] } },
    series: [{},
      { label: 'in /s', stroke: COLOURS[0], width: 1.5, spanGaps: false },
      { label: 'out /s', stroke: COLOURS[2], width: 1.5, spanGaps: false },
      { label: 'queued messages', stroke: COLOURS[1], width: 1, scale: 'q' }],
    axes: [{}, { label: 'messages/s', size: 60 }, { side: 1, scale: 'q', label: 'queued', size: 60,
      grid: { show: false } }],
  }), [[], [], [], []], box.querySelector('.chart'));
  pcs.charts.set(domain, chart);
  return chart;
}

async function refresh(mine) {
  const answer = await call(gma.config.pcs + '?range=' + pcs.range, { cache: 'no-store' });
  if (mine !== pcs.epoch) {
    return answer;
  }
  document.getElementById('interval').textContent = String(answer.intervalMillis / 1000);
  document.getElementById('kept').textContent = (answer.keptSeconds / 3600).toFixed(1) + ' hours';
  for (const pc of answer.pcs) {
    const chart = chartOf(pc.domain);
    chart.setData([pc.at.map(t => t / 1000), pc.in, pc.out, pc.queuedMessages]);
    const box = document.querySelector('.pc[data-domain="' + pc.domain + '"]');
    box.dataset.points = String(pc.at.length);
    box.querySelector('.error').textContent = pc.error ? 'last sample: ' + pc.error : '';
  }
  say(answer.pcs.length + ' PC servlets, updated ' + new Date().toLocaleTimeString());
  return answer;
}

async function tick(mine) {
  if (mine !== pcs.epoch) {
    return;
  }
  let every = 2000;
  try {
    every = Math.max(1000, (await refresh(mine)).intervalMillis);
  } catch (e) {
    say((e instanceof Refused && e.status === 401 ? 'not signed in: sign in on the overview page first ('
      : 'cannot read the samples: ') + e.message + (e.status === 401 ? ')' : ''));
  }
  setTimeout(() => tick(mine), every);
}

async function start() {
  await loadConfig();
  if (!gma.config.pcs) {
    say('this server keeps no samples of the PC servlets: the registry\'s dashboard charts them');
    return;
  }
  rangeButtons(document.getElementById('ranges'), pcs.range, name => {
    pcs.range = name;
    tick(++pcs.epoch);
  });
  window.addEventListener('resize', () => pcs.charts.forEach(c => c.setSize(chartSize())));
  tick(pcs.epoch);
}

start().catch(e => say('cannot start: ' + e.message));
