// Written by scripts/web-assets from Sources/WebUI/Assets-src/: do not edit.

/// The page's files (Sources/WebUI/Assets-src/), byte for byte.
public enum WebAssets {
    /// app.css
    static let appCss = #"""
/* The bridge's page: plain CSS, no web fonts, no images from elsewhere; one column on a phone. */
:root {
  --bg: #f6f7f9; --fg: #1c1f24; --muted: #5f6670; --line: #d9dde3; --card: #fff;
  --accent: #1f6feb; --ok: #1a7f37; --bad: #b42318; --owner: #fff4cc;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 15px;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #111418; --fg: #e6e8eb; --muted: #9aa3ad; --line: #2c323a; --card: #181c21;
          --accent: #58a6ff; --ok: #3fb950; --bad: #f85149; --owner: #3a3000; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
a { color: var(--accent); }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1rem;
       background: var(--card); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 1; }
.brand { font-weight: 600; }
.top nav { display: flex; gap: .25rem; flex-wrap: wrap; }
.top nav a { padding: .35rem .7rem; border-radius: 6px; text-decoration: none; }
.top nav a.active { background: var(--accent); color: #fff; }
.live { margin-left: auto; font-size: .85rem; color: var(--muted); }
.live::before { content: "●"; margin-right: .3rem; color: var(--muted); }
.live[data-state="live"]::before { color: var(--ok); }
.live[data-state="offline"]::before { color: var(--bad); }
main { padding: 1rem; max-width: 1400px; margin: 0 auto; }
h1 { font-size: 1.35rem; margin: .2rem 0 .8rem; word-break: break-all; }
h2 { font-size: 1.05rem; margin: 1.2rem 0 .5rem; }
.scroll { overflow-x: auto; }
table.grid { border-collapse: collapse; width: 100%; background: var(--card); }
.grid th, .grid td { border-bottom: 1px solid var(--line); padding: .4rem .5rem; text-align: left; vertical-align: top; }
.grid th { font-weight: 600; color: var(--muted); font-size: .85rem; white-space: nowrap; }
.values { max-width: 32rem; }
.value { display: inline-block; margin: 0 .6rem .15rem 0; font-family: ui-monospace, monospace; font-size: .85rem;
         word-break: break-all; }
.raw { font-family: ui-monospace, monospace; font-size: .85rem; word-break: break-all; }
.ok { color: var(--ok); }
.bad { color: var(--bad); }
td.owner { background: var(--owner); font-weight: 600; }
.empty, .note { color: var(--muted); }
.row { display: flex; flex-wrap: wrap; align-items: center; gap: .4rem; margin: .4rem 0; }
.row label { min-width: 6rem; color: var(--muted); }
.actions { display: flex; flex-wrap: wrap; gap: .3rem; }
input, select, button { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 6px;
                        background: var(--card); color: var(--fg); min-height: 2.2rem; }
button { cursor: pointer; background: var(--accent); border-color: var(--accent); color: #fff; }
button:disabled { opacity: .5; cursor: default; }
button.danger { background: var(--bad); border-color: var(--bad); }
.result { font-size: .9rem; word-break: break-word; }
.result[data-status="ok"] { color: var(--ok); }
.result[data-status="error"] { color: var(--bad); }
.result[data-status="pending"], .result[data-status="scanning"] { color: var(--muted); }
dl.info { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
dl.info dt { color: var(--muted); }
dl.info dd { margin: 0; word-break: break-all; }
.badge { display: inline-block; padding: .1rem .5rem; border-radius: 999px; background: var(--owner); font-size: .8rem; }
section.add, section.runtime { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .5rem 1rem;
                               margin-top: 1rem; }
.other .label { color: var(--muted); }
[hidden] { display: none !important; }
.login-box { max-width: 22rem; margin: 10vh auto; background: var(--card); padding: 1.5rem; border-radius: 8px;
             border: 1px solid var(--line); }
.login-box form { display: flex; flex-direction: column; gap: .6rem; }
.error { color: var(--bad); }

/* A phone: tables become cards, one field a line, labelled. */
@media (max-width: 700px) {
  main { padding: .6rem; }
  .grid thead { display: none; }
  .grid, .grid tbody, .grid tr, .grid td { display: block; width: 100%; }
  .grid tr { border: 1px solid var(--line); border-radius: 8px; margin-bottom: .6rem; padding: .3rem; background: var(--card); }
  .grid td { border: 0; padding: .2rem .4rem; }
  .grid td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .85rem; }
  table.radios { display: table; }
  table.radios thead { display: table-header-group; }
  table.radios tr { display: table-row; }
  table.radios td, table.radios th { display: table-cell; width: auto; }
  .live { margin-left: 0; }
}

"""#

    /// app.js
    static let appJs = #"""
// The bridge's page (SPEC §14): the state from /api/snapshot and /api/events, the hash router, helpers.
// Every string from MQTT is untrusted: the DOM is built with createElement/textContent/setAttribute only.
'use strict';

const BMB = {
  base: 'ble',
  cluster: false,
  topics: new Map(),   // topic -> payload text
  seen: new Map(),     // topic -> Date.now() when a live message came
  views: {},
  current: null,
  dirty: false,
};
window.BMB = BMB;

// ---- DOM helpers -------------------------------------------------------------------------------

const SAFE_ATTRIBUTES = new Set(['class', 'id', 'href', 'type', 'name', 'value', 'placeholder', 'min', 'max',
  'step', 'for', 'title', 'colspan', 'disabled', 'readonly', 'autocomplete', 'inputmode', 'size', 'scope', 'hidden']);

// el('tr', {'data-testid': 'device-row'}, 'text', child...): attributes only from the safe list or data-*/aria-*.
BMB.el = function (tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (!(SAFE_ATTRIBUTES.has(key) || key.startsWith('data-') || key.startsWith('aria-'))) continue;
    node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) BMB.append(node, child);
  return node;
};

BMB.append = function (node, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) { for (const c of child) BMB.append(node, c); return; }
  node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
};

BMB.text = function (node, value) {
  const text = value === null || value === undefined ? '' : String(value);
  if (node.textContent !== text) node.textContent = text;
};

BMB.clear = function (node) { while (node.firstChild) node.removeChild(node.firstChild); };

BMB.link = function (segment, label, testid) {
  return BMB.el('a', { href: '#/device/' + encodeURIComponent(segment), 'data-testid': testid }, label);
};

// Keeps one row per key in `body`: creates missing rows, updates all, removes the others, keeps the order.
BMB.syncRows = function (body, items, key, create, update) {
  const existing = new Map();
  for (const row of Array.from(body.children)) existing.set(row.dataset.key, row);
  let previous = null;
  for (const item of items) {
    const k = key(item);
    let row = existing.get(k);
    if (row) existing.delete(k); else { row = create(item); row.dataset.key = k; }
    update(row, item);
    const expected = previous ? previous.nextSibling : body.firstChild;
    if (expected !== row) body.insertBefore(row, expected);
    previous = row;
  }
  for (const row of existing.values()) row.remove();
};

BMB.find = function (root, testid) { return root.querySelector('[data-testid="' + testid + '"]'); };

// ---- data ----------------------------------------------------------------------------------------

BMB.json = function (text) {
  if (typeof text !== 'string' || text === '') return undefined;
  try { return JSON.parse(text); } catch (e) { return undefined; }
};

BMB.payload = function (topic) { return BMB.topics.get(topic); };

BMB.short = function (value) {
  if (value === undefined) return '';
  if (value === null) return 'null';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 80 ? text.slice(0, 77) + '…' : text;
};

// What a value topic shows: the JSON `value`, else the `values` object, else the payload text.
BMB.valueText = function (payload) {
  const parsed = BMB.json(payload);
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
    if ('value' in parsed) return BMB.short(parsed.value);
    if ('values' in parsed) return BMB.short(parsed.values);
  }
  return BMB.short(payload);
};

BMB.age = function (topics) {
  let newest = 0;
  for (const t of topics) newest = Math.max(newest, BMB.seen.get(t) || 0);
  if (!newest) return '';
  const seconds = Math.max(0, Math.round((Date.now() - newest) / 1000));
  if (seconds < 120) return seconds + ' s';
  if (seconds < 7200) return Math.round(seconds / 60) + ' min';
  return Math.round(seconds / 3600) + ' h';
};

// Bridges: {id: {state, health, devices: [...], sightings}}; without the cluster one bridge, id "bridge".
BMB.bridges = function () {
  const result = {};
  const prefix = BMB.base + '/';
  const get = (id) => (result[id] = result[id] || { id: id, state: '', devices: [], sightings: null });
  for (const [topic, payload] of BMB.topics) {
    if (!topic.startsWith(prefix)) continue;
    const parts = topic.slice(prefix.length).split('/');
    let id, leaf;
    if (parts[0] === 'bridge' && parts.length === 2) { id = 'bridge'; leaf = parts[1]; }
    else if (parts[0] === 'bridges' && parts.length === 3) { id = parts[1]; leaf = parts[2]; }
    else continue;
    if (leaf === 'state') get(id).state = payload;
    else if (leaf === 'devices') { const list = BMB.json(payload); get(id).devices = Array.isArray(list) ? list : []; }
    else if (leaf === 'sightings') get(id).sightings = BMB.json(payload) || null;
    else if (leaf === 'health') get(id).health = BMB.json(payload) || null;
  }
  return result;
};

const RESERVED = new Set(['bridge', 'bridges', 'config']);

// Every device of every bridge, by segment.
BMB.devices = function () {
  const devices = new Map();
  const get = (name) => {
    if (!devices.has(name)) devices.set(name, { name: name, bridges: [], topics: [] });
    return devices.get(name);
  };
  for (const bridge of Object.values(BMB.bridges())) {
    for (const entry of bridge.devices) {
      if (!entry || typeof entry.name !== 'string') continue;
      const device = get(entry.name);
      const keep = device.entry && device.entry.connected && !entry.connected;
      if (!keep) { device.entry = entry; device.bridge = bridge.id; }
      device.bridges.push(bridge.id);
    }
  }
  const prefix = BMB.base + '/';
  for (const topic of BMB.topics.keys()) {
    if (!topic.startsWith(prefix)) continue;
    const parts = topic.slice(prefix.length).split('/');
    if (parts[0] === 'config' && parts[1] === 'devices' && parts.length === 3) { get(parts[2]).runtime = true; continue; }
    if (RESERVED.has(parts[0]) || parts.length < 2) continue;
    const leaf = parts[parts.length - 1];
    if (parts.length === 2 && leaf === 'presence') continue;  // a tracker
    const device = get(parts[0]);
    if (parts.length === 2 && (leaf === 'availability' || leaf === 'owner')) continue;
    if (leaf === 'result' || leaf === 'response') continue;
    device.topics.push(topic);
  }
  for (const device of devices.values()) {
    const owner = BMB.json(BMB.payload(prefix + device.name + '/owner'));
    if (owner && typeof owner === 'object') {
      device.bridge = String(owner.bridge || device.bridge || '');
      device.ownerAdapter = owner.adapter;
    }
    device.availability = BMB.payload(prefix + device.name + '/availability') || '';
    device.topics.sort();
  }
  // Trackers are not devices; a name seen only in a presence topic is left out above.
  return devices;
};

BMB.model = function (entry) {
  if (!entry) return '';
  const profile = entry.profile;
  if (typeof profile === 'string') return profile;
  if (profile && typeof profile === 'object') return [profile.manufacturer, profile.model || profile.id].filter(Boolean).join(' ');
  return entry.model || '';
};

// ---- the API --------------------------------------------------------------------------------------

BMB.post = async function (path, body) {
  let response;
  try {
    response = await fetch(path, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (e) {
    return { status: 'error', error: { code: 'network', message: String(e) } };
  }
  if (response.status === 401) { window.location.assign('/login'); return { status: 'error', error: { code: 'unauthorized' } }; }
  const text = await response.text();
  const parsed = BMB.json(text);
  if (parsed && typeof parsed === 'object') return parsed;
  return { status: 'error', error: { code: 'http_' + response.status, message: text.slice(0, 200) } };
};

// Shows an answer in `node`: `ok` / `error: code message` / `timeout`, with data-status.
BMB.showAnswer = function (node, answer, okText) {
  if (answer && answer.status === 'ok') {
    node.dataset.status = 'ok';
    BMB.text(node, okText || 'ok');
    return;
  }
  node.dataset.status = 'error';
  const error = answer && answer.error;
  if (error && typeof error === 'object') {
    BMB.text(node, error.code === 'timeout' ? 'timeout' : ('error: ' + (error.code || '') + ' ' + (error.message || '')).trim());
  } else {
    BMB.text(node, 'error: ' + (typeof error === 'string' ? error : 'unknown'));
  }
};

BMB.pending = function (node) { node.dataset.status = 'pending'; BMB.text(node, '…'); };

// ---- live data ----------------------------------------------------------------------------------

BMB.setLive = function (state) {
  const live = document.getElementById('live');
  live.dataset.state = state;
  BMB.text(live, state);
};

BMB.apply = function (topic, payload, live) {
  if (payload === '') { BMB.topics.delete(topic); BMB.seen.delete(topic); }
  else { BMB.topics.set(topic, payload); if (live) BMB.seen.set(topic, Date.now()); }
  BMB.invalidate();
};

BMB.connect = function () {
  BMB.setLive('connecting');
  const buffered = [];
  let loaded = false;
  const source = new EventSource('/api/events');
  source.onmessage = (event) => {
    const message = BMB.json(event.data);
    if (!message || typeof message.topic !== 'string') return;
    if (loaded) BMB.apply(message.topic, String(message.payload), true);
    else buffered.push(message);
  };
  source.onopen = async () => {
    if (loaded) return;
    try {
      const response = await fetch('/api/snapshot', { credentials: 'same-origin' });
      if (response.status === 401) { window.location.assign('/login'); return; }
      const snapshot = await response.json();
      BMB.base = snapshot.base;
      BMB.cluster = !!snapshot.cluster;
      BMB.topics.clear();
      for (const m of snapshot.messages) BMB.apply(m.topic, m.payload, false);
      for (const m of buffered.splice(0)) BMB.apply(m.topic, String(m.payload), true);
      loaded = true;
      BMB.setLive('live');
      BMB.render();
    } catch (e) {
      source.close();
      BMB.setLive('offline');
      setTimeout(BMB.connect, 3000);
    }
  };
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED || !loaded) {
      source.close();
      BMB.setLive('offline');
      setTimeout(BMB.connect, 3000);
    } else {
      BMB.setLive('offline');
      loaded = false;  // EventSource reconnects by itself: reload the snapshot when it is back
    }
  };
};

// ---- routing ---------------------------------------------------------------------------------------

BMB.route = function () {
  const hash = window.location.hash || '#/devices';
  const parts = hash.replace(/^#\/?/, '').split('/');
  let name = parts[0] || 'devices';
  let arg = parts.length > 1 ? parts.slice(1).join('/') : '';
  try { arg = decodeURIComponent(arg); } catch (e) { arg = ''; }
  if (!BMB.views[name]) name = 'devices';
  return { name: name, arg: arg };
};

BMB.render = function (force) {
  const route = BMB.route();
  const key = route.name + '/' + route.arg;
  const main = document.getElementById('view');
  if (force || !BMB.current || BMB.current.key !== key) {
    BMB.clear(main);
    main.dataset.view = route.name;
    const view = BMB.views[route.name];
    BMB.current = { key: key, view: view, state: view.mount(main, route.arg) || {} };
    for (const name of ['devices', 'nearby', 'radios', 'presence']) {
      const link = document.getElementById('nav-' + name);
      const active = name === route.name || (name === 'devices' && route.name === 'device');
      link.classList.toggle('active', active);
    }
  }
  BMB.dirty = false;
  BMB.current.view.update(BMB.current.state, route.arg);
};

// A value is drawn within BMB.renderGap of its arrival, however fast values come: one render per gap at most
// (at 2,000 values/s the page still renders 20 times a second, not 2,000).
BMB.renderGap = 40;
BMB.renderAt = 0;
BMB.renderTimer = null;
BMB.invalidate = function () {
  BMB.dirty = true;
  if (BMB.renderTimer !== null) return;
  const wait = Math.max(0, BMB.renderAt + BMB.renderGap - Date.now());
  BMB.renderTimer = setTimeout(() => {
    BMB.renderTimer = null;
    BMB.renderAt = Date.now();
    if (BMB.dirty) BMB.render();
  }, wait);
};

document.addEventListener('DOMContentLoaded', () => {
  window.addEventListener('hashchange', () => BMB.render());
  BMB.render();
  BMB.connect();
  // The ages tick every second.
  setInterval(() => BMB.invalidate(), 1000);
});

"""#

    /// devices.js
    static let devicesJs = #"""
// Devices (every device of every bridge) and a device's own page.
'use strict';

(function () {
  const el = BMB.el, text = BMB.text, find = BMB.find;

  // ---- #/devices ----
  BMB.views.devices = {
    mount(main) {
      const head = el('tr', {}, ['Name', 'Address', 'Model', 'Connection', 'Availability', 'RSSI', 'Bridge', 'Adapter',
        'Last value', 'Values'].map((h) => el('th', { scope: 'col' }, h)));
      const body = el('tbody', {});
      const empty = el('p', { class: 'empty', 'data-testid': 'devices-empty' }, 'No device yet.');
      main.append(el('h1', {}, 'Devices'), empty,
        el('div', { class: 'scroll' }, el('table', { class: 'grid devices', 'data-testid': 'devices-table' }, el('thead', {}, head), body)));
      return { body: body, empty: empty };
    },
    update(state) {
      const devices = Array.from(BMB.devices().values()).sort((a, b) => a.name.localeCompare(b.name));
      state.empty.hidden = devices.length > 0;
      BMB.syncRows(state.body, devices, (d) => d.name, createRow, updateRow);
    },
  };

  const CELLS = ['address', 'model', 'connection', 'availability', 'rssi', 'bridge', 'adapter', 'age'];

  function createRow(device) {
    const row = el('tr', { 'data-testid': 'device-row', 'data-device': device.name });
    row.append(el('td', { 'data-label': 'Name' }, BMB.link(device.name, device.name, 'device-link')));
    for (const cell of CELLS) row.append(el('td', { 'data-testid': 'device-' + cell, 'data-label': cell }));
    row.append(el('td', { 'data-testid': 'device-values', class: 'values' }));
    return row;
  }

  function updateRow(row, device) {
    const entry = device.entry || {};
    text(find(row, 'device-address'), entry.address || '');
    text(find(row, 'device-model'), BMB.model(entry));
    text(find(row, 'device-connection'), [entry.connection, entry.connected ? 'connected' : ''].filter(Boolean).join(', '));
    const availability = find(row, 'device-availability');
    text(availability, device.availability);
    availability.className = device.availability === 'online' ? 'ok' : (device.availability ? 'bad' : '');
    text(find(row, 'device-rssi'), entry.rssi === null || entry.rssi === undefined ? '' : entry.rssi);
    text(find(row, 'device-bridge'), BMB.cluster ? (device.bridge || '') : (device.bridges.length ? 'bridge' : ''));
    text(find(row, 'device-adapter'), device.ownerAdapter || entry.adapter || '');
    text(find(row, 'device-age'), BMB.age(device.topics));
    const values = find(row, 'device-values');
    BMB.syncRows(values, device.topics, (t) => t, (t) => el('span', { 'data-testid': 'value', 'data-topic': t, class: 'value' }),
      (span, t) => text(span, t.slice(BMB.base.length + device.name.length + 2) + ': ' + BMB.valueText(BMB.payload(t))));
  }

  // ---- #/device/{segment} ----
  BMB.views.device = {
    mount(main, segment) {
      const info = el('dl', { class: 'info', 'data-testid': 'device-info' });
      const chars = el('tbody', {});
      const others = el('div', { class: 'others' });
      const requestResult = el('span', { class: 'result', 'data-testid': 'request-result' });
      const unpair = el('button', { type: 'button', 'data-testid': 'unpair-button' }, 'Unpair');
      const reconnect = el('button', { type: 'button', 'data-testid': 'reconnect-button' }, 'Reconnect');
      const pairing = el('p', { class: 'note', 'data-testid': 'pairing-info' });
      unpair.addEventListener('click', () => request('unpair', { device: segment }));
      reconnect.addEventListener('click', () => request('reconnect', { device: segment }));
      const runtime = el('section', { class: 'runtime', hidden: true });
      const renameInput = el('input', { type: 'text', 'data-testid': 'rename-input', placeholder: 'new name', autocomplete: 'off' });
      const rename = el('button', { type: 'button', 'data-testid': 'rename-button' }, 'Rename');
      const remove = el('button', { type: 'button', class: 'danger', 'data-testid': 'remove-button' }, 'Remove');
      const confirm = el('button', { type: 'button', class: 'danger', 'data-testid': 'remove-confirm', hidden: true }, 'Really remove');
      runtime.append(el('h2', {}, 'Added at run time'), el('span', { class: 'badge', 'data-testid': 'runtime-badge' }, 'run-time device'),
        el('div', { class: 'row' }, renameInput, rename), el('div', { class: 'row' }, remove, confirm));
      rename.addEventListener('click', async () => {
        const name = renameInput.value.trim();
        if (!name) return;
        const answer = await request('device/rename', { device: segment, name: name }, true);
        if (answer && answer.status === 'ok') window.location.hash = '#/device/' + encodeURIComponent(name);
      });
      remove.addEventListener('click', () => { confirm.hidden = false; });
      confirm.addEventListener('click', async () => {
        const answer = await request('device/remove', { device: segment }, true);
        if (answer && answer.status === 'ok') window.location.hash = '#/devices';
      });

      async function request(command, payload, anyBridge) {
        BMB.pending(requestResult);
        const device = BMB.devices().get(segment);
        const bridge = BMB.cluster && !anyBridge && device && device.bridge ? device.bridge : null;
        const answer = await BMB.post('/api/request', { command: command, bridge: bridge, payload: payload });
        BMB.showAnswer(requestResult, answer);
        return answer;
      }

      // A profile's named command (SPEC §15): {base}/{device}/command/{name}/set.
      const commandName = el('input', { type: 'text', 'data-testid': 'command-name', placeholder: 'command', autocomplete: 'off', size: 10 });
      const commandInput = el('input', { type: 'text', 'data-testid': 'command-input', placeholder: '{} (JSON)', autocomplete: 'off' });
      const commandButton = el('button', { type: 'button', 'data-testid': 'command-button' }, 'Send');
      const commandResult = el('span', { class: 'result', 'data-testid': 'command-result' });
      commandButton.addEventListener('click', async () => {
        const name = commandName.value.trim();
        if (!name) return;
        let payload = {};
        if (commandInput.value.trim()) {
          try { payload = JSON.parse(commandInput.value); } catch (e) { commandResult.dataset.status = 'error'; text(commandResult, 'error: not JSON'); return; }
        }
        BMB.pending(commandResult);
        BMB.showAnswer(commandResult, await BMB.post('/api/command', { device: segment, command: name, payload: payload }));
      });
      const commands = el('section', { class: 'commands', hidden: true },
        el('h2', {}, 'Profile command'), el('div', { class: 'row' }, commandName, commandInput, commandButton, commandResult));

      main.append(
        el('p', {}, el('a', { href: '#/devices' }, '← Devices')),
        el('h1', { 'data-testid': 'device-title' }, segment),
        el('section', { 'data-testid': 'device-view', 'data-device': segment },
          info,
          el('h2', {}, 'Characteristics'),
          el('div', { class: 'scroll' }, el('table', { class: 'grid chars' },
            el('thead', {}, el('tr', {}, ['Service', 'Characteristic', 'Value', 'Raw', 'Write / read', 'Result'].map((h) => el('th', { scope: 'col' }, h)))),
            chars)),
          others, commands,
          el('h2', {}, 'Pairing'), pairing, el('div', { class: 'row' }, unpair, reconnect, requestResult),
          runtime));
      return { segment: segment, info: info, chars: chars, others: others, pairing: pairing, runtime: runtime, commands: commands };
    },
    update(state) {
      const segment = state.segment;
      const device = BMB.devices().get(segment) || { name: segment, topics: [], bridges: [], availability: '' };
      const entry = device.entry || {};
      BMB.clear(state.info);
      const facts = [['Address', entry.address], ['Model', BMB.model(entry)], ['Connection', entry.connection],
        ['Connected', entry.connected === undefined ? '' : String(entry.connected)], ['Availability', device.availability],
        ['RSSI', entry.rssi], ['Bridge', BMB.cluster ? device.bridge : (device.bridges.length ? 'bridge' : '')],
        ['Adapter', device.ownerAdapter || entry.adapter], ['Paired', entry.paired === undefined ? '' : String(entry.paired)],
        ['Bonded', entry.bonded === undefined ? '' : String(entry.bonded)]];
      for (const [label, value] of facts) {
        if (value === undefined || value === null || value === '') continue;
        state.info.append(el('dt', {}, label), el('dd', {}, String(value)));
      }
      text(state.pairing, (entry.bonded ? 'Bonded. ' : entry.paired ? 'Paired. ' : 'Not paired. ')
        + 'Pairing is set in bridge.yaml (pairing: just_works or passkey, with passkey): the bridge pairs when a read '
        + 'or write needs it. Unpair removes the bond; reconnect connects again.');
      state.runtime.hidden = !device.runtime;
      state.commands.hidden = !entry.profile;
      const prefix = BMB.base + '/' + segment + '/';
      const chars = [], others = [];
      for (const topic of device.topics) {
        const rest = topic.slice(prefix.length).split('/');
        if (rest.length === 2 && rest[0] !== 'command') chars.push({ topic: topic, service: rest[0], characteristic: rest[1] });
        else others.push(topic);
      }
      BMB.syncRows(state.chars, chars, (c) => c.topic, (c) => charRow(segment, c), updateCharRow);
      BMB.syncRows(state.others, others, (t) => t, (t) => el('p', { class: 'other' },
        el('span', { class: 'label' }, t.slice(prefix.length) + ': '), el('span', { 'data-testid': 'value', 'data-topic': t, class: 'value' })),
        (p, t) => text(p.lastChild, BMB.valueText(BMB.payload(t))));
    },
  };

  function charRow(segment, c) {
    const row = el('tr', { 'data-testid': 'char-row', 'data-service': c.service, 'data-characteristic': c.characteristic });
    const input = el('input', { type: 'text', 'data-testid': 'write-input', placeholder: 'value', autocomplete: 'off', size: 12 });
    const format = el('select', { 'data-testid': 'write-format' },
      el('option', { value: 'hex' }, 'hex'), el('option', { value: 'json' }, 'JSON'), el('option', { value: 'value' }, 'value'));
    const write = el('button', { type: 'button', 'data-testid': 'write-button' }, 'Write');
    const read = el('button', { type: 'button', 'data-testid': 'read-button' }, 'Read');
    const result = el('span', { class: 'result', 'data-testid': 'result' });
    write.addEventListener('click', async () => {
      let payload;
      const typed = input.value.trim();
      if (format.value === 'hex') payload = { raw: typed.replace(/[\s:]/g, '').toLowerCase() };
      else if (format.value === 'json') {
        try { payload = JSON.parse(typed); } catch (e) { result.dataset.status = 'error'; text(result, 'error: not JSON'); return; }
      } else payload = { value: typed !== '' && !isNaN(Number(typed)) ? Number(typed) : typed };
      BMB.pending(result);
      BMB.showAnswer(result, await BMB.post('/api/command', { device: segment, service: c.service, characteristic: c.characteristic, op: 'set', payload: payload }));
    });
    read.addEventListener('click', async () => {
      BMB.pending(result);
      const answer = await BMB.post('/api/command', { device: segment, service: c.service, characteristic: c.characteristic, op: 'get' });
      BMB.showAnswer(result, answer, answer && answer.status === 'ok' && 'value' in answer ? 'ok: ' + BMB.short(answer.value) : 'ok');
    });
    row.append(el('td', { 'data-label': 'service' }, c.service), el('td', { 'data-label': 'characteristic' }, c.characteristic),
      el('td', {}, el('span', { 'data-testid': 'value', 'data-topic': c.topic, class: 'value' })),
      el('td', { 'data-testid': 'raw', class: 'raw' }),
      el('td', { class: 'actions' }, input, format, write, read), el('td', {}, result));
    return row;
  }

  function updateCharRow(row, c) {
    const payload = BMB.payload(c.topic);
    text(find(row, 'value'), BMB.valueText(payload));
    const parsed = BMB.json(payload);
    text(find(row, 'raw'), parsed && typeof parsed.raw === 'string' ? parsed.raw : '');
  }
})();

"""#

    /// index.html
    static let indexHtml = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ble-mqtt-bridge</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
<script src="/assets/devices.js" defer></script>
<script src="/assets/nearby.js" defer></script>
<script src="/assets/radios.js" defer></script>
</head>
<body>
<header class="top">
<span class="brand">ble-mqtt-bridge</span>
<nav>
<a href="#/devices" id="nav-devices" data-testid="nav-devices">Devices</a>
<a href="#/nearby" id="nav-nearby" data-testid="nav-nearby">Nearby</a>
<a href="#/radios" id="nav-radios" data-testid="nav-radios">Radios</a>
<a href="#/presence" id="nav-presence" data-testid="nav-presence">Presence</a>
</nav>
<span id="live" class="live" data-testid="live" data-state="connecting">connecting</span>
</header>
<main id="view" data-testid="view" data-view=""></main>
<noscript>This page needs JavaScript.</noscript>
</body>
</html>

"""#

    /// login.html
    static let loginHtml = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ble-mqtt-bridge: log in</title>
<link rel="stylesheet" href="/assets/app.css">
</head>
<body class="login">
<main class="login-box">
<h1>ble-mqtt-bridge</h1>
<form method="post" action="/login" data-testid="login-form">
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required data-testid="login-token">
<button type="submit" data-testid="login-button">Log in</button>
</form>
<!--error-->
</main>
</body>
</html>

"""#

    /// nearby.js
    static let nearbyJs = #"""
// Nearby: runs `scan` on a bridge, lists what it heard, and adds a device (`device/add`).
'use strict';

(function () {
  const el = BMB.el, text = BMB.text, find = BMB.find;

  BMB.views.nearby = {
    mount(main) {
      const seconds = el('input', { type: 'number', min: 1, max: 60, value: 10, 'data-testid': 'scan-seconds', inputmode: 'numeric', size: 3 });
      const bridge = el('select', { 'data-testid': 'scan-bridge', hidden: !BMB.cluster });
      const button = el('button', { type: 'button', 'data-testid': 'scan-button' }, 'Scan');
      const status = el('span', { class: 'result', 'data-testid': 'scan-status', 'data-status': 'idle' });
      const body = el('tbody', {});
      const table = el('table', { class: 'grid nearby', 'data-testid': 'nearby-table' },
        el('thead', {}, el('tr', {}, ['Address', 'Name', 'Family', 'Model', 'RSSI', 'Configured', ''].map((h) => el('th', { scope: 'col' }, h)))), body);
      const form = addForm();
      main.append(el('h1', {}, 'Nearby'),
        el('div', { class: 'row' }, el('label', { for: 'scan-seconds' }, 'Seconds'), seconds, bridge, button, status),
        el('div', { class: 'scroll' }, table), form.node);
      seconds.id = 'scan-seconds';
      const state = { body: body, bridge: bridge, form: form };
      button.addEventListener('click', async () => {
        const value = Math.min(60, Math.max(1, parseInt(seconds.value, 10) || 10));
        button.disabled = true;
        status.dataset.status = 'scanning';
        text(status, 'scanning for ' + value + ' s…');
        const answer = await BMB.post('/api/request', { command: 'scan', bridge: bridge.value || null, payload: { seconds: value } });
        button.disabled = false;
        const devices = answer && answer.status === 'ok' && answer.data && Array.isArray(answer.data.devices) ? answer.data.devices : null;
        if (devices) {
          status.dataset.status = 'ok';
          text(status, devices.length + ' heard');
          render(state, devices);
        } else {
          BMB.showAnswer(status, answer);
        }
      });
      return state;
    },
    update(state) {
      if (!BMB.cluster) return;
      const online = Object.values(BMB.bridges()).filter((b) => b.state === 'online').map((b) => b.id).sort();
      const current = state.bridge.value;
      const wanted = [''].concat(online);
      const have = Array.from(state.bridge.options).map((o) => o.value);
      if (wanted.join('\n') !== have.join('\n')) {
        BMB.clear(state.bridge);
        for (const id of wanted) state.bridge.append(el('option', { value: id }, id || 'any bridge'));
        state.bridge.value = wanted.includes(current) ? current : '';
      }
      state.bridge.hidden = false;
    },
  };

  function render(state, devices) {
    devices.sort((a, b) => (b.rssi || -999) - (a.rssi || -999));
    BMB.syncRows(state.body, devices, (d) => String(d.address), (d) => {
      const row = el('tr', { 'data-testid': 'nearby-row', 'data-address': String(d.address) });
      for (const cell of ['address', 'name', 'family', 'model', 'rssi', 'configured']) {
        row.append(el('td', { 'data-testid': 'nearby-' + cell, 'data-label': cell }));
      }
      row.append(el('td', { class: 'actions' }));
      return row;
    }, (row, d) => {
      text(find(row, 'nearby-address'), d.address);
      text(find(row, 'nearby-name'), d.name || '');
      text(find(row, 'nearby-family'), (d.decoder || '') + (d.encrypted ? ' (encrypted)' : ''));
      text(find(row, 'nearby-model'), [d.manufacturer, d.model].filter(Boolean).join(' '));
      text(find(row, 'nearby-rssi'), d.rssi === null || d.rssi === undefined ? '' : d.rssi);
      text(find(row, 'nearby-configured'), d.configured || '');
      const actions = row.lastChild;
      BMB.clear(actions);
      if (!d.configured) {
        const open = el('button', { type: 'button', 'data-testid': 'add-open' }, 'Add…');
        open.addEventListener('click', () => state.form.open(d));
        actions.append(open);
      }
    });
  }

  function addForm() {
    const address = el('input', { type: 'text', readonly: true, 'data-testid': 'add-address' });
    const name = el('input', { type: 'text', 'data-testid': 'add-name', placeholder: 'e.g. pantry', autocomplete: 'off' });
    const connection = el('select', { 'data-testid': 'add-connection' },
      ['always', 'poll', 'advertisement'].map((p) => el('option', { value: p }, p)));
    const interval = el('input', { type: 'text', 'data-testid': 'add-interval', value: '5m', size: 5 });
    const intervalRow = el('div', { class: 'row', hidden: true }, el('label', {}, 'Poll every'), interval);
    const bindkey = el('input', { type: 'text', 'data-testid': 'add-bindkey', placeholder: '32 hex digits', autocomplete: 'off' });
    const bindkeyRow = el('div', { class: 'row', hidden: true }, el('label', {}, 'Bindkey'), bindkey);
    // SPEC §11: how the device pairs when an operation needs it; a passkey device's six digits.
    const pairing = el('select', { 'data-testid': 'add-pairing' },
      ['none', 'just_works', 'passkey'].map((p) => el('option', { value: p }, p)));
    const passkey = el('input', { type: 'text', 'data-testid': 'add-passkey', placeholder: '6 digits', size: 7, autocomplete: 'off', inputmode: 'numeric' });
    const passkeyRow = el('div', { class: 'row', hidden: true }, el('label', {}, 'Passkey'), passkey);
    const pairingRow = el('div', { class: 'row' }, el('label', {}, 'Pairing'), pairing);
    const button = el('button', { type: 'button', 'data-testid': 'add-button' }, 'Add');
    const result = el('span', { class: 'result', 'data-testid': 'add-result' });
    const node = el('section', { class: 'add', 'data-testid': 'add-form', hidden: true },
      el('h2', {}, 'Add a device'),
      el('div', { class: 'row' }, el('label', {}, 'Address'), address),
      el('div', { class: 'row' }, el('label', {}, 'Name'), name),
      el('div', { class: 'row' }, el('label', {}, 'Connection'), connection),
      intervalRow, bindkeyRow, pairingRow, passkeyRow, el('div', { class: 'row' }, button, result));
    let encrypted = false;
    const sync = () => {
      intervalRow.hidden = connection.value !== 'poll';
      bindkeyRow.hidden = !encrypted;
      pairingRow.hidden = connection.value === 'advertisement';
      passkeyRow.hidden = pairingRow.hidden || pairing.value !== 'passkey';
    };
    connection.addEventListener('change', sync);
    pairing.addEventListener('change', sync);
    button.addEventListener('click', async () => {
      const entry = { name: name.value.trim(), match: { address: address.value }, connection: connection.value };
      if (connection.value === 'poll') entry.poll_interval = interval.value.trim();
      if (encrypted && bindkey.value.trim()) entry.advertisement = { bindkey: bindkey.value.trim() };
      if (connection.value !== 'advertisement' && pairing.value !== 'none') {
        entry.pairing = pairing.value;
        if (pairing.value === 'passkey') entry.passkey = passkey.value.trim();
      }
      BMB.pending(result);
      const answer = await BMB.post('/api/request', { command: 'device/add', bridge: null, payload: entry });
      const segment = answer && answer.data && answer.data.device;
      BMB.showAnswer(result, answer, 'ok: ' + (segment || entry.name));
    });
    return {
      node: node,
      open(device) {
        node.hidden = false;
        address.value = String(device.address);
        if (!name.value) name.value = '';
        encrypted = !!device.encrypted;
        connection.value = device.connectable === false || device.decoder ? 'advertisement' : 'always';
        result.dataset.status = '';
        text(result, '');
        sync();
        name.focus();
      },
    };
  }
})();

"""#

    /// radios.js
    static let radiosJs = #"""
// Radios (the cluster's bridges and who hears which device) and Presence (trackers).
'use strict';

(function () {
  const el = BMB.el, text = BMB.text;

  // ---- #/radios ----
  BMB.views.radios = {
    mount(main) {
      const bridges = el('tbody', {});
      const grid = el('div', { class: 'scroll' });
      const empty = el('p', { class: 'empty', 'data-testid': 'radios-empty' }, 'No sightings: the grid needs the cluster (cluster.enabled).');
      main.append(el('h1', {}, 'Radios'),
        el('h2', {}, 'Bridges'),
        el('div', { class: 'scroll' }, el('table', { class: 'grid', 'data-testid': 'bridges-table' },
          el('thead', {}, el('tr', {}, ['Bridge', 'State', 'Free slots'].map((h) => el('th', { scope: 'col' }, h)))), bridges)),
        el('h2', {}, 'Devices × bridges (RSSI, owner marked)'), empty, grid);
      return { bridges: bridges, grid: grid, empty: empty };
    },
    update(state) {
      const all = BMB.bridges();
      const ids = Object.keys(all).sort();
      BMB.syncRows(state.bridges, ids.map((id) => all[id]), (b) => b.id, (b) => el('tr', { 'data-testid': 'bridge-row', 'data-bridge': b.id },
        el('td', {}, b.id), el('td', { 'data-testid': 'bridge-state' }), el('td', { 'data-testid': 'bridge-slots' })), (row, b) => {
        const stateCell = row.children[1];
        text(stateCell, b.state);
        stateCell.className = b.state === 'online' ? 'ok' : 'bad';
        text(row.children[2], slots(b));
      });
      // The grid: rebuilt (it has no inputs), at most four times a second.
      const sighted = ids.filter((id) => all[id].sightings && all[id].sightings.devices);
      const names = new Set();
      for (const id of sighted) for (const name of Object.keys(all[id].sightings.devices)) names.add(name);
      state.empty.hidden = names.size > 0;
      BMB.clear(state.grid);
      if (names.size === 0) return;
      const table = el('table', { class: 'grid radios', 'data-testid': 'radios-table' });
      table.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Device'),
        sighted.map((id) => el('th', { scope: 'col', 'data-testid': 'radio-bridge', 'data-bridge': id }, id)))));
      const body = el('tbody', {});
      for (const name of Array.from(names).sort()) {
        const owner = BMB.json(BMB.payload(BMB.base + '/' + name + '/owner'));
        const ownerID = owner && typeof owner === 'object' ? owner.bridge : null;
        const row = el('tr', { 'data-testid': 'radio-row', 'data-device': name }, el('td', {}, BMB.link(name, name, 'device-link')));
        for (const id of sighted) {
          const seen = all[id].sightings.devices[name];
          const isOwner = ownerID === id;
          const label = seen && seen.rssi !== undefined && seen.rssi !== null ? String(seen.rssi) : '';
          row.append(el('td', { 'data-testid': 'radio-cell', 'data-bridge': id, 'data-owner': isOwner ? 'true' : null, class: isOwner ? 'owner' : null },
            label + (isOwner ? ' ★' : '') + (seen && seen.connected ? ' (linked)' : '')));
        }
        body.append(row);
      }
      table.append(body);
      state.grid.append(table);
    },
  };

  function slots(bridge) {
    const adapters = bridge.sightings && bridge.sightings.adapters;
    if (adapters && typeof adapters === 'object') {
      return Object.keys(adapters).sort().map((a) => a + ': ' + (adapters[a] && adapters[a].free_slots)).join(', ');
    }
    const health = bridge.health && bridge.health.slots;
    if (health && typeof health === 'object') {
      return Object.keys(health).sort().map((a) => a + ': ' + BMB.short(health[a])).join(', ');
    }
    return '';
  }

  // ---- #/presence ----
  BMB.views.presence = {
    mount(main) {
      const body = el('tbody', {});
      const empty = el('p', { class: 'empty', 'data-testid': 'presence-empty' }, 'No tracker.');
      main.append(el('h1', {}, 'Presence'), empty, el('div', { class: 'scroll' }, el('table', { class: 'grid', 'data-testid': 'presence-table' },
        el('thead', {}, el('tr', {}, ['Tracker', 'State', 'Room (bridge)', 'RSSI', 'Last seen'].map((h) => el('th', { scope: 'col' }, h)))), body)));
      return { body: body, empty: empty };
    },
    update(state) {
      const prefix = BMB.base + '/';
      const trackers = [];
      for (const [topic, payload] of BMB.topics) {
        if (!topic.startsWith(prefix) || !topic.endsWith('/presence')) continue;
        const name = topic.slice(prefix.length, -'/presence'.length);
        if (name.includes('/')) continue;
        const presence = BMB.json(payload);
        trackers.push({ name: name, presence: presence && typeof presence === 'object' ? presence : {} });
      }
      trackers.sort((a, b) => a.name.localeCompare(b.name));
      state.empty.hidden = trackers.length > 0;
      BMB.syncRows(state.body, trackers, (t) => t.name, (t) => el('tr', { 'data-testid': 'presence-row', 'data-tracker': t.name },
        el('td', {}, t.name), el('td', { 'data-testid': 'presence-state' }), el('td', { 'data-testid': 'presence-room' }),
        el('td', { 'data-testid': 'presence-rssi' }), el('td', { 'data-testid': 'presence-last-seen' })), (row, t) => {
        const p = t.presence;
        text(row.children[1], p.state || '');
        row.children[1].className = p.state === 'home' ? 'ok' : 'bad';
        text(row.children[2], p.bridge || '');
        text(row.children[3], p.rssi === undefined || p.rssi === null ? '' : p.rssi);
        text(row.children[4], typeof p.last_seen === 'number' ? since(p.last_seen) : '');
      });
    },
  };

  function since(unixSeconds) {
    const seconds = Math.max(0, Math.round(Date.now() / 1000 - unixSeconds));
    const when = new Date(unixSeconds * 1000).toLocaleTimeString();
    if (seconds < 120) return when + ' (' + seconds + ' s ago)';
    if (seconds < 7200) return when + ' (' + Math.round(seconds / 60) + ' min ago)';
    return when + ' (' + Math.round(seconds / 3600) + ' h ago)';
  }
})();

"""#

    /// Every file: its name and its text, in name order.
    public static let all: [(name: String, text: String)] = [
        ("app.css", appCss),
        ("app.js", appJs),
        ("devices.js", devicesJs),
        ("index.html", indexHtml),
        ("login.html", loginHtml),
        ("nearby.js", nearbyJs),
        ("radios.js", radiosJs),
    ]
}
