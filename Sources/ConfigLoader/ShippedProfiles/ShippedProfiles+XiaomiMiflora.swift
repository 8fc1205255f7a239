extension ShippedProfiles {
    /// profiles/xiaomi_miflora.yaml, byte for byte (written by scripts/shipped-profiles).
    static let xiaomiMiflora = #"""
# Xiaomi Mi Flora plant sensor (HHCCJCY01). Its sensor characteristic 1a01 answers a constant
# garbage frame until A0 1F is written to the mode characteristic 1a00, so the mode is written on
# every connection, then the real-time frame and the battery are read. Sources: the miflora library
# (test_parse.py) and the "Flower Care ESP32" README.
#   1a01: int16 temperature (0.1 °C), a pad byte, uint32 illuminance (lx), uint8 moisture (%),
#         uint16 conductivity (µS/cm), 6 bytes unused.
#   1a02: uint8 battery (%), then the firmware version (not decoded).
id: xiaomi_miflora
manufacturer: Xiaomi
model: HHCCJCY01
recognize: { name: "Flower care", service_data: ["fe95"] }
connection: poll
interval: 30m
options: {}
steps:
  - write: { characteristic: "00001a00-0000-1000-8000-00805f9b34fb", value: "a01f" }
  - read: { characteristic: "00001a01-0000-1000-8000-00805f9b34fb", decode: sensors }
  - read: { characteristic: "00001a02-0000-1000-8000-00805f9b34fb", decode: info }
decode:
  sensors: { struct: "<hxIBH6x", fields: { temperature: "/10", illuminance: "", moisture: "", conductivity: "" } }
  info:    { struct: "<B", fields: { battery: "" } }
commands:
  blink:                 # the LED blinks once: which plant is this?
    steps: [{ write: { characteristic: "00001a00-0000-1000-8000-00805f9b34fb", value: "fdff" } }]

"""#
}
