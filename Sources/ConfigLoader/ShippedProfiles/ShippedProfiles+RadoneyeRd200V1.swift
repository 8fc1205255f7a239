extension ShippedProfiles {
    /// profiles/radoneye_rd200_v1.yaml, byte for byte (written by scripts/shipped-profiles).
    static let radoneyeRd200V1 = #"""
# RadonEye RD200, first protocol (names FR:R2..., random address, vendor base UUIDs). Writes go to
# 1524 without response; 50 is answered on 1525 by the radon frame (floats in pCi/L), 51 by the
# uptime and peak frame. 1 pCi/L = 37 Bq/m³.
# Sources: sormy/radoneye (KNOWLEDGE_V1.md, interface_v1.py, tests: the captured frames),
# ceandre/radonreader, jdeath/rd200v2, esphome radon_eye_rd200.
id: radoneye_rd200_v1
manufacturer: Ecosense
model: RD200
recognize: { name: "FR:R2*", services: ["00001523-1212-efde-1523-785feabcd123"] }
connection: poll
interval: 10m
values:
  radon: { unit: "Bq/m³" }
  radon_1day: { unit: "Bq/m³" }
  radon_1month: { unit: "Bq/m³" }
  radon_peak: { unit: "Bq/m³" }
steps:
  - subscribe: { characteristic: "00001525-1212-efde-1523-785feabcd123" }
  - write: { characteristic: "00001524-1212-efde-1523-785feabcd123", value: "50", response: false }
  - wait_notify: { characteristic: "00001525-1212-efde-1523-785feabcd123", timeout: 10s, decode: frame }
  - write: { characteristic: "00001524-1212-efde-1523-785feabcd123", value: "51", response: false }
  - wait_notify: { characteristic: "00001525-1212-efde-1523-785feabcd123", timeout: 10s, decode: frame }
decode:
  # 50 10 e1 7a 14 3f f6 28 bc 3f ...: 0.58 pCi/L now, 1.47 today; 51 0e ... 50 b1 0c 40: peak 2.198 pCi/L
  frame: { first_byte: { "50": radon, "51": peak } }
  radon: { struct: "<2xfff", fields: { radon: "*37", radon_1day: "*37", radon_1month: "*37" } }
  peak: { struct: "<12xf", fields: { radon_peak: "*37" } }
commands:
  beep:
    steps: [{ write: { characteristic: "00001524-1212-efde-1523-785feabcd123", value: "a1", response: false } }]

"""#
}
