import BlueZ
import BridgeBase
import BridgeCore
import RuntimeCore

#if canImport(Glibc)
import Glibc
#endif

/// Health (SPEC §9): `{base}/bridge/health` every `health.interval`, and the answer of
/// `bridge/request/health_check`.
extension Supervisor {
    /// The health figures now.
    func healthSnapshot() -> HealthSnapshot {
        let adapter = central.adapters().first { $0.path == config.bluetooth.adapterPath }
        let values = ctx.router.perDevice
        let now = self.now
        let devices = observedDevices.map { d -> HealthSnapshot.Device in
            let e = d.entry.record, v = values[e.segment]
            return HealthSnapshot.Device(
                segment: e.segment, connected: d.connected, available: e.available, rssi: d.rssi, values: v?.count ?? 0,
                reconnects: max(0, e.connects - 1), lastValueAge: v?.last.map { $0.duration(to: now).inSeconds },
                connection: e.policy.name, adapter: d.entry.adapter)
        }
        // The adapters configured (`all`: those seen so far) and every adapter with a session.
        let slots = ctx.slots.usage(adapters: core.knownAdapters)
        var snapshot = HealthSnapshot(
            uptime: Double(core.startedAt.duration(to: now).components.seconds), rssBytes: Self.residentBytes(),
            published: ctx.router.published, dropped: ctx.router.failed, mqttReconnects: max(0, core.brokerConnections - 1),
            bluezAvailable: central.isAvailable, adapter: config.bluetooth.adapter, adapterPresent: adapter != nil,
            powered: adapter?.powered ?? false, discovering: adapter?.discovering ?? false,
            devices: devices, slotsMax: slots.values.reduce(0) { $0 + $1.max }, slotsInUse: ctx.slots.inUse,
            slotsWaiting: ctx.slots.waiting.count, adapterSlots: slots)
        snapshot.cluster = core.cluster?.health
        return snapshot
    }

    /// The health object of SPEC §9.
    func healthObject() -> JSONObject { healthSnapshot().json }

    /// Publishes `{base}/bridge/health` and writes the metrics file (the core says when).
    func publishHealth() {
        let snapshot = healthSnapshot()
        ctx.broker.publish(
            topic: ctx.topics.bridgeHealth, payload: JSONValue.object(snapshot.json).jsonBytes, qos: 0,
            retain: false)
        if let path = config.health.metricsFile {
            let text = snapshot.prometheus(version: BridgeCommandLine.version)
            if let failure = AtomicFile.write(Array(text.utf8), to: path) {
                logger.warning("cannot write the metrics file \(failure)")
            }
        }
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
