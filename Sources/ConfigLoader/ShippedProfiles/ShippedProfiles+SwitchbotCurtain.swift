extension ShippedProfiles {
    /// profiles/switchbot_curtain.yaml, byte for byte (written by scripts/shipped-profiles).
    static let switchbotCurtain = #"""
# SwitchBot Curtain (WoCurtain). Same GATT and status codes as the Bot: requests to cba20002, one
# answer on cba20003, first byte the status; a password adds its CRC-32 (57 1f CRC ...).
# The device counts 0 = open, 100 = closed; Home Assistant counts 0 = closed, 100 = open, so
# positions are turned round here ({100-position}), as pySwitchbot's reverse mode does.
# Sources: OpenWonderLabs/SwitchBotAPI-BLE (devicetypes/curtain.md: the 0x45 request and its
# answer, status codes, basic info), sblibs/pySwitchbot (curtain.py, base_cover.py),
# OpenMQTTGateway ZgatewayBLEConnect (open/close/stop/move frames).
id: switchbot_curtain
manufacturer: SwitchBot
model: Curtain (WoCurtain)
recognize: { service_data: ["fd3d", "0d00"] }
connection: poll
interval: 30m
options:
  password: { type: string, optional: true }
values:
  position: { unit: "%" }
steps:
  - subscribe: { characteristic: "cba20003-224d-11e6-9fb8-0002a5d5c51b" }
  - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "5702" }
    unless: options.password
  - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "5712 {options.password|crc32be}" }
    if: options.password
  - wait_notify: { characteristic: "cba20003-224d-11e6-9fb8-0002a5d5c51b", timeout: 5s, decode: info }
decode:
  # basic info: status, battery %, firmware, chain length, flags, motion, position (0 = open), timers
  # a refusal (07 password required, 08 no password set, 09 wrong password) carries no values:
  # the commands' answers report it
  info: { first_byte: { "01": basic_info, "07": refusal, "08": refusal, "09": refusal } }
  refusal: { struct: "<B", fields: { _status: "" } }
  basic_info: { struct: "<xB4xB", fields: { battery: "", position: "100-x" } }
commands:
  open:
    steps:
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570f4501010100" }
        unless: options.password
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "571f {options.password|crc32be} 4501010100" }
        if: options.password
    expect: &answers
      notify: "cba20003-224d-11e6-9fb8-0002a5d5c51b"
      first_byte: { "01": ok, "02": device_error, "03": busy, "05": not_supported, "06": low_battery,
                    "07": password_required, "09": wrong_password, "0d": not_supported_in_mode }
  close:
    steps:
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570f4501010164" }
        unless: options.password
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "571f {options.password|crc32be} 4501010164" }
        if: options.password
    expect: *answers
  stop:
    steps:
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570f450100ff" }
        unless: options.password
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "571f {options.password|crc32be} 450100ff" }
        if: options.password
    expect: *answers
  position:
    parameters: { position: { min: 0, max: 100, unit: "%" } }
    steps:
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570f45010101 {100-position|u8}" }
        unless: options.password
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "571f {options.password|crc32be} 450101 01 {100-position|u8}" }
        if: options.password
    expect: *answers
cover: { open: open, close: close, stop: stop, position: position, position_value: position }

"""#
}
