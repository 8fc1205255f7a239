/// Why a cluster payload (`sightings`, `owner`) received from the broker was rejected.
///
/// A broker relays whatever any client publishes; the cluster code treats such a payload as absent
/// and logs this error, it never traps on it.
public struct ClusterPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// The payload is not JSON (the parser's message is in ``ClusterPayloadError/message``).
        case invalidJSON = "invalid_json"
        /// A required member is missing.
        case missingField = "missing_field"
        /// A member has the wrong JSON type.
        case wrongType = "wrong_type"
        /// A member has the right type but an impossible value (negative slots, a bad address, ...).
        case invalidValue = "invalid_value"
    }

    /// The kind of problem.
    public var code: Code
    /// Where: a path such as `devices.c8123456789a.rssi` (empty for the whole payload).
    public var path: String
    /// What is wrong, for the log.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, at path: String, _ message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    /// E.g. `invalid owner payload: devices.x.rssi: expected an integer or null, got string`.
    public var description: String {
        path.isEmpty ? message : "\(path): \(message)"
    }
}

/// Small typed accessors for decoding cluster payloads with path-carrying errors.
enum ClusterJSON {
    static func parse(_ bytes: [UInt8]) throws(ClusterPayloadError) -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, maxSize: 1 << 20, maxDepth: 8)
        } catch {
            throw ClusterPayloadError(.invalidJSON, at: "", error.description)
        }
        guard let object = value.objectValue else {
            throw ClusterPayloadError(.wrongType, at: "", "expected an object, got \(value.kindName)")
        }
        return object
    }

    static func member(_ object: JSONObject, _ key: String, _ path: String) throws(ClusterPayloadError) -> JSONValue {
        guard let value = object[key] else {
            throw ClusterPayloadError(.missingField, at: join(path, key), "missing")
        }
        return value
    }

    static func object(_ value: JSONValue, _ path: String) throws(ClusterPayloadError) -> JSONObject {
        guard let object = value.objectValue else {
            throw ClusterPayloadError(.wrongType, at: path, "expected an object, got \(value.kindName)")
        }
        return object
    }

    static func string(_ value: JSONValue, _ path: String) throws(ClusterPayloadError) -> String {
        guard let string = value.stringValue else {
            throw ClusterPayloadError(.wrongType, at: path, "expected a string, got \(value.kindName)")
        }
        return string
    }

    static func integer(_ value: JSONValue, _ path: String, in range: ClosedRange<Int64>) throws(ClusterPayloadError)
        -> Int64
    {
        guard let number = value.int64Value else {
            throw ClusterPayloadError(.wrongType, at: path, "expected an integer, got \(value.kindName)")
        }
        guard range.contains(number) else {
            throw ClusterPayloadError(.invalidValue, at: path, "\(number) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    static func bool(_ value: JSONValue, _ path: String) throws(ClusterPayloadError) -> Bool {
        guard let bool = value.boolValue else {
            throw ClusterPayloadError(.wrongType, at: path, "expected a boolean, got \(value.kindName)")
        }
        return bool
    }

    /// A bridge id or adapter name: `[a-z0-9_-]+` (adapter names such as `hci0` fit the same pattern).
    static func identifier(_ value: JSONValue, _ path: String) throws(ClusterPayloadError) -> String {
        let text = try string(value, path)
        guard BridgeID.isValid(text) else {
            throw ClusterPayloadError(.invalidValue, at: path, "\"\(text)\" is not [a-z0-9_-]+")
        }
        return text
    }

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}
