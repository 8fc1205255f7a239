import Testing

@testable import BridgeCore

/// A profile command's payload (SPEC §15): empty or a JSON object; `transaction` is echoed, not a parameter.
@Suite struct ProfileCommandPayloadTests {
    @Test("empty, an object, and the transaction kept apart from the parameters")
    func accepted() {
        #expect(ProfileCommandPayload.parse([]) == ProfileCommandPayload(parameters: [:], transaction: nil, error: nil))
        #expect(ProfileCommandPayload.parse(Array(" \n".utf8)).error == nil)
        let p = ProfileCommandPayload.parse(Array(#"{"position": 40, "transaction": "t1"}"#.utf8))
        #expect(p.parameters == ["position": .integer(40)])
        #expect(p.transaction == .string("t1"))
        #expect(p.error == nil)
    }

    @Test("anything but an object is invalid_payload", arguments: ["[1]", "40", "\"open\"", "{", "open"])
    func refused(_ payload: String) {
        #expect(ProfileCommandPayload.parse(Array(payload.utf8)).error?.code == .invalidPayload)
    }

    @Test("the cover pseudo-command's action: open, close or stop as text or a JSON string")
    func coverAction() {
        #expect(ProfileCommandPayload.coverAction(Array("open".utf8)) == "open")
        #expect(ProfileCommandPayload.coverAction(Array(" close\n".utf8)) == "close")
        #expect(ProfileCommandPayload.coverAction(Array(#""stop""#.utf8)) == "stop")
        #expect(ProfileCommandPayload.coverAction(Array("OPEN".utf8)) == nil)
        #expect(ProfileCommandPayload.coverAction(Array(#"{"position": 1}"#.utf8)) == nil)
        // a megabyte of spaces around the action is trimmed in one pass (byte by byte it was quadratic)
        let padding = [UInt8](repeating: 0x20, count: 1 << 20)
        #expect(ProfileCommandPayload.coverAction(padding + Array("stop".utf8) + padding) == "stop")
        #expect(ProfileCommandPayload.coverAction(padding) == nil)
        #expect(ProfileCommandPayload.coverAction([]) == nil)
    }
}
