import YAMLKit

/// The presence keys of a device (SPEC §12's trackers, from the advertiser's side): `irk` with `rotate_every` (a
/// phone that advertises from resolvable private addresses), `ibeacon` (Apple's iBeacon manufacturer data).
extension ScenarioReader {
    /// `irk: "<32 hex digits, most significant byte first>"`, `rotate_every: 30s` (with `irk`; default 15m, at least
    /// 500ms) and `ibeacon: "uuid:major:minor"` (measured power -59 dBm).
    func privacy(_ m: [String: Node], device: Node, into spec: inout PeripheralSpec) throws(ScenarioError) {
        if let n = m["irk"] {
            let text = try string(n)
            guard let key = PrivacyKey(hex: text) else {
                throw fail(n, "irk must be 32 hex digits (16 bytes, most significant first)")
            }
            if let t = m["address_type"], spec.addressType != "random" {
                throw fail(t, "a device with an irk advertises random addresses (address_type: random)")
            }
            spec.irk = key
            spec.addressType = "random"
            if let r = m["rotate_every"] {
                let every = try duration(r)
                guard every >= .milliseconds(500) else { throw fail(r, "rotate_every must be at least 500ms") }
                spec.rotateEvery = every
            }
        } else if let r = m["rotate_every"] {
            throw fail(r, "rotate_every goes with irk")
        }
        if let n = m["ibeacon"] {
            let text = try string(n)
            guard let beacon = IBeaconAdvertisement(identity: text, measuredPower: -59) else {
                throw fail(n, "ibeacon must be uuid:major:minor (a 128-bit UUID, two numbers 0...65535)")
            }
            if spec.manufacturerData[IBeaconAdvertisement.companyID] != nil {
                throw fail(n, "ibeacon and manufacturer_data 0x004c both set Apple's manufacturer data")
            }
            spec.manufacturerData[IBeaconAdvertisement.companyID] = beacon.manufacturerData
        }
    }
}
