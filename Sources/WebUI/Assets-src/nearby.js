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
