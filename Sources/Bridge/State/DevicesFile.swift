import BridgeBase
import BridgeCore
import Logging

/// `devices_file` (SPEC §14): this bridge's copy of the devices added at run time, `{"devices": [<entry>, ...]}`,
/// written atomically and readable by its owner only (entries may hold bindkeys and passkeys). The bridge starts with
/// them while the broker is away; a corrupt file is reported and ignored (the broker's entries then count).
struct DevicesFile: Sendable {
    let path: String
    let logger: Logger

    /// The entries; empty when the file is missing or unusable (logged).
    func load() -> [JSONValue] {
        let bytes: [UInt8]
        switch readFile(path, limit: 4 << 20) {
        case .success(let read): bytes = read
        case .failure(let error):
            if !error.isMissing { logger.error("cannot read devices_file \(path): \(error); starting without it") }
            return []
        }
        guard let root = try? JSONParser.parse(bytes), let entries = root["devices"]?.arrayValue else {
            logger.error("devices_file \(path) is not {\"devices\": [...]}: starting without it (the broker's entries count)")
            return []
        }
        return entries
    }

    /// Writes the entries atomically; logs a failure.
    func save(_ entries: [JSONValue]) {
        AtomicFile.makeParentDirectories(of: path)
        var root = JSONObject()
        root.append("devices", .array(entries))
        if let failure = AtomicFile.write(JSONValue.object(root).jsonBytes, to: path, mode: 0o600) {
            logger.error("cannot write devices_file \(failure)")
        }
    }
}
