extension ShippedProfiles {
    /// profiles/radoneye_rd200.yaml, byte for byte (written by scripts/shipped-profiles).
    static let radoneyeRd200 = #"""
# RadonEye RD200N / RD200V3 (Ecosense, FTLab; names FR:RU..., FR:RE..., FR:GI...). Writes go to 1524
# without response; 40 is answered by one 68-byte status frame notified on 1525 (it needs an ATT
# MTU of at least 71, which BlueZ negotiates). Values in Bq/m³. The older RD200 (FR:R2...) speaks
# another protocol: radoneye_rd200_v1.
# Sources: sormy/radoneye (KNOWLEDGE_V2.md, interface_v2.py, tests: the captured frames),
# jdeath/rd200v2, esphome radon_eye_rd200.
id: radoneye_rd200
manufacturer: Ecosense
model: RD200N / RD200V3
recognize: { services: ["1523"] }
connection: poll            # one client at a time (the app holds the link while open)
interval: 10m
values:
  radon: { unit: "Bq/m³" }
  radon_1day: { unit: "Bq/m³" }
  radon_1month: { unit: "Bq/m³" }
  radon_peak: { unit: "Bq/m³" }
steps:
  - subscribe: { characteristic: "1525" }
  - write: { characteristic: "1524", value: "40", response: false }
  - wait_notify: { characteristic: "1525", timeout: 10s, decode: status }
decode:
  # the 68-byte frame: radon at 0x21, day 0x23, month 0x25, peak 0x33 (u16 LE, Bq/m³)
  status: { first_byte: { "40": v2 } }
  v2: { struct: "<33xHHH12xH", fields: { radon: "", radon_1day: "", radon_1month: "", radon_peak: "" } }
commands:
  beep:
    steps: [{ write: { characteristic: "1524", value: "a1", response: false } }]

"""#
}
