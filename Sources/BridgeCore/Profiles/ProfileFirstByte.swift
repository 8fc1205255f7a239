/// A `first_byte` dispatch of a profile (SPEC §15): the payload's first byte chooses an entry. For
/// decodes the entries are ``ProfileStruct``s (each decodes the whole payload, the first byte
/// included: skip it with `x` or name it); for a command's `expect` they are answer names (`ok`,
/// `password_required`).
///
/// Keys are one byte in hex, as the profile writes them: `"01"`, `"a0"` (either case, an optional
/// `0x`).
public struct ProfileFirstByte<Target: Sendable>: Sendable {
    /// The entries by byte.
    public let entries: [UInt8: Target]

    /// The entries, keyed by their hex text.
    /// - Throws: ``ProfileCodecError/Code/badFirstByte`` for a key that is not one byte in hex (the
    ///   message names the key; the column is in that key) or two keys of the same byte, and for
    ///   no entries at all.
    public init(_ entries: [(key: String, target: Target)]) throws(ProfileCodecError) {
        guard !entries.isEmpty else {
            throw ProfileCodecError(.badFirstByte, "first_byte has no entries: map at least one byte such as \"01\"")
        }
        var table: [UInt8: Target] = [:]
        var spelled: [UInt8: String] = [:]
        for (key, target) in entries {
            let byte: UInt8
            do throws(ProfileCodecError) {
                byte = try Self.byte(key)
            } catch {
                throw ProfileCodecError(.badFirstByte, "first_byte key \"\(key)\": \(error.message)", column: error.column)
            }
            if let other = spelled[byte] {
                throw ProfileCodecError(
                    .badFirstByte, "first_byte keys \"\(other)\" and \"\(key)\" are the same byte 0x\(Hex.encode([byte]))")
            }
            spelled[byte] = key
            table[byte] = target
        }
        self.entries = table
    }

    /// The byte of a key: two hex digits, either case, optionally after `0x`.
    /// - Throws: ``ProfileCodecError/Code/badFirstByte`` with the column in `key`.
    public static func byte(_ key: String) throws(ProfileCodecError) -> UInt8 {
        let scalars = Array(key.unicodeScalars)
        var index = 0
        if scalars.count >= 2, scalars[0] == "0", scalars[1] == "x" || scalars[1] == "X" { index = 2 }
        var value: UInt8 = 0
        var digits = 0
        while index < scalars.count {
            let scalar = scalars[index]
            guard scalar.isASCII, let nibble = Hex.value(of: UInt8(scalar.value)) else {
                throw ProfileCodecError(.badFirstByte, "'\(scalar)' is not a hex digit", column: index + 1)
            }
            guard digits < 2 else {
                throw ProfileCodecError(.badFirstByte, "a key is one byte: two hex digits such as \"01\"", column: index + 1)
            }
            value = value << 4 | nibble
            digits += 1
            index += 1
        }
        guard digits == 2 else {
            throw ProfileCodecError(.badFirstByte, "a key is one byte: two hex digits such as \"01\"", column: 1)
        }
        return value
    }

    /// The entry of `payload`'s first byte.
    /// - Throws: ``ProfileCodecError/Code/unknownFirstByte`` for an empty payload or a first byte
    ///   without an entry (the message lists the known ones).
    public func target(for payload: [UInt8]) throws(ProfileCodecError) -> Target {
        guard let first = payload.first else {
            throw ProfileCodecError(.unknownFirstByte, "empty payload: first_byte needs at least one byte")
        }
        guard let target = entries[first] else {
            let known = entries.keys.sorted().map { Hex.encode([$0]) }.joined(separator: ", ")
            throw ProfileCodecError(
                .unknownFirstByte, "first byte 0x\(Hex.encode([first])) has no entry in first_byte (known: \(known))")
        }
        return target
    }
}

extension ProfileFirstByte where Target == ProfileStruct {
    /// Decodes `payload` with the struct its first byte chooses.
    /// - Throws: ``ProfileCodecError/Code/unknownFirstByte``, or the struct's
    ///   ``ProfileCodecError/Code/tooShort``.
    public func decode(_ payload: [UInt8]) throws(ProfileCodecError) -> JSONObject {
        try target(for: payload).decode(payload)
    }
}

extension ProfileFirstByte: Equatable where Target: Equatable {}
extension ProfileFirstByte: Hashable where Target: Hashable {}
