import BridgeCore
import DBusKit

/// What each fuzz target feeds its input to: the parsers that take untrusted input.
enum FuzzTargets {
    /// The targets, by the name `FUZZ_TARGET` (or the replayer's first argument) selects.
    static let all: [String: @Sendable ([UInt8]) -> Void] = [
        "json": { bytes in _ = try? JSONParser.parse(bytes) },
        "write": { bytes in
            for format in ValueFormat.allCases { _ = WriteCommand.parse(bytes, format: format) }
        },
        "read": { bytes in _ = ReadCommand.parse(bytes) },
        "topic": { bytes in
            let mapper = TopicMapper(baseTopic: "ble")
            _ = mapper.parse(String(decoding: bytes, as: UTF8.self))
        },
        "config": { bytes in
            _ = try? BridgeConfig.parse(
                yaml: String(decoding: bytes, as: UTF8.self), fileName: "fuzz.yaml", environment: ["X": "1"], hostName: "h")
        },
        "value": { bytes in
            for format in ValueFormat.allCases { _ = ValuePayload.make(raw: bytes, format: format) }
        },
        "dbus": { bytes in _ = DBusFuzzing.decodeMessage(bytes) },
    ]

    static func run(_ name: String, _ bytes: [UInt8]) {
        guard let target = all[name] else {
            fatalError("unknown fuzz target '\(name)' (known: \(all.keys.sorted().joined(separator: ", ")))")
        }
        target(bytes)
    }
}
