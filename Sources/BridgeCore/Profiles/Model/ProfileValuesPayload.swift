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

    static let profileKey: [UInt8] = Array(#"{"profile":"#.utf8)
    static let valuesKey: [UInt8] = Array(#","values":"#.utf8)
}
