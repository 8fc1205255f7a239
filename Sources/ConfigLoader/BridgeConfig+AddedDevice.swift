import BridgeCore
import YAMLKit

extension BridgeConfig {
    /// The path run-time device entries are reported under: the one a single-entry `devices:` list of bridge.yaml
    /// gives, so that `device/add` answers with the words `check-config` uses for the same entry.
    public static let addedDevicePath = "devices[0]"

    /// Decodes a device entry added at run time (SPEC §14: a `device/add` payload, a retained
    /// `{base}/config/devices/{segment}`): a `devices:` entry of bridge.yaml as a JSON object, checked by the same
    /// decoder and with the same messages. `${VAR}` is not expanded (the entry comes from the network), `name` is
    /// required (it is the entry's key on the broker), and `profile` refers to this configuration's profiles.
    /// Whether the name or address is taken is the caller's business (``BridgeConfig/devices``).
    /// - Throws: ``ConfigError`` (its ``ConfigError/message`` is what an answer says).
    public func decodeAddedDevice(_ entry: JSONValue) throws(ConfigError) -> Device {
        var decoder = ConfigDecoder(fileName: "device/add", environment: [:], hostName: "")
        decoder.expandsVariables = false
        decoder.profiles = profiles
        let path = Self.addedDevicePath
        guard case .object(let object) = entry else {
            throw decoder.error(.wrongType, "expected a mapping for '\(path)', found \(entry.kindName)", at: nil)
        }
        guard object["name"] != nil else {
            throw decoder.error(.missingKey, "missing required key 'name' in '\(path)'", at: nil)
        }
        var names: [String: ConfigDecoder.Position?] = [:]
        var addresses: [BluetoothAddress: ConfigDecoder.Position?] = [:]
        return try decoder.decodeDevice(
            ConfigDecoder.Located(node: Self.yamlNode(entry), path: path), names: &names, addresses: &addresses)
    }

    /// The JSON value as the YAML tree the decoder reads: strings as quoted scalars (`"yes"` stays text), numbers,
    /// booleans and null as plain ones.
    static func yamlNode(_ value: JSONValue) -> YAMLNode {
        let mark = YAMLMark(line: 1, column: 1)
        switch value {
        case .null: return .scalar(YAMLScalar("null", mark: mark))
        case .bool(let b): return .scalar(YAMLScalar(b ? "true" : "false", mark: mark))
        case .integer(let i): return .scalar(YAMLScalar(String(i), mark: mark))
        case .number: return .scalar(YAMLScalar(value.jsonString, mark: mark))
        case .string(let s): return .scalar(YAMLScalar(s, style: .doubleQuoted, mark: mark))
        case .array(let items): return .sequence(YAMLSequence(items.map(yamlNode), mark: mark))
        case .object(let object):
            return .mapping(YAMLMapping(
                object.members.map { .init(key: .scalar(YAMLScalar($0.key, style: .doubleQuoted, mark: mark)), value: yamlNode($0.value)) },
                mark: mark))
        }
    }
}
