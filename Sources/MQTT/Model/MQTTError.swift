import CMosquitto

/// An error reported by the MQTT client.
///
/// Errors carry a ``Code`` that callers can switch on and a human-readable ``message``.
/// `publish` returns (rather than throws) these values so that the hot path stays cheap and
/// the caller can decide to buffer when the broker is not reachable.
public struct MQTTError: Error, Sendable, CustomStringConvertible {
    /// The category of an ``MQTTError``.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// The broker URL could not be parsed.
        case invalidURL
        /// The client is not connected to the broker (libmosquitto's `MOSQ_ERR_NO_CONN`).
        case noConnection
        /// The broker or the client violated the MQTT protocol.
        case protocolError
        /// A TLS error (bad certificate files, handshake failure).
        case tls
        /// The payload (or a property) is larger than MQTT or the broker allows.
        case payloadTooLarge
        /// Any other libmosquitto error code (`mosq_err_t`).
        case other(Int32)

        /// The case name, with the libmosquitto code for ``other(_:)``.
        public var description: String {
            switch self {
            case .invalidURL: return "invalidURL"
            case .noConnection: return "noConnection"
            case .protocolError: return "protocolError"
            case .tls: return "tls"
            case .payloadTooLarge: return "payloadTooLarge"
            case .other(let rc): return "other(\(rc))"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation.
    public var message: String

    /// Creates an error from its code and message.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// `MQTTError(noConnection): <message>`.
    public var description: String {
        "MQTTError(\(code)): \(message)"
    }

    /// The error returned by `publish` while the client is not connected. Built from a string
    /// literal so that returning it allocates nothing.
    static let notConnected = MQTTError(code: .noConnection, message: "not connected to the MQTT broker")

    /// Maps a libmosquitto return code (`mosq_err_t`) to an error. Call it right after the failing
    /// libmosquitto call: for `MOSQ_ERR_ERRNO` the message is read from `errno`.
    init(mosquittoCode rc: Int32) {
        let code: Code
        switch rc {
        case Mosquitto.errNoConnection: code = .noConnection
        case MOSQ_ERR_PROTOCOL.rawValue, MOSQ_ERR_MALFORMED_PACKET.rawValue, MOSQ_ERR_MALFORMED_UTF8.rawValue,
            MOSQ_ERR_DUPLICATE_PROPERTY.rawValue:
            code = .protocolError
        case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue, MOSQ_ERR_OCSP.rawValue:
            code = .tls
        case MOSQ_ERR_PAYLOAD_SIZE.rawValue, MOSQ_ERR_OVERSIZE_PACKET.rawValue:
            code = .payloadTooLarge
        default:
            code = .other(rc)
        }
        self.init(code: code, message: Mosquitto.describe(rc))
    }
}
