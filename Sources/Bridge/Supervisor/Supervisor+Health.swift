import BlueZ
import BridgeCore

#if canImport(Glibc)
import Glibc
#endif

/// Health (SPEC §9): `{base}/bridge/health` every `health.interval`, and the answer of
/// `bridge/request/health_check`.
extension Supervisor {
    /// The health object: uptime, RSS, MQTT and BlueZ state, and per device its link, RSSI,
    /// values, reconnects and the age of its last value.
    func healthObject() -> JSONObject {
        let now = self.now
        var health = JSONObject()
        health.append("uptime_s", .number(Double(startedAt.duration(to: now).components.seconds)))
        health.append("rss_bytes", Self.residentBytes().map { .integer($0) } ?? .null)
        let mqtt: JSONObject = [
            "published": .integer(Int64(clamping: ctx.router.published)),
            "dropped": .integer(Int64(clamping: ctx.router.failed)),
            "reconnects": .integer(Int64(max(0, brokerConnections - 1))),
        ]
        health.append("mqtt", .object(mqtt))
        let adapter = central.withTree { $0.properties(path: adapterPath, interface: BlueZ.adapter) }
        let bluez: JSONObject = [
            "available": .bool(central.isAvailable),
            "adapter": .string(config.bluetooth.adapter),
            "adapter_present": .bool(adapter != nil),
            "powered": .bool(adapter?["Powered"]?.bool ?? false),
            "discovering": .bool(adapter?["Discovering"]?.bool ?? false),
        ]
        health.append("bluez", .object(bluez))
        let values = ctx.router.perDevice
        let nowNs = ValueRouter.nowNs()
        var devices = JSONObject()
        for e in ctx.registry.all {
            let snapshot = central.withTree { $0.device(e.path) }
            var d = JSONObject()
            d.append("connected", .bool(e.connected || (snapshot?.connected ?? false)))
            d.append("available", .bool(e.available))
            if let rssi = snapshot?.rssi, rssi != 127 { d.append("rssi", .integer(Int64(rssi))) } else { d.append("rssi", .null) }
            let v = values[e.segment]
            d.append("values", .integer(Int64(clamping: v?.count ?? 0)))
            d.append("reconnects", .integer(Int64(max(0, e.connects - 1))))
            if let last = v?.lastNs, last > 0 {
                d.append("last_value_age_s", .number(Double(nowNs &- last) / 1e9))
            } else {
                d.append("last_value_age_s", .null)
            }
            d.append("connection", .string(e.policy))
            devices.append(e.segment, .object(d))
        }
        health.append("devices", .object(devices))
        let slots: JSONObject = [
            "max": .integer(Int64(config.bluetooth.maxConnections)),
            "in_use": .integer(Int64(ctx.slots.inUse)),
            "waiting": .integer(Int64(ctx.slots.waiting.count)),
        ]
        health.append("connection_slots", .object(slots))
        return health
    }

    /// Publishes `{base}/bridge/health` and schedules the next one.
    func publishHealth() {
        guard let interval = config.health.interval else { return }
        healthAt = now.advanced(by: interval)
        ctx.broker.publish(
            topic: ctx.topics.baseTopic + "/bridge/health", payload: JSONValue.object(healthObject()).jsonBytes, qos: 0,
            retain: false)
    }

    /// The process's resident set size, from `/proc/self/statm`.
    static func residentBytes() -> Int64? {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        let fields = buffer[0..<n].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}
