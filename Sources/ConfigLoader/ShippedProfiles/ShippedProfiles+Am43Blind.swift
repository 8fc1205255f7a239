extension ShippedProfiles {
    /// profiles/am43_blind.yaml, byte for byte (written by scripts/shipped-profiles).
    static let am43Blind = #"""
# AM43 blind motor (A-OK, Zemismart "Blinds Drive"). One characteristic, fe51, takes frames
# 00 ff 00 00 | 9a cmd len data | xor and notifies answers 9a cmd len data xor (the XOR covers the
# bytes from 9a); byte 3 of an answer is 5a (ACK) or a5 (NACK). The PIN (default 8888) is sent
# first on every connection. The motor counts 0 = open, 100 = closed; Home Assistant counts the
# other way, so positions are turned round here.
# Sources: esphome am43 (am43_base, cover), buxtronix/am43 (PIN, ACK/NACK), binsentsu/am43-ctrl
# and TheBazeman's README (captured frames), devbis/ble2mqtt am43 (answer layouts).
id: am43_blind
manufacturer: A-OK
model: AM43
recognize: { name: "Blind", services: ["fe50"] }
connection: poll            # one client at a time: let the app in between
interval: 15m
options:
  pin: { type: integer, optional: true }   # the blind's PIN when it is not 8888
values:
  position: { unit: "%" }
steps:
  - subscribe: { characteristic: "fe51" }
  - write: { characteristic: "fe51", value: "00ff0000 9a1702 {options.pin|u16be} {xor8|from=4}" }
    if: options.pin
  - write: { characteristic: "fe51", value: "00ff0000 9a1702 22b8 15" }      # PIN 8888
    unless: options.pin
  - wait_notify: { characteristic: "fe51", timeout: 5s }
  - write: { characteristic: "fe51", value: "00ff0000 9aa20101 38" }         # battery query
  - wait_notify: { characteristic: "fe51", timeout: 5s, decode: battery }
  - write: { characteristic: "fe51", value: "00ff0000 9aa70101 3d" }         # position query (answers a7, a8, a9)
  - wait_notify: { characteristic: "fe51", timeout: 5s, decode: position }
decode:
  # 9a a2 05 00 00 00 00 51 6c: battery 81 %
  battery: { struct: "<7xB", fields: { battery: "" } }
  # 9a a7 07 0e 32 00 00 00 00 30 36: position 0 on the motor (open) = 100 in Home Assistant
  position: { struct: "<5xB", fields: { position: "100-x" } }
commands:
  open:
    steps: [{ write: { characteristic: "fe51", value: "00ff0000 9a0d0100 96" } }]
    expect: &ack { notify: "fe51", offset: 3, first_byte: { "5a": ok, "a5": refused } }
  close:
    steps: [{ write: { characteristic: "fe51", value: "00ff0000 9a0d0164 f2" } }]
    expect: *ack
  stop:
    steps: [{ write: { characteristic: "fe51", value: "00ff0000 9a0a01cc 5d" } }]
    expect: *ack
  position:
    parameters: { position: { min: 0, max: 100, unit: "%" } }
    steps: [{ write: { characteristic: "fe51", value: "00ff0000 9a0d01 {100-position|u8} {xor8|from=4}" } }]
    expect: *ack
cover: { open: open, close: close, stop: stop, position: position, position_value: position }

"""#
}
