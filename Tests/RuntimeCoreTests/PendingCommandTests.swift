import BridgeCore
import Testing

@testable import RuntimeCore

/// ``PendingCommand``: a command's payload read once on arrival (its transaction; a `/set` in hex), again only in
/// another format.
@Suite struct PendingCommandTests {
    static func command(_ payload: String, _ operation: CharacteristicOperation) -> PendingCommand {
        PendingCommand(
            payload: Array(payload.utf8), replyTo: nil, device: "d", service: "s", characteristic: "c",
            operation: operation, resultTopic: "ble/d/s/c/result", deadline: BridgeInstant(offset: .seconds(5)))
    }

    @Test("a /set is parsed in hex on arrival: its transaction, and the parse a hex characteristic uses")
    func setParsedOnce() throws {
        var set = Self.command(#"{"raw": "0102", "transaction": "t1"}"#, .set)
        #expect(set.transaction == .string("t1"))
        let kept = try #require(set.write)
        #expect(kept.format == .hex && kept.presentation == nil)
        #expect(try kept.parsed.result.get().bytes == [1, 2])
        // The same format: the kept parse; another: parsed again, and kept.
        #expect(set.parsedWrite(format: .hex, presentation: nil) == kept.parsed)
        let asText = set.parsedWrite(format: .utf8, presentation: nil)
        #expect(set.write?.format == .utf8 && set.write?.parsed == asText)
        #expect(asText.transaction == .string("t1"))
    }

    @Test("a /get keeps no write parse; its transaction is read on arrival; a failure result echoes it")
    func getTransaction() {
        let get = Self.command(#"{"transaction": 7}"#, .get)
        #expect(get.write == nil)
        #expect(get.transaction == .integer(7))
        #expect(get.failure(CommandError(.timeout, "late")).transaction == .integer(7))
    }
}
