/// A profile's named decode (SPEC §15 `decode:`): one struct, or a dispatch on the first byte to
/// several.
public enum ProfileDecode: Sendable, Hashable {
    /// One struct.
    case structure(ProfileStruct)
    /// The struct the first byte names.
    case firstByte(ProfileFirstByte<ProfileStruct>)

    /// Decodes `payload` into its named values.
    /// - Throws: ``ProfileCodecError`` (`tooShort`, `unknownFirstByte`...).
    public func decode(_ payload: [UInt8]) throws(ProfileCodecError) -> JSONObject {
        switch self {
        case .structure(let s): try s.decode(payload)
        case .firstByte(let dispatch): try dispatch.decode(payload)
        }
    }

    /// Every struct the decode may use.
    public var structs: [ProfileStruct] {
        switch self {
        case .structure(let s): [s]
        case .firstByte(let dispatch): dispatch.entries.keys.sorted().compactMap { dispatch.entries[$0] }
        }
    }

    /// The names of the values it may publish, each once, in field order (derived values after
    /// their field, `NAME_1…` of a repetition, no `_` field).
    public var valueNames: [String] {
        var seen = Set<String>()
        var names: [String] = []
        for s in structs {
            for name in s.valueNames where seen.insert(name).inserted { names.append(name) }
        }
        return names
    }
}
