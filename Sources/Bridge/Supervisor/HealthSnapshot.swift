import BridgeCore
import RuntimeCore

/// The bridge's health at one moment (SPEC §9), rendered as the health JSON object and as
/// Prometheus text (node_exporter's textfile collector format).
struct HealthSnapshot: Sendable {
    struct Device: Sendable {
        var segment: String
        var connected: Bool
        var available: Bool
        var rssi: Int?
        var values: UInt64
        var reconnects: Int
        var lastValueAge: Double?
        var connection: String
        /// The adapter the device is reached through (SPEC §10); empty: not named.
        var adapter: String = ""
    }

    var uptime: Double
    var rssBytes: Int64?
    var published: UInt64
    var dropped: UInt64
    var mqttReconnects: Int
    var bluezAvailable: Bool
    var adapter: String
    var adapterPresent: Bool
    var powered: Bool
    var discovering: Bool
    var devices: [Device]
    var slotsMax: Int
    var slotsInUse: Int
    var slotsWaiting: Int
    /// Each adapter's slots (SPEC §10: health's per-adapter `slots` object).
    var adapterSlots: [String: SlotPool.Usage] = [:]
    /// With `cluster.enabled`: this bridge's view of the cluster.
    var cluster: Cluster?

    /// What a cluster member knows of the cluster (health's `cluster` object).
    struct Cluster: Sendable {
        /// This bridge's id.
        var bridge: String
        /// The wanted devices and their online owner (`nil`: none), by segment.
        var owners: [String: String?]
        /// The devices this bridge serves.
        var serving: [String]
        /// Every bridge seen on the broker, online or not (this one included).
        var bridges: [String: Bool]
    }

    /// The SPEC §9 object.
    var json: JSONObject {
        var health = JSONObject()
        health.append("uptime_s", .number(uptime.rounded()))
        health.append("rss_bytes", rssBytes.map { .integer($0) } ?? .null)
        let mqtt: JSONObject = [
            "published": .integer(Int64(clamping: published)), "dropped": .integer(Int64(clamping: dropped)),
            "reconnects": .integer(Int64(mqttReconnects)),
        ]
        health.append("mqtt", .object(mqtt))
        let bluez: JSONObject = [
            "available": .bool(bluezAvailable), "adapter": .string(adapter), "adapter_present": .bool(adapterPresent),
            "powered": .bool(powered), "discovering": .bool(discovering),
        ]
        health.append("bluez", .object(bluez))
        var list = JSONObject()
        for d in devices {
            var o = JSONObject()
            o.append("connected", .bool(d.connected))
            o.append("available", .bool(d.available))
            o.append("rssi", d.rssi.map { .integer(Int64($0)) } ?? .null)
            o.append("values", .integer(Int64(clamping: d.values)))
            o.append("reconnects", .integer(Int64(d.reconnects)))
            o.append("last_value_age_s", d.lastValueAge.map { .number($0) } ?? .null)
            o.append("connection", .string(d.connection))
            if !d.adapter.isEmpty { o.append("adapter", .string(d.adapter)) }
            list.append(d.segment, .object(o))
        }
        health.append("devices", .object(list))
        let slots: JSONObject = [
            "max": .integer(Int64(slotsMax)), "in_use": .integer(Int64(slotsInUse)), "waiting": .integer(Int64(slotsWaiting)),
        ]
        health.append("connection_slots", .object(slots))
        var perAdapter = JSONObject()
        for (name, usage) in adapterSlots.sorted(by: { $0.key < $1.key }) {
            let o: JSONObject = [
                "max": .integer(Int64(usage.max)), "in_use": .integer(Int64(usage.inUse)),
                "waiting": .integer(Int64(usage.waiting)),
            ]
            perAdapter.append(name, .object(o))
        }
        health.append("slots", .object(perAdapter))
        if let cluster {
            var owners = JSONObject()
            for (device, owner) in cluster.owners.sorted(by: { $0.key < $1.key }) {
                owners.append(device, owner.map { .string($0) } ?? .null)
            }
            var bridges = JSONObject()
            for (id, online) in cluster.bridges.sorted(by: { $0.key < $1.key }) {
                bridges.append(id, .string(online ? "online" : "offline"))
            }
            let object: JSONObject = [
                "bridge": .string(cluster.bridge), "serving": .array(cluster.serving.map { .string($0) }),
                "owners": .object(owners), "bridges": .object(bridges),
            ]
            health.append("cluster", .object(object))
        }
        return health
    }

    /// Prometheus text exposition format 0.0.4, names `ble_mqtt_bridge_…`.
    func prometheus(version: String) -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP ble_mqtt_bridge_\(name) \(help)\n# TYPE ble_mqtt_bridge_\(name) \(type)\n"
            for s in samples { out += "ble_mqtt_bridge_\(name)\(s.labels) \(s.value)\n" }
        }
        func one(_ value: some CustomStringConvertible) -> [(labels: String, value: String)] { [("", value.description)] }
        func flag(_ b: Bool) -> String { b ? "1" : "0" }
        func label(_ d: Device) -> String { "{device=\"\(Self.escape(d.segment))\"}" }
        metric("build_info", "gauge", "Version of the bridge.", [("{version=\"\(Self.escape(version))\"}", "1")])
        metric("uptime_seconds", "gauge", "Seconds since the bridge started.", one(Int64(uptime)))
        if let rssBytes { metric("resident_memory_bytes", "gauge", "Resident set size.", one(rssBytes)) }
        metric("mqtt_published_total", "counter", "Values published to the broker.", one(published))
        metric("mqtt_dropped_total", "counter", "Values the broker did not take (away).", one(dropped))
        metric("mqtt_reconnects_total", "counter", "Broker reconnections.", one(mqttReconnects))
        metric("bluez_available", "gauge", "Whether org.bluez is on the bus.", one(flag(bluezAvailable)))
        metric("adapter_powered", "gauge", "Whether the adapter is powered.", [("{adapter=\"\(Self.escape(adapter))\"}", flag(powered))])
        metric("discovering", "gauge", "Whether the adapter is scanning.", one(flag(discovering)))
        metric("connection_slots", "gauge", "bluetooth.max_connections, summed over the adapters.", one(slotsMax))
        metric("connection_slots_in_use", "gauge", "Links held or being opened.", one(slotsInUse))
        metric("connection_slots_waiting", "gauge", "Devices waiting for a link.", one(slotsWaiting))
        metric("device_connected", "gauge", "Whether the device is connected.", devices.map { (label($0), flag($0.connected)) })
        metric("device_available", "gauge", "The device's published availability.", devices.map { (label($0), flag($0.available)) })
        metric("device_values_total", "counter", "Values published for the device.", devices.map { (label($0), "\($0.values)") })
        metric("device_reconnects_total", "counter", "Links of the device that came up again.", devices.map { (label($0), "\($0.reconnects)") })
        metric("device_rssi_dbm", "gauge", "Last RSSI of the device.", devices.compactMap { d in d.rssi.map { (label(d), "\($0)") } })
        metric(
            "device_last_value_age_seconds", "gauge", "Seconds since the device's last value.",
            devices.compactMap { d in d.lastValueAge.map { (label(d), Self.threeDecimals($0)) } })
        if let cluster {
            metric("cluster_devices_served", "gauge", "Wanted devices this bridge serves (cluster).", one(cluster.serving.count))
            metric(
                "cluster_devices_unowned", "gauge", "Wanted devices no online bridge owns (cluster).",
                one(cluster.owners.values.filter { $0 == nil }.count))
            metric(
                "cluster_bridges_online", "gauge", "Bridges of the cluster online, this one included.",
                one(cluster.bridges.values.filter { $0 }.count))
        }
        return out
    }

    /// A label value with `\`, `"` and newlines escaped.
    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(c)
            }
        }
        return out
    }
}

extension HealthSnapshot {
    /// A non-negative number with three decimals, without Foundation.
    static func threeDecimals(_ value: Double) -> String {
        let ms = Int64((max(0, value) * 1000).rounded())
        let fraction = String(ms % 1000 + 1000).dropFirst()
        return "\(ms / 1000).\(fraction)"
    }
}
