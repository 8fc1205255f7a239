import BridgeCore
import RuntimeCore
import Synchronization

/// The devices the bridge manages, as everyone outside a session sees them: which session has
/// which topic segment and object path, and the state it last reported.
///
/// Written only by the supervisor: it adds and removes entries, and records what the sessions
/// report (``SessionReport``: link, availability, services) as ``SupervisorCore`` keeps it;
/// read by command intake, `bridge/devices` and health.
final class DeviceRegistry: Sendable {
    /// One managed device.
    struct Entry: Sendable {
        var path: String
        var segment: String
        var address: BluetoothAddress
        var addressType: String
        /// The connection policy (SPEC §6, §7); `bridge/devices` and health show its ``ConnectionPolicy/name``.
        var policy: ConnectionPolicy
        var mailbox: Mailbox<SessionInput>
        /// A link is up (from the Connect reply or `Connected`).
        var connected = false
        /// The published availability.
        var available = false
        /// Resolved service segments while connected.
        var services: [String] = []
        /// Links that came up since start (health: `reconnects` is one less).
        var connects = 0
        /// The adapter the device is reached through (`bridge/devices` and health name it, SPEC §10).
        var adapter: String { BlueZNames.adapterName(of: path) }
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// Adds a device (keyed by object path).
    func add(_ entry: Entry) {
        entries.withLock { $0[entry.path] = entry }
    }

    /// Removes a device; returns its entry.
    @discardableResult
    func remove(path: String) -> Entry? {
        entries.withLock { $0.removeValue(forKey: path) }
    }

    /// The device with this topic segment.
    func entry(segment: String) -> Entry? {
        entries.withLock { all in all.values.first { $0.segment == segment } }
    }

    /// Writes what the sessions reported of a device, as the supervisor keeps it (the supervisor
    /// is the only writer).
    func record(_ record: DeviceRecord) {
        entries.withLock { all in
            guard var e = all[record.path] else { return }
            e.connected = record.connected
            e.available = record.available
            e.services = record.services
            e.connects = record.connects
            all[record.path] = e
        }
    }

    /// Every device, by segment.
    var all: [Entry] {
        entries.withLock { Array($0.values) }.sorted { $0.segment < $1.segment }
    }
}
