import YAMLKit

/// The replay keys of a device: `replay` (captured advertisements sent in turn) and
/// `advertising_interval` (the device's own advertising period).
extension ScenarioReader {
    /// `replay: [{service_data: {fe95: "…"}, manufacturer_data: {0x0969: "…"}, name: "…", uuids: [fee5]}, …]`
    /// and `advertising_interval: 500ms`.
    func replay(_ m: [String: Node], device: Node, into spec: inout PeripheralSpec) throws(ScenarioError) {
        if let n = m["advertising_interval"] {
            let interval = try duration(n)
            guard interval >= .milliseconds(1) else { throw fail(n, "advertising_interval must be at least 1ms") }
            spec.advertisingInterval = interval
        }
        guard let n = m["replay"] else { return }
        if let b = m["broadcast"] { throw fail(b, "a device has either broadcast or replay, not both") }
        let items = try sequence(n, "replay")
        guard !items.isEmpty else { throw fail(n, "replay needs at least one frame") }
        spec.replay = try items.map { item throws(ScenarioError) in try replayFrame(item) }
    }

    /// One frame: at least one of `service_data`, `manufacturer_data`, `name`, `uuids`.
    func replayFrame(_ node: Node) throws(ScenarioError) -> ReplayFrame {
        let m = try mapping(node, "replay frame", keys: ["service_data", "manufacturer_data", "name", "uuids"])
        guard !m.isEmpty else {
            throw fail(node, "a replay frame needs service_data, manufacturer_data, name or uuids")
        }
        var frame = ReplayFrame()
        if let n = m["service_data"] {
            for (k, v) in try pairs(n, "service_data") {
                let key = try uuid(k)
                guard frame.serviceData.updateValue(try bytes(v), forKey: key) == nil else {
                    throw fail(k, "service data UUID given twice")
                }
            }
        }
        if let n = m["manufacturer_data"] {
            for (k, v) in try pairs(n, "manufacturer_data") {
                let key = UInt16(try integer(k, in: 0...0xffff))
                guard frame.manufacturerData.updateValue(try bytes(v), forKey: key) == nil else {
                    throw fail(k, "company id given twice")
                }
            }
        }
        if let n = m["name"] { frame.name = try string(n) }
        if let n = m["uuids"] {
            frame.uuids = try sequence(n, "uuids").map { s throws(ScenarioError) in try uuid(s) }
        }
        return frame
    }
}
