extension ShippedProfiles {
    /// profiles/switchbot_bot.yaml, byte for byte (written by scripts/shipped-profiles).
    static let switchbotBot = #"""
# SwitchBot Bot (WoHand). Requests go to cba20002, the answer is one notification on cba20003
# whose first byte is the status. With a password set in the app, every request carries the
# CRC-32 of the password, big-endian (57 11 CRC ... instead of 57 01 ...); there is no login.
# Sources: OpenWonderLabs/SwitchBotAPI-BLE (devicetypes/bot.md: requests, status codes, the
# captured answers), sblibs/pySwitchbot (bot.py, device.py), RoButton/switchbotpy.
id: switchbot_bot
manufacturer: SwitchBot
model: Bot (WoHand)
recognize: { service_data: ["fd3d", "0d00"] }
connection: poll            # battery powered: connect for the status and for commands only
interval: 1h
options:
  password: { type: string, optional: true }
steps:
  - subscribe: { characteristic: "cba20003-224d-11e6-9fb8-0002a5d5c51b" }
  - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "5702" }
    unless: options.password
  - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "5712 {options.password|crc32be}" }
    if: options.password
  - wait_notify: { characteristic: "cba20003-224d-11e6-9fb8-0002a5d5c51b", timeout: 5s, decode: info }
decode:
  # 01 64 2c 64 00 00 00 a1 00 00 00 48 00: status ok, battery 100 %, firmware 4.4
  # a refusal (07 password required, 08 no password set, 09 wrong password) carries no values:
  # the commands' answers report it
  info: { first_byte: { "01": basic_info, "07": refusal, "08": refusal, "09": refusal } }
  refusal: { struct: "<B", fields: { _status: "" } }
  basic_info: { struct: ">xB", fields: { battery: "" } }
commands:
  press:
    steps:
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570100" }
        unless: options.password
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "5711 {options.password|crc32be} 00" }
        if: options.password
    expect: &answers
      notify: "cba20003-224d-11e6-9fb8-0002a5d5c51b"
      # 05: the Bot is in switch mode; pySwitchbot counts it as done for press, on and off.
      first_byte: { "01": ok, "05": ok, "02": device_error, "03": busy, "06": low_battery,
                    "07": password_required, "08": no_password_set, "09": wrong_password }
  "on":
    steps:
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570101" }
        unless: options.password
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "5711 {options.password|crc32be} 01" }
        if: options.password
    expect: *answers
  "off":
    steps:
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570102" }
        unless: options.password
      - write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "5711 {options.password|crc32be} 02" }
        if: options.password
    expect: *answers

"""#
}
