extension ShippedProfiles {
    /// profiles/inkbird_ibbq.yaml, byte for byte (written by scripts/shipped-profiles).
    static let inkbirdIbbq = #"""
# Inkbird iBBQ thermometers (IBT-2X, IBT-4XS, IBT-6XS; name "iBBQ"). A fixed login key is written to
# fff2 first; then 0b 01 on fff5 starts the probe stream on fff4 (every ~2 s: 2 bytes per probe,
# tenths of °C, always Celsius; f6 ff = no probe plugged in). The thermometer is mains or
# rechargeable powered and streams during a cook: keep the link.
# Sources: uucidl's iBBQ protocol gist, sworisbreathing/go-ibbq, atessmer/ibbqweb,
# gleeds/cloudbbq, zewelor/bt-mqtt-gateway ibbq worker (every source agrees on the bytes).
id: inkbird_ibbq
manufacturer: Inkbird
model: iBBQ
recognize: { name: "iBBQ", services: ["fff0"] }
connection: always
steps:
  - write: { characteristic: "fff2", value: "2107060504030201b8220000000000", response: true }
  - subscribe: { characteristic: "fff1" }
  - subscribe: { characteristic: "fff4", decode: probes }
  - write: { characteristic: "fff5", value: "0b0100000000" }
decode:
  # c8 00 d2 00: probe 1 20.0 °C, probe 2 21.0 °C; f6 ff: not plugged in (left out)
  probes:
    struct: "<h"
    repeat: 6
    fields: { temperature_probe: { scale: "/10", absent_if: [-10] } }
commands:
  units_celsius:         # the display only: values are always sent in Celsius
    steps: [{ write: { characteristic: "fff5", value: "020000000000" } }]
  units_fahrenheit:
    steps: [{ write: { characteristic: "fff5", value: "020100000000" } }]
  silence_alarm:
    steps: [{ write: { characteristic: "fff5", value: "04ff00000000" } }]

"""#
}
