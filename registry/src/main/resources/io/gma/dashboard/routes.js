// The picture of the domains and their routes, drawn as SVG from the registry's domains view: each reachable
// domain (its PC servlet has a URL) posts to each other one; an outbound-only domain (no URL) posts to its via
// domain and long-polls it for what waits there, so the via domain's PC servlet relays its messages.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const BOX_W = 170;
const BOX_H = 50;
const GAP = 40;
const TOP = 70;
const ROW = 130;
// Beyond this many reachable domains, the arcs between every two would hide the picture: a note says it instead.
const MAX_MESH = 8;

function svg(tag, attributes, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) {
    e.setAttribute(k, v);
  }
  if (text !== undefined) {
    e.textContent = text;
  }
  return e;
}

function titled(e, title) {
  e.appendChild(svg('title', {}, title));
  return e;
}

// domains: [[domain, url, via], ...] as the registry answers; answering: domain -> true (its status answered),
// false (it did not), undefined (not asked). Draws into container, replacing what was there.
function drawRoutes(container, domains, answering) {
  const reachable = domains.filter(([, url]) => url).map(([d]) => d);
  const place = {};
  reachable.forEach((d, i) => {
    place[d] = { x: 20 + i * (BOX_W + GAP), y: TOP };
  });
  const outbound = domains.filter(([, url]) => !url);
  // under their via domain, in its order; those whose via is not registered at the end
  outbound.sort((a, b) => ((a[2] in place ? place[a[2]].x : 1e9) - (b[2] in place ? place[b[2]].x : 1e9))
      || a[0].localeCompare(b[0]));
  let next = 20;
  for (const [d, , via] of outbound) {
    const x = Math.max(next, via in place ? place[via].x : next);
    place[d] = { x, y: TOP + ROW };
    next = x + BOX_W + GAP;
  }
  const width = Math.max(400, ...Object.values(place).map(p => p.x + BOX_W + 20));
  const height = TOP + (outbound.length ? ROW : 0) + BOX_H + 20;
  const picture = svg('svg', { width, height, viewBox: '0 0 ' + width + ' ' + height, role: 'img',
    'aria-label': 'domains and their routes' });
  const defs = svg('defs', {});
  const arrow = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: 'auto-start-reverse' });
  arrow.appendChild(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', fill: '#5b6b82' }));
  defs.appendChild(arrow);
  picture.appendChild(defs);

  if (reachable.length <= MAX_MESH) {
    reachable.forEach((a, i) => reachable.slice(i + 1).forEach((b, j) => {
      const x1 = place[a].x + BOX_W / 2;
      const x2 = place[b].x + BOX_W / 2;
      const lift = 18 + 12 * j;
      picture.appendChild(titled(svg('path', { d: 'M ' + x1 + ' ' + TOP + ' C ' + x1 + ' ' + (TOP - lift) + ' '
        + x2 + ' ' + (TOP - lift) + ' ' + x2 + ' ' + TOP, class: 'route post', 'data-from': a, 'data-to': b,
        'marker-start': 'url(#arrow)', 'marker-end': 'url(#arrow)' }), a + ' and ' + b
        + ' post to each other (HTTP)'));
    }));
  } else {
    picture.appendChild(svg('text', { x: 20, y: 20, class: 'note' }, 'each of the ' + reachable.length
      + ' reachable domains posts to each other one (HTTP)'));
  }
  for (const [d, , via] of outbound) {
    if (!(via in place)) {
      continue;
    }
    const x1 = place[d].x + BOX_W / 2;
    const x2 = place[via].x + BOX_W / 2;
    picture.appendChild(titled(svg('line', { x1, y1: TOP + ROW, x2, y2: TOP + BOX_H, class: 'route relay',
      'data-from': d, 'data-to': via, 'marker-end': 'url(#arrow)' }), d + ' is outbound-only: it posts to ' + via
      + ' and polls it; ' + via + ' relays its messages'));
    picture.appendChild(svg('text', { x: (x1 + x2) / 2 + 6, y: TOP + BOX_H + (ROW - BOX_H) / 2, class: 'label' },
      'polls, relayed by ' + via));
  }
  for (const [d, url, via] of domains) {
    const p = place[d];
    const state = answering[d] === true ? ' up' : answering[d] === false ? ' down' : '';
    const g = svg('g', { class: 'domain' + state, 'data-domain': d, transform: 'translate(' + p.x + ',' + p.y
      + ')' });
    g.appendChild(svg('rect', { width: BOX_W, height: BOX_H, rx: 6 }));
    g.appendChild(svg('text', { x: 10, y: 20, class: 'name' }, d));
    g.appendChild(svg('text', { x: 10, y: 38, class: 'detail' }, url ? url.replace(/^https?:\/\//, '')
      : 'outbound-only' + (via && !(via in place) ? ', via ' + via + ' (not registered)' : '')));
    picture.appendChild(titled(g, url ? d + ': PC servlet at ' + url : d + ': outbound-only, via ' + via));
  }
  container.replaceChildren(picture);
}
