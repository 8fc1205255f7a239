import Testing

@testable import BridgeCore

/// Write type and readability decisions from BlueZ Flags.
@Suite struct CommandWriteTypeTests {
    enum Expected: Sendable, Hashable, CustomStringConvertible {
        case type(GattWriteType)
        case error(CommandErrorCode)

        var description: String {
            switch self {
            case .type(let type): return type.rawValue
            case .error(let code): return code.rawValue
            }
        }
    }

    static let both: Set<String> = ["read", "write", "write-without-response", "notify"]
    static let requestOnly: Set<String> = ["read", "write"]
    static let commandOnly: Set<String> = ["write-without-response", "notify"]
    static let none: Set<String> = ["read", "notify", "indicate", "reliable-write", "authenticated-signed-writes"]

    @Test(arguments: [
        (both, nil, Expected.type(.request)),
        (both, true, .type(.request)),
        (both, false, .type(.command)),
        (requestOnly, nil, .type(.request)),
        (requestOnly, true, .type(.request)),
        (requestOnly, false, .error(.unsupportedWriteType)),
        (commandOnly, nil, .type(.command)),
        (commandOnly, true, .error(.unsupportedWriteType)),
        (commandOnly, false, .type(.command)),
        (none, nil, .error(.notWritable)),
        (none, true, .error(.notWritable)),
        (none, false, .error(.notWritable)),
        ([], nil, .error(.notWritable)),
        ([], true, .error(.notWritable)),
        ([], false, .error(.notWritable)),
    ] as [(Set<String>, Bool?, Expected)])
    func writeType(flags: Set<String>, response: Bool?, expected: Expected) {
        let actual: Expected
        do {
            actual = .type(try WriteTypeDecision.writeType(properties: CharacteristicProperties(bluezFlags: flags), response: response))
        } catch {
            actual = .error(error.code)
            #expect(!error.message.isEmpty)
        }
        #expect(actual == expected, "flags \(flags.sorted()), response \(String(describing: response))")
    }

    /// `write_types` replace the Flags: a write-only characteristic configured for commands takes them.
    @Test(arguments: [
        (requestOnly, Set<GattWriteType>([.request, .command]), false, Expected.type(.command)),
        (requestOnly, [.request, .command], nil, .type(.request)),
        (requestOnly, [.command], nil, .type(.command)),
        (requestOnly, [.command], true, .error(.unsupportedWriteType)),
        (both, [.request], false, .error(.unsupportedWriteType)),
        (none, [.command], false, .type(.command)),
        (none, [.command], nil, .type(.command)),
        ([], [.request], true, .type(.request)),
    ] as [(Set<String>, Set<GattWriteType>, Bool?, Expected)])
    func configuredWriteTypes(flags: Set<String>, configured: Set<GattWriteType>, response: Bool?, expected: Expected) {
        let actual: Expected
        do {
            actual = .type(try WriteTypeDecision.writeType(properties: CharacteristicProperties(bluezFlags: flags), response: response, configured: configured))
        } catch {
            actual = .error(error.code)
        }
        #expect(actual == expected, "flags \(flags.sorted()), write_types \(configured.map(\.rawValue).sorted())")
    }

    @Test func writeTypeMeaning() {
        #expect(GattWriteType.request.withResponse)
        #expect(!GattWriteType.command.withResponse)
        #expect(GattWriteType.request.rawValue == "request")
        #expect(GattWriteType.command.rawValue == "command")
    }

    @Test func readable() throws {
        try WriteTypeDecision.checkReadable(properties: CharacteristicProperties(bluezFlags: ["read"] as Set<String>))
        try WriteTypeDecision.checkReadable(properties: CharacteristicProperties(bluezFlags: ["read", "notify", "write"] as Set<String>))
        for flags: Set<String> in [[], ["write"], ["notify", "indicate"], ["encrypt-read"]] {
            #expect(throws: CommandError(.notReadable, "the characteristic is not readable")) {
                try WriteTypeDecision.checkReadable(properties: CharacteristicProperties(bluezFlags: flags as Set<String>))
            }
        }
    }
}
