import Testing

@testable import BridgeCore

/// The result payload of SPEC §4, byte for byte.
@Suite struct CommandResultTests {
    @Test func writeOK() {
        #expect(
            CommandResult.writeSucceeded(response: true, transaction: nil).jsonString
                == #"{"status":"ok","op":"write","response":true}"#)
        #expect(
            CommandResult.writeSucceeded(response: false, transaction: 42).jsonString
                == #"{"status":"ok","op":"write","transaction":42,"response":false}"#)
        #expect(
            CommandResult.writeSucceeded(response: true, transaction: ["id": [1, "a", nil], "t": 2.5]).jsonString
                == #"{"status":"ok","op":"write","transaction":{"id":[1,"a",null],"t":2.5},"response":true}"#)
        #expect(
            CommandResult.writeSucceeded(response: true, transaction: .null).jsonString
                == #"{"status":"ok","op":"write","transaction":null,"response":true}"#)
    }

    @Test func readOK() {
        #expect(
            CommandResult.readSucceeded(raw: [0x4B], format: .batteryLevel, transaction: "t1").jsonString
                == #"{"status":"ok","op":"read","transaction":"t1","raw":"4b","value":75}"#)
        #expect(
            CommandResult.readSucceeded(raw: [0x01, 0xFF], format: .hex, transaction: nil).jsonString
                == #"{"status":"ok","op":"read","raw":"01ff","value":"01ff"}"#)
        #expect(
            CommandResult.readSucceeded(raw: [0x66, 0x08], format: .temperature, transaction: false).jsonString
                == #"{"status":"ok","op":"read","transaction":false,"raw":"6608","value":21.5}"#)
        #expect(
            CommandResult.readSucceeded(raw: Array("a\"b".utf8), format: .utf8, transaction: nil).jsonString
                == #"{"status":"ok","op":"read","raw":"612262","value":"a\"b"}"#)
        #expect(
            CommandResult.readSucceeded(raw: [], value: "", transaction: nil).jsonString
                == #"{"status":"ok","op":"read","raw":"","value":""}"#)
        #expect(
            CommandResult.readSucceeded(raw: [0x06, 72], format: .heartRateMeasurement, transaction: 7).jsonString
                == #"{"status":"ok","op":"read","transaction":7,"raw":"0648","value":{"bpm":72,"contact":true}}"#)
    }

    @Test func writeError() {
        let invalid = CommandResult.failed(
            .write, error: .invalidPayload("bad \"x\"\n\u{1}"), transaction: ["id": [1, nil]])
        #expect(
            invalid.jsonString
                == #"{"status":"error","op":"write","transaction":{"id":[1,null]},"error":{"code":"invalid_payload","message":"bad \"x\"\n\u0001"}}"#
        )
        let gatt = CommandResult.failed(
            .write, error: .gattError(name: "org.bluez.Error.NotPermitted", message: "Write not permitted"),
            transaction: nil, response: true)
        #expect(
            gatt.jsonString
                == #"{"status":"error","op":"write","response":true,"error":{"code":"gatt_error","message":"org.bluez.Error.NotPermitted: Write not permitted"}}"#
        )
        let busy = CommandResult.failed(.write, error: .busy(capacity: 32), transaction: "b")
        #expect(
            busy.jsonString
                == #"{"status":"error","op":"write","transaction":"b","error":{"code":"busy","message":"too many pending commands for this device (at most 32)"}}"#
        )
    }

    @Test func readError() {
        let result = CommandResult.failed(.read, error: CommandError(.notReadable, "no"), transaction: .null)
        #expect(
            result.jsonString
                == #"{"status":"error","op":"read","transaction":null,"error":{"code":"not_readable","message":"no"}}"#)
        #expect(result.status == .error)
        let timeout = CommandResult.failed(.read, error: CommandError(.timeout, "BlueZ did not answer"), transaction: nil)
        #expect(
            timeout.jsonBytes
                == Array(#"{"status":"error","op":"read","error":{"code":"timeout","message":"BlueZ did not answer"}}"#.utf8))
    }

    @Test func everyCodeIsWrittenAsSpecified() throws {
        #expect(
            CommandErrorCode.allCases.map(\.rawValue) == [
                "invalid_payload", "unknown_characteristic", "not_writable", "not_readable",
                "unsupported_write_type", "not_connected", "timeout", "gatt_error", "busy", "not_allowed",
                "unknown_command", "unexpected_answer",
            ])
        for code in CommandErrorCode.allCases {
            let json = try JSONParser.parse(
                CommandResult.failed(.write, error: CommandError(code, "m"), transaction: nil).jsonBytes)
            #expect(json["error"] == ["code": .string(code.rawValue), "message": "m"])
            #expect(json["status"] == "error")
        }
    }

    @Test("a profile command's result: op command; a device's answer name is the error code")
    func profileCommand() {
        #expect(
            CommandResult.commandSucceeded(transaction: 7).jsonString == #"{"status":"ok","op":"command","transaction":7}"#)
        let wrong = CommandError(.gattError, "the device answered wrong_password (01)", answer: "wrong_password")
        #expect(
            CommandResult.failed(.command, error: wrong, transaction: nil).jsonString
                == #"{"status":"error","op":"command","error":{"code":"wrong_password","message":"the device answered wrong_password (01)"}}"#)
        #expect(wrong.description == "wrong_password: the device answered wrong_password (01)")
        let unknown = CommandResult.failed(.command, error: CommandError(.unknownCommand, "no"), transaction: nil)
        #expect(unknown.jsonString == #"{"status":"error","op":"command","error":{"code":"unknown_command","message":"no"}}"#)
    }

    @Test func appendsToExistingBuffer() {
        var buffer: [UInt8] = Array("x".utf8)
        CommandResult.writeSucceeded(response: true, transaction: nil).append(to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"x{"status":"ok","op":"write","response":true}"#)
    }

    @Test func operationOfTopic() {
        #expect(CommandResult.Operation(CharacteristicOperation.set) == .write)
        #expect(CommandResult.Operation(CharacteristicOperation.get) == .read)
    }

    @Test func gattErrorMessage() {
        let name = "org.bluez.Error.Failed"
        #expect(CommandError.gattError(name: name, message: nil).message == name)
        #expect(CommandError.gattError(name: name, message: "").message == name)
        #expect(CommandError.gattError(name: name, message: "x").description == "gatt_error: org.bluez.Error.Failed: x")
    }

    /// From payload to result: the transaction of a valid and of an invalid command is echoed.
    @Test func transactionRoundTrip() throws {
        let ok = WriteCommand.parse(Array(#"{"raw":"01ff","response":false,"transaction":{"n":1}}"#.utf8), format: .hex)
        let command = try #require(ok.command)
        #expect(
            CommandResult.writeSucceeded(response: command.response ?? true, transaction: command.transaction)
                .jsonString
                == #"{"status":"ok","op":"write","transaction":{"n":1},"response":false}"#)
        let bad = WriteCommand.parse(Array(#"{"raw":"0","transaction":[1]}"#.utf8), format: .hex)
        let error = try #require(bad.error)
        #expect(
            CommandResult.failed(.write, error: error, transaction: bad.transaction).jsonString
                == #"{"status":"error","op":"write","transaction":[1],"error":{"code":"invalid_payload","message":"\"raw\" is not hex: hex text has an odd number of digits (at offset 1)"}}"#
        )
        let read = ReadCommand.parse(Array(#"{"transaction":"r"}"#.utf8))
        #expect(
            CommandResult.readSucceeded(raw: [1], format: .uint8, transaction: read.transaction).jsonString
                == #"{"status":"ok","op":"read","transaction":"r","raw":"01","value":1}"#)
    }
}
