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
