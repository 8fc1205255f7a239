extension ShippedProfiles {
    /// profiles/eq3_thermostat.yaml, byte for byte (written by scripts/shipped-profiles).
    static let eq3Thermostat = #"""
# eQ-3 Bluetooth Smart radiator thermostat (CC-RT-BLE-EQ). Commands are written with response to
# 3fa4585a; each is answered by a notification on d0e8434d, usually the status frame 02 01 ...
# Every connection sets the clock (03 + local date and time), which also asks for the status; the
# clock drives the thermostat's own week schedule. Firmware 1.46 and later also wants a bond
# (the 6-digit code on the display): set `pairing:` on the device entry (SPEC §11).
# Sources: Heckie75/eQ-3-radiator-thermostat (eq-3-radiator-thermostat-api.md, real captures),
# rytilahti/python-eq3bt (structures, tests), EuleMitKeule/eq3btsmart (the library behind Home
# Assistant), Tasmota xdrv_85 (names, status request).
id: eq3_thermostat
manufacturer: eQ-3
model: CC-RT-BLE-EQ
recognize: { name: "CC-RT-BLE*" }
connection: poll
interval: 10m
values:
  valve: { unit: "%" }
  target_temperature: { unit: "°C", device_class: temperature }
  manual: {}            # manual mode (else the week schedule)
  away: {}              # holiday mode
  boost: {}
  locked: {}            # the buttons are locked
steps:
  - subscribe: { characteristic: "d0e8434d-cd29-0996-af41-6c90f4e0eb2a" }
  - write:
      characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09"
      value: "03 {now.year2|u8}{now.month|u8}{now.day|u8} {now.hour|u8}{now.minute|u8}{now.second|u8}"
      response: true
  - wait_notify: { characteristic: "d0e8434d-cd29-0996-af41-6c90f4e0eb2a", timeout: 5s, decode: answer }
decode:
  # 02 01 00 00 04 2a: auto, valve 0 %, 21.0 °C (bytes after the sixth: away date, presets)
  answer: { first_byte: { "02": status } }
  status:
    struct: "<2xBBxB"
    fields: { _flags: "", valve: "", target_temperature: "/2" }
    bits:
      _flags: { manual: "&0x01?", away: "&0x02?", boost: "&0x04?", window: "&0x10?", locked: "&0x20?", battery_low: "&0x80?" }
commands:
  set_temperature:     # 4.5 °C is "off", 30 °C "on"
    parameters: { temperature: { min: 4.5, max: 30, step: 0.5, unit: "°C" } }
    steps:
      - write: { characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09", value: "41 {temperature*2|u8}", response: true }
    expect: &status { notify: "d0e8434d-cd29-0996-af41-6c90f4e0eb2a", first_byte: { "02": ok } }
  auto:
    steps: [{ write: { characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09", value: "4000", response: true } }]
    expect: *status
  manual:
    steps: [{ write: { characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09", value: "4040", response: true } }]
    expect: *status
  boost_on:
    steps: [{ write: { characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09", value: "4501", response: true } }]
    expect: *status
  boost_off:
    steps: [{ write: { characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09", value: "4500", response: true } }]
    expect: *status
  comfort:
    steps: [{ write: { characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09", value: "43", response: true } }]
    expect: *status
  eco:
    steps: [{ write: { characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09", value: "44", response: true } }]
    expect: *status
  lock:
    steps: [{ write: { characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09", value: "8001", response: true } }]
    expect: *status
  unlock:
    steps: [{ write: { characteristic: "3fa4585a-ce4a-3bad-db4b-b8df8179ea09", value: "8000", response: true } }]
    expect: *status
climate:
  temperature_command: set_temperature
  temperature_value: target_temperature
  min_temp: 4.5
  max_temp: 30
  temp_step: 0.5

"""#
}
