import CMosquitto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Process-wide libmosquitto helpers: one-time library initialisation, constants, error texts.
enum Mosquitto {
    /// `MOSQ_ERR_SUCCESS`.
    static let success = MOSQ_ERR_SUCCESS.rawValue
    /// `MOSQ_ERR_NO_CONN`.
    static let errNoConnection = MOSQ_ERR_NO_CONN.rawValue
    /// `MOSQ_ERR_ERRNO`: the reason is in `errno`.
    static let errErrno = MOSQ_ERR_ERRNO.rawValue
    /// `MOSQ_ERR_TLS`.
    static let errTLS = MOSQ_ERR_TLS.rawValue
    /// `MQTT_PROP_RESPONSE_TOPIC` as the `int` identifier libmosquitto's property functions take.
    static let propertyResponseTopic = Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue)
    /// `MQTT_PROP_CORRELATION_DATA` as the `int` identifier libmosquitto's property functions take.
    static let propertyCorrelationData = Int32(MQTT_PROP_CORRELATION_DATA.rawValue)

    /// Runs `mosquitto_lib_init` exactly once per process (Swift initialises globals lazily and
    /// thread-safely). Read it before creating any `struct mosquitto`.
    static let initialized: Bool = {
        mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue
    }()

    /// A text for a libmosquitto return code. Reads `errno` for `MOSQ_ERR_ERRNO`, so call it
    /// immediately after the failing call. Falls back to the MQTT v5 reason-code text for codes
    /// libmosquitto does not know as `mosq_err_t` (a broker's DISCONNECT reason).
    static func describe(_ rc: Int32) -> String {
        if rc == errErrno {
            let errorNumber = errno
            if let text = strerror(errorNumber) {
                return String(cString: text)
            }
            return "errno \(errorNumber)"
        }
        if let text = mosquitto_strerror(rc) {
            let string = String(cString: text)
            if string != "Unknown error." {
                return string
            }
        }
        if let text = mosquitto_reason_string(rc) {
            let string = String(cString: text)
            if string != "Unknown reason" {
                return string
            }
        }
        return "error \(rc)"
    }

    /// A text for a CONNACK refusal: an MQTT v5 reason code, or an MQTT 3.1.1 return code.
    static func describeConnack(_ rc: Int32, v5: Bool) -> String {
        let text = v5 ? mosquitto_reason_string(rc) : mosquitto_connack_string(rc)
        if let text {
            return "connection refused: " + String(cString: text)
        }
        return "connection refused: code \(rc)"
    }
}
