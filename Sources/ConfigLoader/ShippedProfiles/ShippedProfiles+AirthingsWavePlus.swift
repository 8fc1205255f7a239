extension ShippedProfiles {
    /// profiles/airthings_wave_plus.yaml, byte for byte (written by scripts/shipped-profiles).
    static let airthingsWavePlus = #"""
# Airthings Wave Plus (2930). A read of b42e2a68 gives every value (version byte 1 first); the
# battery is asked for with 6d on the command characteristic b42e2d06 and indicated there
# (6d 00 + 28 bytes, millivolts at byte 26). Radon above 16383 Bq/m³ means "not available".
# Sources: Airthings/airthings-ble (const, sensor decoders, command decode, tests),
# Airthings/waveplus-reader, esphome airthings_wave_plus.
id: airthings_wave_plus
manufacturer: Airthings
model: Wave Plus
recognize: { services: ["b42e1c08-ade7-11e4-89d3-123b93f75cba"] }
connection: poll            # the app and other clients need the link too
interval: 10m
values:
  radon_1day: { unit: "Bq/m³" }
  radon_longterm: { unit: "Bq/m³" }
  voc: { unit: "ppb", device_class: volatile_organic_compounds_parts }
steps:
  - read: { characteristic: "b42e2a68-ade7-11e4-89d3-123b93f75cba", decode: current }
  - subscribe: { characteristic: "b42e2d06-ade7-11e4-89d3-123b93f75cba" }
  - write: { characteristic: "b42e2d06-ade7-11e4-89d3-123b93f75cba", value: "6d" }
  - wait_notify: { characteristic: "b42e2d06-ade7-11e4-89d3-123b93f75cba", timeout: 5s, decode: command }
decode:
  # 01 38 0d 80 0b00 2200 bd09 4cc3 1d03 6c00 ...: 28.0 %, radon 11 / 34, 24.93 °C, 999.92 hPa, CO2 797, VOC 108
  current: { first_byte: { "01": wave_plus } }
  wave_plus:
    struct: "<xBxxHHHHHH"
    fields:
      humidity: "/2"
      radon_1day: { valid: [0, 16383] }
      radon_longterm: { valid: [0, 16383] }
      temperature: "/100"
      pressure: "/50"
      co2: { valid: [0, 65534] }
      voc: { valid: [0, 65534] }
  # 6d 00 ... b8 0b (byte 26): 3.000 V
  command: { first_byte: { "6d": battery } }
  battery: { struct: "<26xH", fields: { battery_voltage: "/1000" } }
commands: {}

"""#
}
