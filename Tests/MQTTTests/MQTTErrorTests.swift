import Testing

@testable import MQTT

@Suite("MQTTError")
struct MQTTErrorTests {
    @Test("libmosquitto codes map to error codes")
    func mapping() {
        #expect(MQTTError(mosquittoCode: 4).code == .noConnection)  // MOSQ_ERR_NO_CONN
        #expect(MQTTError(mosquittoCode: 2).code == .protocolError)  // MOSQ_ERR_PROTOCOL
        #expect(MQTTError(mosquittoCode: 8).code == .tls)  // MOSQ_ERR_TLS
        #expect(MQTTError(mosquittoCode: 9).code == .payloadTooLarge)  // MOSQ_ERR_PAYLOAD_SIZE
        #expect(MQTTError(mosquittoCode: 25).code == .payloadTooLarge)  // MOSQ_ERR_OVERSIZE_PACKET
        #expect(MQTTError(mosquittoCode: 3).code == .other(3))  // MOSQ_ERR_INVAL
        #expect(MQTTError(mosquittoCode: 3).message == "Invalid function arguments provided.")
    }

    @Test("description names the code and the message")
    func description() {
        let error = MQTTError(code: .other(3), message: "bad")
        #expect(error.description == "MQTTError(other(3)): bad")
        #expect(MQTTError.notConnected.description == "MQTTError(noConnection): not connected to the MQTT broker")
    }
}
