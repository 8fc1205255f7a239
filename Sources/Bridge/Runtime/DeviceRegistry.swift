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
    /// One managed device: what the supervisor last recorded of it, and its session's inbox.
    struct Entry: Sendable {
        var record: DeviceRecord
        var mailbox: Mailbox<SessionInput>
        /// The adapter the device is reached through (`bridge/devices` and health name it, SPEC §10).
        var adapter: String { BlueZNames.adapterName(of: record.path) }
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// Adds a device (keyed by object path).
    func add(_ entry: Entry) {
        entries.withLock { $0[entry.record.path] = entry }
    }

    /// Removes a device; returns its entry.
    @discardableResult
    func remove(path: String) -> Entry? {
        entries.withLock { $0.removeValue(forKey: path) }
    }

    /// The device with this topic segment.
    func entry(segment: String) -> Entry? {
        entries.withLock { all in all.values.first { $0.record.segment == segment } }
    }

    /// Writes what the sessions reported of a device, as the supervisor keeps it (the supervisor
    /// is the only writer).
    func record(_ record: DeviceRecord) {
        entries.withLock { all in all[record.path]?.record = record }
    }

    /// Every device, by segment.
    var all: [Entry] {
        entries.withLock { Array($0.values) }.sorted { $0.record.segment < $1.record.segment }
    }
}
