/// The payload of `{base}/{device}/values` (SPEC §15): `{"profile":"…","values":{…}}`, one per
/// decoding step or notification, not retained.
public enum ProfileValuesPayload {
    /// The payload of `values` decoded by the profile `profile`.
    public static func make(profile: String, values: JSONObject) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(32 + profile.utf8.count + 24 * values.count)
        buffer.append(contentsOf: profileKey)
        JSONWriter.appendString(profile, to: &buffer)
        buffer.append(contentsOf: valuesKey)
        JSONWriter.append(.object(values), to: &buffer)
        buffer.append(0x7D)
        return buffer
    }

    /// The payload to keep as a values topic's latest (re-sent to Home Assistant after its configs
    /// and when it restarts): `new` with the values of `old` it lacks, when both are values payloads
    /// of the same profile. Steps publish partial sets (an AM43's battery, then its position), and
    /// keeping only the last would leave the battery unknown until the next poll. Any other
    /// payload is `new` as it is, found by its first bytes without parsing (the value path's cost).
    public static func kept(over old: [UInt8]?, _ new: [UInt8]) -> [UInt8] {
        guard let old, old.starts(with: profileKey), new.starts(with: profileKey),
            case .object(let oldObject)? = try? JSONParser.parse(old),
            case .object(let newObject)? = try? JSONParser.parse(new),
            let profile = newObject["profile"], oldObject["profile"] == profile,
            let oldValues = oldObject["values"]?.objectValue, var newValues = newObject["values"]?.objectValue
        else { return new }
        var added = false
        for member in oldValues.members where newValues[member.key] == nil {
            newValues.append(member.key, member.value)
            added = true
        }
        guard added, case .string(let id) = profile else { return new }
        return make(profile: id, values: newValues)
    }

    static let profileKey: [UInt8] = Array(#"{"profile":"#.utf8)
    static let valuesKey: [UInt8] = Array(#","values":"#.utf8)
}
