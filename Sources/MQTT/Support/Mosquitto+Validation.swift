import CMosquitto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Mosquitto {
    /// The checks `mosquitto_publish_v5` makes that do not depend on the connection, with the
    /// same error codes, for a publish handed to the loop thread (its caller gets the answer
    /// now). Thread-safe: libmosquitto's validators are pure functions.
    static func validatePublish(
        topic: String, payloadCount: Int, qos: Int, responseTopic: String?, correlationData: [UInt8]?, isV5: Bool
    ) -> MQTTError? {
        guard qos >= 0 && qos <= 2 else { return MQTTError(mosquittoCode: MOSQ_ERR_INVAL.rawValue) }
        guard payloadCount <= Int(MQTT_MAX_PAYLOAD) else {
            return MQTTError(code: .payloadTooLarge, message: "payload of \(payloadCount) bytes")
        }
        let rc = topic.withCString { pointer -> Int32 in
            let length = strlen(pointer)
            if length == 0 { return MOSQ_ERR_INVAL.rawValue }
            if mosquitto_validate_utf8(pointer, Int32(clamping: length)) != success {
                return MOSQ_ERR_MALFORMED_UTF8.rawValue
            }
            return mosquitto_pub_topic_check2(pointer, length) == success ? success : MOSQ_ERR_INVAL.rawValue
        }
        if rc != success { return MQTTError(mosquittoCode: rc) }
        guard isV5 else { return nil }
        if let responseTopic {
            let valid = responseTopic.withCString { mosquitto_validate_utf8($0, Int32(clamping: strlen($0))) == success }
            if !valid { return MQTTError(mosquittoCode: MOSQ_ERR_MALFORMED_UTF8.rawValue) }
        }
        if let correlationData, correlationData.count > Int(UInt16.max) {
            return MQTTError(code: .payloadTooLarge, message: "correlation data longer than 65535 bytes")
        }
        return nil
    }
}
