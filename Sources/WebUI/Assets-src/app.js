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
