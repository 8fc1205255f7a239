extension ShippedProfiles {
    /// profiles/xiaomi_lywsd03mmc.yaml, byte for byte (written by scripts/shipped-profiles).
    static let xiaomiLywsd03mmc = #"""
# Xiaomi LYWSD03MMC thermometer, stock firmware, read over GATT (no bind key needed).
# The live frame is notified on ebe0ccc1 only to a subscribed client, at an undocumented period
# (drivers wait 15-60 s); the battery is a one-byte read of ebe0ccc4.
# Sources: JsBergbau/MiTemperature2 (README, LYWSD03MMC.py), devbis/ble2mqtt xiaomi_lywsd03.py,
# Gadgetbridge MijiaLywsdSupport, a bleak dump of a real device. With custom firmware (pvvx/ATC)
# the bridge decodes its advertisements instead (SPEC §13): no connection, no battery cost.
id: xiaomi_lywsd03mmc
manufacturer: Xiaomi
model: LYWSD03MMC
recognize: { name: "LYWSD03MMC" }
connection: poll            # a connection costs the coin cell: poll, and not too often
interval: 10m
steps:
  - subscribe: { characteristic: "ebe0ccc1-7a0a-4b0c-8a1a-6ff2997da3a6" }
  - wait_notify: { characteristic: "ebe0ccc1-7a0a-4b0c-8a1a-6ff2997da3a6", timeout: 60s, decode: live }
  - read: { characteristic: "ebe0ccc4-7a0a-4b0c-8a1a-6ff2997da3a6", decode: battery }
decode:
  # f8 07 4a d6 0b: 20.40 °C, 74 %, 3.030 V
  live: { struct: "<hBH", fields: { temperature: "/100", humidity: "", voltage: "/1000" } }
  battery: { struct: "<B", fields: { battery: "" } }
commands: {}

"""#
}
