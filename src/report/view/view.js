// memsnap's interactive view: the page's one script, compiled into memsnap and allowed by the
// page's Content-Security-Policy by its hash. It reads the aggregated data memsnap wrote into
// <script id="memsnap-view-data"> (already small: bands capped, moments precomputed) and adds
// above the static report, which stays as it is for readers without JavaScript:
//   - the active memory timeline: one band per allocation, stacked over events; hover a band
//     for its size, site, category and stack; drag across it to zoom; click to select a moment;
//   - the moment: what is live there by site (#live), its flame graph, the allocator's segments;
//   - a frame search that highlights bands and flame graph boxes;
//   - click-to-zoom on every flame graph of the page.
// window.memsnapView.select(event) selects a moment from a script (the tests use it).
// Every text from the capture goes in through textContent: frame names are untrusted input.
(function () {
  'use strict';

  const source = document.getElementById('memsnap-view-data');
  if (!source) return;
  const data = JSON.parse(source.textContent);
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const CATEGORY_COLORS = {
    parameter: '#8fbcd4', gradient: '#d4a373', autograd_detail: '#e8c39e', optimizer_state: '#b5a1d6',
    temporary: '#d9cdeb', activation: '#f2c14e',
    autocast_cache: '#9ccc8c', compiled_graph: '#e5989b', communication: '#7fc8c0', workspace: '#c9c27a',
    unknown: '#c8c8c8',
  };
  const STATE_COLORS = { a: '#d1495b', p: '#f2a541' };
  const STATE_NAMES = { a: 'allocated', p: 'pending free' };
  // The timeline's canvas, in SVG units.
  const W = 1200, H = 380, LEFT = 86, RIGHT = 14, TOP = 26, BOTTOM = 30;
  const PLOT_W = W - LEFT - RIGHT, PLOT_H = H - TOP - BOTTOM;
  const MAX_COLUMNS = 900;

  // ---- small helpers ---------------------------------------------------------------------

  function humanBytes(bytes) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
    if (Math.abs(bytes) < 1024) return bytes + ' B';
    let value = bytes, unit = 0;
    while (Math.abs(value) >= 1024 && unit < 6) { value /= 1024; ++unit; }
    return value.toFixed(2) + ' ' + units[unit];
  }

  function element(tag, attributes, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function svgElement(tag, attributes, text) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function siteLabel(id) { return id < 0 ? 'smaller sites, summed' : data.sites[id][0]; }
  function siteCategory(id) { return id < 0 ? 'unknown' : data.sites[id][1]; }
  function stackFrames(id) { return id < 0 ? [] : data.stacks[id].map((f) => data.frames[f]); }

  // A band's colour: its category's, a little lighter or darker by site so neighbours differ.
  function bandColor(site, category) {
    const base = CATEGORY_COLORS[category] || CATEGORY_COLORS.unknown;
    const shift = site < 0 ? 0 : ((site * 37) % 9) - 4;
    const channel = (i) => Math.max(0, Math.min(255, parseInt(base.substr(1 + 2 * i, 2), 16) + shift * 6));
    return 'rgb(' + channel(0) + ',' + channel(1) + ',' + channel(2) + ')';
  }

  // The last index of sorted `values` at or below `x` (-1 if none).
  function floorIndex(values, x) {
    let lo = 0, hi = values.length - 1, found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (values[mid] <= x) { found = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    return found;
  }

  // ---- page structure --------------------------------------------------------------------

  const style = element('style', {}, [
    '#memsnap-view{border:1px solid #ccc;padding:8px 12px;margin:12px 0}',
    '#memsnap-view .bar{display:flex;gap:10px;align-items:center;font-size:13px;flex-wrap:wrap}',
    '#memsnap-view input{font-family:monospace;width:320px}',
    '#view-timeline{width:100%;height:auto;cursor:crosshair;user-select:none}',
    '#view-timeline .band:hover,#view-timeline .merged:hover{stroke:#000;stroke-width:1}',
    '#view-timeline .match{stroke:#c000c0;stroke-width:1.5}',
    '#view-timeline.searching .band:not(.match),#view-timeline.searching .merged:not(.match){opacity:.25}',
    'svg .box.match rect{stroke:#c000c0;stroke-width:2}',
    'svg.searching .box:not(.match){opacity:.35}',
    'svg .box{cursor:pointer}',
    '#view-tooltip{position:fixed;z-index:10;background:#fff;border:1px solid #888;padding:6px 8px;',
    'font-size:12px;max-width:640px;pointer-events:none;box-shadow:2px 2px 6px rgba(0,0,0,.2)}',
    '#view-tooltip pre{margin:4px 0 0;white-space:pre-wrap}',
    '#live td.n{text-align:right;font-family:monospace}',
    '#memsnap-view .live{max-height:420px;overflow:auto;margin-bottom:8px}',
    '.segments svg{width:100%;height:auto}',
  ].join(''));
  document.head.appendChild(style);

  const root = element('section', { id: 'memsnap-view' });
  root.appendChild(element('h2', {}, 'Active memory timeline'));
  const merging = data.merged.length
    ? ' (the ' + data.bands.length + ' biggest of ' + data.allocations + ' allocations; smaller ones merge into one ' +
      'band per site, on top)'
    : '';
  const help = data.events > 0
    ? 'Each band is an allocation, stacked over trace events' + merging + '. Hover a band for its stack; drag ' +
      'across the chart to zoom in (double-click: all events); click to select a moment.'
    : 'The capture holds no trace: only its end state is shown.';
  root.appendChild(element('p', {}, help));
  const bar = element('div', { class: 'bar' });
  bar.appendChild(element('label', { for: 'view-search' }, 'Frames matching'));
  const search = element('input', { id: 'view-search', type: 'search', placeholder: 'regular expression' });
  bar.appendChild(search);
  const searchNote = element('span', { id: 'view-search-note' });
  bar.appendChild(searchNote);
  const allButton = element('button', { id: 'view-all', type: 'button' }, 'All events');
  bar.appendChild(allButton);
  root.appendChild(bar);
  const timeline = svgElement('svg', { id: 'view-timeline', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H });
  if (data.events > 0) root.appendChild(timeline);
  const tooltip = element('div', { id: 'view-tooltip', hidden: '' });
  document.body.appendChild(tooltip);
  const momentTitle = element('h3', { id: 'view-moment' });
  root.appendChild(momentTitle);
  const live = element('table', { id: 'live' });
  const liveBox = element('div', { class: 'live' });
  liveBox.appendChild(live);
  root.appendChild(liveBox);
  const momentFlame = element('div', { id: 'view-moment-flame' });
  root.appendChild(momentFlame);
  root.appendChild(element('h3', {}, 'Allocator state'));
  const segmentsMoment = element('div', { id: 'view-segments-moment', class: 'segments' });
  const segmentsEnd = element('div', { id: 'view-segments-end', class: 'segments' });
  root.appendChild(segmentsMoment);
  root.appendChild(segmentsEnd);
  const heading = document.querySelector('h1');
  if (heading && heading.nextSibling) heading.parentNode.insertBefore(root, heading.nextSibling);
  else document.body.appendChild(root);

  // ---- the timeline ----------------------------------------------------------------------

  const state = { from: 0, to: data.events, moment: null, pattern: null };
  const marks = [];  // [position, kind, label]
  marks.push([data.peak, 'peak', 'peak']);
  for (const at of data.ooms) marks.push([at, 'oom', 'OOM']);
  for (const at of data.snapshots) marks.push([at, 'snapshot', 'snapshot']);

  // Merged bands as dense values over the grid, for lookups by column.
  const merged = data.merged.map(([site, stack, steps]) => {
    const values = new Float64Array(data.grid.length);
    for (let k = 0; k < steps.length; k += 2) {
      const end = k + 2 < steps.length ? steps[k + 2] : data.grid.length;
      values.fill(steps[k + 1], steps[k], end);
    }
    return { site, stack, values };
  });
  const bandFrom = data.bands.map((b) => b[0]);

  // The positions drawn in [from, to]: evenly spaced ones, the marks and the grid in range,
  // and band starts, at most MAX_COLUMNS.
  function columnsOf(from, to) {
    const chosen = new Set([from, to]);
    const even = Math.min(500, to - from);
    for (let k = 0; k <= even; ++k) chosen.add(from + Math.round((k * (to - from)) / Math.max(1, even)));
    for (const [at] of marks) if (at >= from && at <= to) chosen.add(at);
    const extra = [];
    for (const at of data.grid) if (at >= from && at <= to) extra.push(at);
    for (const at of bandFrom) if (at >= from && at <= to) extra.push(at);
    const room = MAX_COLUMNS - chosen.size;
    const step = extra.length > room ? extra.length / Math.max(1, room) : 1;
    for (let k = 0; k < extra.length && room > 0; k += step) chosen.add(extra[Math.floor(k)]);
    return Array.from(chosen).sort((a, b) => a - b);
  }

  // Band layout at each column: bottom to top, allocations in the order made, then merged bands. Per band, [base, top] at each column (NaN where it is not live), made when first live.
  function layout(columns) {
    const bandTops = new Array(data.bands.length).fill(null);
    const mergedTops = new Array(merged.length).fill(null);
    // A band's [base, top] from its first column to its last: {first, t}.
    const fresh = (first, last) => ({ first, t: new Float64Array((last - first + 1) * 2).fill(NaN) });
    const totals = new Float64Array(columns.length);
    let next = 0;
    let active = [];
    for (let c = 0; c < columns.length; ++c) {
      const at = columns[c];
      let ended = false;
      while (next < data.bands.length && data.bands[next][0] <= at) active.push(next++);
      for (const i of active) if (data.bands[i][1] < at) { ended = true; break; }
      if (ended) active = active.filter((i) => data.bands[i][1] >= at);
      let base = 0;
      for (const i of active) {
        const band = bandTops[i] || (bandTops[i] = fresh(c, floorIndex(columns, data.bands[i][1])));
        const k = 2 * (c - band.first);
        band.t[k] = base;
        band.t[k + 1] = base += data.bands[i][2];
      }
      // Merged bands on top: their sums change at every point, and would shift every band above.
      const g = floorIndex(data.grid, at);
      for (let m = 0; g >= 0 && m < merged.length; ++m) {
        const bytes = merged[m].values[g];
        if (bytes <= 0) continue;
        const band = mergedTops[m] || (mergedTops[m] = fresh(0, columns.length - 1));
        band.t[2 * c] = base;
        band.t[2 * c + 1] = base += bytes;
      }
      totals[c] = base;
    }
    return { bandTops, mergedTops, totals };
  }

  function xOf(at) { return LEFT + ((at - state.from) / Math.max(1, state.to - state.from)) * PLOT_W; }
  function atOf(x) {
    const share = Math.max(0, Math.min(1, (x - LEFT) / PLOT_W));
    return Math.round(state.from + share * (state.to - state.from));
  }

  // A band's outline as steps: over column c it spans x[c] to x[c + 1]; one closed piece per
  // run of columns where it is live, with a corner only where its base or top moves.
  function bandPath(band, xs, scale) {
    const px = (x) => Math.round(x * 10) / 10;
    const py = (bytes) => Math.round((TOP + PLOT_H - bytes * scale) * 2) / 2;  // half pixels
    const t = band.t, n = t.length / 2, x = (k) => px(xs[band.first + k]);
    let d = '';
    for (let c = 0; c < n;) {
      if (Number.isNaN(t[2 * c])) { ++c; continue; }
      let e = c;
      while (e < n && !Number.isNaN(t[2 * e])) ++e;
      let y = py(t[2 * c + 1]);
      d += 'M' + x(c) + ',' + y;
      for (let k = c + 1; k < e; ++k) {
        const next = py(t[2 * k + 1]);
        if (next !== y) d += 'H' + x(k) + 'V' + (y = next);
      }
      y = py(t[2 * (e - 1)]);
      d += 'H' + x(e) + 'V' + y;
      for (let k = e - 1; k > c; --k) {
        const next = py(t[2 * k - 2]);
        if (next !== y) d += 'H' + x(k) + 'V' + (y = next);
      }
      d += 'H' + x(c) + 'Z';
      c = e;
    }
    return d;
  }

  function drawAxes(maxBytes) {
    const axis = svgElement('g', { class: 'axes', 'font-size': '11', 'font-family': 'monospace' });
    axis.appendChild(svgElement('line', { x1: LEFT, y1: TOP + PLOT_H, x2: LEFT + PLOT_W, y2: TOP + PLOT_H, stroke: '#444' }));
    axis.appendChild(svgElement('line', { x1: LEFT, y1: TOP, x2: LEFT, y2: TOP + PLOT_H, stroke: '#444' }));
    for (let k = 0; k <= 4; ++k) {
      const bytes = (maxBytes * k) / 4, y = TOP + PLOT_H - (PLOT_H * k) / 4;
      axis.appendChild(svgElement('text', { x: LEFT - 6, y: y + 4, 'text-anchor': 'end' }, humanBytes(Math.round(bytes))));
      axis.appendChild(svgElement('line', { x1: LEFT, y1: y, x2: LEFT + PLOT_W, y2: y, stroke: '#eee' }));
      const at = Math.round(state.from + ((state.to - state.from) * k) / 4);
      const anchor = k === 0 ? 'start' : k === 4 ? 'end' : 'middle';
      axis.appendChild(svgElement('text', { class: 'tick', x: xOf(at), y: TOP + PLOT_H + 16, 'text-anchor': anchor },
        'event ' + at));
    }
    return axis;
  }

  function drawMarks() {
    const group = svgElement('g', { class: 'marks', 'font-size': '11', 'font-family': 'monospace' });
    const visible = (at) => at >= state.from && at <= state.to;
    for (const at of data.iterations) {
      if (!visible(at)) continue;
      group.appendChild(svgElement('line', { class: 'mark mark-iteration', x1: xOf(at), x2: xOf(at), y1: TOP,
        y2: TOP + PLOT_H, stroke: '#999', 'stroke-dasharray': '2,4' }));
    }
    const colors = { peak: '#d1495b', oom: '#8b0000', snapshot: '#3b6fb6' };
    for (const [at, kind, label] of marks) {
      if (!visible(at)) continue;
      const line = svgElement('line', { class: 'mark mark-' + kind, x1: xOf(at), x2: xOf(at), y1: TOP - 4,
        y2: TOP + PLOT_H, stroke: colors[kind], 'stroke-width': kind === 'peak' ? 2 : 1.5 });
      line.appendChild(svgElement('title', {}, label + ' at event ' + at));
      group.appendChild(line);
      group.appendChild(svgElement('text', { x: xOf(at) + 3, y: TOP - 8, fill: colors[kind] }, label));
    }
    return group;
  }

  function drawTimeline() {
    if (data.events === 0) return;
    const columns = columnsOf(state.from, state.to);
    const { bandTops, mergedTops, totals } = layout(columns);
    let maxBytes = 1;
    for (const t of totals) maxBytes = Math.max(maxBytes, t);
    const scale = PLOT_H / maxBytes;
    const xs = columns.map(xOf);
    xs.push(LEFT + PLOT_W);
    while (timeline.firstChild) timeline.removeChild(timeline.firstChild);
    timeline.setAttribute('data-from', state.from);
    timeline.setAttribute('data-to', state.to);
    timeline.appendChild(drawAxes(maxBytes));
    const bands = svgElement('g', { class: 'bands' });
    const addPath = (t, index, isBand) => {
      if (!t) return;
      const site = isBand ? data.bands[index][3] : merged[index].site;
      const path = svgElement('path', { d: bandPath(t, xs, scale), class: isBand ? 'band' : 'merged',
        fill: bandColor(site, siteCategory(site)) });
      path.setAttribute(isBand ? 'data-band' : 'data-merged', index);
      bands.appendChild(path);
    };
    mergedTops.forEach((t, m) => addPath(t, m, false));
    bandTops.forEach((t, i) => addPath(t, i, true));
    timeline.appendChild(bands);
    timeline.appendChild(drawMarks());
    if (state.moment) {
      const at = state.moment.at;
      if (at >= state.from && at <= state.to)
        timeline.appendChild(svgElement('line', { class: 'moment', x1: xOf(at), x2: xOf(at), y1: TOP, y2: TOP + PLOT_H,
          stroke: '#000', 'stroke-width': 1.5, 'stroke-dasharray': '5,3' }));
    }
    selection = svgElement('rect', { class: 'selection', y: TOP, height: PLOT_H, width: 0, fill: 'rgba(59,111,182,.2)' });
    timeline.appendChild(selection);
    highlight();
  }

  // ---- hover -----------------------------------------------------------------------------

  function describeBand(target, at) {
    if (target.hasAttribute('data-band')) {
      const [from, to, bytes, site, stack] = data.bands[Number(target.getAttribute('data-band'))];
      const made = from === 0 ? 'made before the trace' : 'made at event ' + (from - 1);
      return { title: humanBytes(bytes) + ' (' + bytes + ' B), one allocation', site, stack,
        note: made + ', ' + (to >= data.events ? 'live at the end' : 'freed at event ' + to) };
    }
    const m = merged[Number(target.getAttribute('data-merged'))];
    const g = floorIndex(data.grid, at);
    const bytes = g >= 0 ? m.values[g] : 0;
    return { title: humanBytes(bytes) + ' (' + bytes + ' B) of smaller allocations, summed', site: m.site,
      stack: m.stack, note: 'at event ' + at + '; the stack is the site\'s biggest' };
  }

  function showTooltip(event, info) {
    while (tooltip.firstChild) tooltip.removeChild(tooltip.firstChild);
    tooltip.appendChild(element('b', {}, info.title));
    tooltip.appendChild(element('div', {}, 'site: ' + siteLabel(info.site)));
    tooltip.appendChild(element('div', {}, 'category: ' + siteCategory(info.site)));
    tooltip.appendChild(element('div', {}, info.note));
    const frames = stackFrames(info.stack).slice().reverse();
    tooltip.appendChild(element('pre', { class: 'stack' }, frames.length ? frames.join('\n') : '(no stack recorded)'));
    tooltip.hidden = false;
    const x = Math.min(event.clientX + 14, window.innerWidth - 660);
    tooltip.style.left = Math.max(0, x) + 'px';
    tooltip.style.top = event.clientY + 14 + 'px';
  }

  function svgX(event) {
    const box = timeline.getBoundingClientRect();
    return ((event.clientX - box.left) / box.width) * W;
  }

  timeline.addEventListener('mousemove', (event) => {
    if (drag) {
      const x = Math.max(LEFT, Math.min(LEFT + PLOT_W, svgX(event)));
      selection.setAttribute('x', Math.min(drag.x, x));
      selection.setAttribute('width', Math.abs(x - drag.x));
      return;
    }
    const target = event.target;
    if (target.hasAttribute && (target.hasAttribute('data-band') || target.hasAttribute('data-merged')))
      showTooltip(event, describeBand(target, atOf(svgX(event))));
    else tooltip.hidden = true;
  });
  timeline.addEventListener('mouseleave', () => { tooltip.hidden = true; });

  // ---- zoom by dragging, moments by clicking ----------------------------------------------

  let drag = null;
  let selection = null;
  timeline.addEventListener('mousedown', (event) => {
    event.preventDefault();
    drag = { x: Math.max(LEFT, Math.min(LEFT + PLOT_W, svgX(event))) };
  });
  window.addEventListener('mouseup', (event) => {
    if (!drag) return;
    const x = Math.max(LEFT, Math.min(LEFT + PLOT_W, svgX(event)));
    const start = drag.x;
    drag = null;
    if (Math.abs(x - start) < 4) {
      selectAt(atOf(x));
      return;
    }
    const a = atOf(Math.min(start, x)), b = atOf(Math.max(start, x));
    if (b > a) zoomTo(a, b);
    else drawTimeline();
  });
  timeline.addEventListener('dblclick', () => zoomTo(0, data.events));
  allButton.addEventListener('click', () => zoomTo(0, data.events));

  function zoomTo(from, to) {
    state.from = from;
    state.to = to;
    drawTimeline();
  }

  // ---- the moment ------------------------------------------------------------------------

  const momentAts = data.moments.map((m) => m.at);

  // The moment at or before `at` (the first one if none is).
  function momentAt(at) { return data.moments[Math.max(0, floorIndex(momentAts, at))]; }

  function selectAt(at) {
    state.moment = momentAt(at);
    drawTimeline();
    drawMoment(state.moment);
  }

  function liveRow(cells, bytes) {
    const tr = element('tr', { 'data-bytes': bytes });
    cells.forEach((text, k) => tr.appendChild(element('td', k >= 2 ? { class: 'n' } : {}, text)));
    return tr;
  }

  function drawMoment(m) {
    const where = m.at >= data.events ? 'at the end' : 'before event ' + m.at;
    momentTitle.textContent = 'Live ' + where + ' (' + m.kind + '): ' + humanBytes(m.allocated) + ' allocated, ' +
      humanBytes(m.reserved) + ' reserved';
    while (live.firstChild) live.removeChild(live.firstChild);
    const head = element('tr');
    for (const name of ['site', 'category', 'bytes', 'allocations']) head.appendChild(element('th', {}, name));
    live.appendChild(head);
    for (let k = 0; k < m.sites.length; k += 3) {
      const [id, bytes, count] = m.sites.slice(k, k + 3);
      live.appendChild(liveRow([siteLabel(id), siteCategory(id), humanBytes(bytes), String(count)], bytes));
    }
    if (m.other_sites[1] > 0)
      live.appendChild(liveRow([m.other_sites[1] + ' other sites', '', humanBytes(m.other_sites[0]), ''], m.other_sites[0]));
    if (m.unattributed !== 0)
      live.appendChild(liveRow(['not attributed (the replay and the snapshot disagree)', '', humanBytes(m.unattributed),
        ''], m.unattributed));
    drawMomentFlame(m);
    drawSegments(segmentsMoment, m, 'Segments ' + where);
  }

  // ---- flame graphs ----------------------------------------------------------------------

  const FLAME_LEFT = 10, FLAME_SPAN = 1180, FLAME_TOP = 56, FLAME_ROW = 17;

  // The moment's stacks as an icicle graph, drawn as memsnap's static flame graphs are.
  function drawMomentFlame(m) {
    const tree = { name: 'all', bytes: 0, children: new Map() };
    const add = (frames, bytes) => {
      let node = tree;
      tree.bytes += bytes;
      for (const name of frames) {
        let child = node.children.get(name);
        if (!child) { child = { name, bytes: 0, children: new Map() }; node.children.set(name, child); }
        child.bytes += bytes;
        node = child;
      }
    };
    for (let k = 0; k < m.stacks.length; k += 3) {
      const frames = stackFrames(m.stacks[k]);
      add(frames.length ? frames : ['<no stack>'], m.stacks[k + 1]);
    }
    if (m.other_stacks > 0) add(['[other stacks, summed]'], m.other_stacks);
    let depth = 0;
    const boxes = [];
    const place = (node, x, width, level) => {
      if (width < 0.3) return;
      depth = Math.max(depth, level);
      boxes.push({ node, x, width, level });
      let at = x;
      const children = Array.from(node.children.values()).sort((a, b) => b.bytes - a.bytes);
      for (const child of children) {
        const w = tree.bytes ? (child.bytes / tree.bytes) * FLAME_SPAN : 0;
        place(child, at, w, level + 1);
        at += w;
      }
    };
    place(tree, FLAME_LEFT, FLAME_SPAN, 0);
    const height = FLAME_TOP + (depth + 1) * FLAME_ROW + 10;
    const svg = svgElement('svg', { class: 'flame', viewBox: '0 0 1200 ' + height, width: 1200, height,
      'font-family': 'monospace', 'font-size': '11' });
    svg.appendChild(svgElement('text', { x: 10, y: 20, 'font-size': '15', 'font-weight': 'bold' },
      'Live at this moment, by stack'));
    svg.appendChild(svgElement('text', { x: 10, y: 38, fill: '#555' }, 'click a box to zoom in, the top box to zoom out'));
    for (const b of boxes) {
      const share = tree.bytes ? ((100 * b.node.bytes) / tree.bytes).toFixed(2) : '0.00';
      const g = svgElement('g', {});
      g.appendChild(svgElement('title', {}, b.node.name + ': ' + humanBytes(b.node.bytes) + ' (' + b.node.bytes + ' B), ' +
        share + '%'));
      g.appendChild(svgElement('rect', { x: b.x.toFixed(2), y: FLAME_TOP + b.level * FLAME_ROW, width: b.width.toFixed(2),
        height: FLAME_ROW - 1, fill: '#f2c14e', stroke: '#ffffff', 'stroke-width': '0.5' }));
      g.appendChild(svgElement('text', { x: (b.x + 3).toFixed(2), y: FLAME_TOP + b.level * FLAME_ROW + 12 }));
      svg.appendChild(g);
    }
    while (momentFlame.firstChild) momentFlame.removeChild(momentFlame.firstChild);
    momentFlame.appendChild(svg);
    const previous = flames.findIndex((f) => f.moment);
    if (previous >= 0) flames.splice(previous, 1);
    const entry = zoomable(svg);
    if (!entry) return;
    entry.moment = true;
    for (const b of entry.boxes) labelBox(b, b.x, b.width);
  }

  // A flame graph's boxes: every <g> holding a <title> and a box-high <rect>.
  function flameBoxes(svg) {
    const out = [];
    for (const rect of svg.querySelectorAll('g > rect[height="' + (FLAME_ROW - 1) + '"]')) {
      const g = rect.parentNode;
      const title = g.querySelector('title');
      if (!title) continue;
      const text = title.textContent;
      const cut = text.lastIndexOf(': ');
      const x = Number(rect.getAttribute('x')), width = Number(rect.getAttribute('width'));
      const level = Math.round((Number(rect.getAttribute('y')) - FLAME_TOP) / FLAME_ROW);
      out.push({ g, rect, label: g.querySelector('text'), name: cut > 0 ? text.substr(0, cut) : text, x, width, level });
    }
    return out;
  }

  function labelBox(b, x, width) {
    if (!b.label) return;
    b.label.setAttribute('x', (x + 3).toFixed(2));
    const fits = Math.floor((width - 6) / 6.6);
    b.label.textContent = fits >= 3 ? (b.name.length > fits ? b.name.substr(0, fits - 2) + '..' : b.name) : '';
  }

  // Click a box: it and what it holds fill the width; its callers stay above it, full width.
  function zoomable(svg) {
    const boxes = flameBoxes(svg);
    if (!boxes.length) return null;
    svg.classList.add('flame');
    for (const b of boxes) b.g.classList.add('box');  // labels stay as drawn until a zoom
    const zoom = (target) => {
      const eps = 0.01;
      for (const b of boxes) {
        let x = b.x, width = b.width, shown = true;
        if (target && target.level > 0) {
          const inside = b.level >= target.level && b.x >= target.x - eps && b.x + b.width <= target.x + target.width + eps;
          const above = b.level < target.level && b.x <= target.x + eps && b.x + b.width >= target.x + target.width - eps;
          shown = inside || above;
          if (inside) {
            x = FLAME_LEFT + ((b.x - target.x) / target.width) * FLAME_SPAN;
            width = (b.width / target.width) * FLAME_SPAN;
          } else if (above) {
            x = FLAME_LEFT;
            width = FLAME_SPAN;
          }
        }
        b.g.style.display = shown ? '' : 'none';
        b.rect.setAttribute('x', x.toFixed(2));
        b.rect.setAttribute('width', width.toFixed(2));
        labelBox(b, x, width);
      }
      svg.setAttribute('data-zoomed', target && target.level > 0 ? target.name : '');
    };
    for (const b of boxes) b.g.addEventListener('click', () => zoom(b));
    const entry = { svg, boxes, moment: false };
    flames.push(entry);
    highlight();
    return entry;
  }

  // ---- allocator state -------------------------------------------------------------------

  function drawSegments(container, m, title) {
    while (container.firstChild) container.removeChild(container.firstChild);
    const shown = m.segments.length;
    container.appendChild(element('p', {}, title + ': ' + shown + ' of ' + m.segments_total +
      ' segments drawn, the biggest first (red: allocated, orange: pending free, grey: cached free).'));
    if (!shown) return;
    const biggest = Math.max(...m.segments.map((s) => s[1]));
    const row = 18, width = 1000;
    const svg = svgElement('svg', { viewBox: '0 0 1200 ' + (shown * row + 4), width: 1200, height: shown * row + 4,
      'font-family': 'monospace', 'font-size': '10' });
    m.segments.forEach(([address, size, stream, blocks], k) => {
      const y = 2 + k * row, scale = width / biggest;
      const g = svgElement('g', { class: 'segment' });
      g.appendChild(svgElement('title', {}, 'segment 0x' + address.toString(16) + ', ' + humanBytes(size) +
        ', stream ' + stream));
      g.appendChild(svgElement('rect', { x: 0, y, width: Math.max(1, size * scale), height: row - 4, fill: '#dddddd' }));
      const unit = data.block_unit;
      for (let b = 0; b < blocks.length; b += 3) {
        const offset = blocks[b] * unit, bytes = blocks[b + 1] * unit;
        const block = svgElement('rect', { class: 'block', x: offset * scale, y, width: Math.max(0.5, bytes * scale),
          height: row - 4, fill: STATE_COLORS[blocks[b + 2]] });
        block.appendChild(svgElement('title', {}, STATE_NAMES[blocks[b + 2]] + ' block at +' + offset + ', ' +
          humanBytes(bytes)));
        g.appendChild(block);
      }
      g.appendChild(svgElement('text', { x: 1010, y: y + 11 }, humanBytes(size)));
      svg.appendChild(g);
    });
    container.appendChild(svg);
  }

  // ---- search ----------------------------------------------------------------------------

  const flames = [];

  function highlight() {
    const pattern = state.pattern;
    let bands = 0, boxes = 0;
    const stackMatches = new Map();
    const matchesStack = (id) => {
      if (id < 0 || !pattern) return false;
      if (!stackMatches.has(id)) stackMatches.set(id, stackFrames(id).some((f) => pattern.test(f)));
      return stackMatches.get(id);
    };
    timeline.classList.toggle('searching', !!pattern);
    for (const path of timeline.querySelectorAll('.band, .merged')) {
      const stack = path.classList.contains('band') ? data.bands[Number(path.getAttribute('data-band'))][4]
        : merged[Number(path.getAttribute('data-merged'))].stack;
      const hit = matchesStack(stack);
      path.classList.toggle('match', hit);
      bands += hit;
    }
    for (const f of flames) {
      f.svg.classList.toggle('searching', !!pattern);
      for (const b of f.boxes) {
        const hit = !!pattern && pattern.test(b.name);
        b.g.classList.toggle('match', hit);
        boxes += hit;
      }
    }
    searchNote.textContent = pattern ? bands + ' bands and ' + boxes + ' flame graph boxes match' : '';
  }

  search.addEventListener('input', () => {
    try {
      state.pattern = search.value ? new RegExp(search.value) : null;
      search.setCustomValidity('');
    } catch (error) {
      state.pattern = null;
      search.setCustomValidity('not a regular expression');
    }
    highlight();
  });

  // ---- start -----------------------------------------------------------------------------

  const end = data.moments[data.moments.length - 1];
  drawSegments(segmentsEnd, end, 'Segments at the end');
  for (const svg of document.querySelectorAll('svg')) if (!root.contains(svg)) zoomable(svg);
  selectAt(data.peak);

  window.memsnapView = {
    // Selects the moment at or before `event` (an `event` index of `trace --format json`);
    // resolves once the page shows it.
    select(event) {
      selectAt(Number(event));
      return new Promise((resolve) => requestAnimationFrame(() => resolve(state.moment.at)));
    },
    moment() { return state.moment; },
    drawnAt: performance.now(),
  };
  document.documentElement.setAttribute('data-view', 'drawn');
})();
