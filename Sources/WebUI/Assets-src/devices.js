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
