/// Builds the value payload of SPEC §4, `{"raw":"<hex>","value":<decoded>}`,
/// straight into bytes.
public enum ValuePayload {
    /// The payload for a characteristic value received as `raw`, decoded with `format`.
    public static func make(raw: some Collection<UInt8>, format: ValueFormat) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(32 + 4 * raw.count)
        append(raw: raw, format: format, to: &buffer)
        return buffer
    }

    /// The payload for a value decoded by the characteristic's presentation format (0x2904) when
    /// there is one and the bytes fit it, else with `format`.
    public static func make(raw: some Collection<UInt8>, format: ValueFormat, presentation: PresentationFormat?) -> [UInt8] {
        guard let presentation, let value = presentation.decodeIfValid(raw) else { return make(raw: raw, format: format) }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(32 + 2 * raw.count)
        append(raw: raw, value: value, to: &buffer)
        return buffer
    }

    /// Appends the payload for `raw` decoded with `format` to `buffer`.
    public static func append(raw: some Collection<UInt8>, format: ValueFormat, to buffer: inout [UInt8]) {
        appendRaw(raw, to: &buffer)
        if format == .hex {
            // The value is the raw hex again: skip building a String.
            buffer.append(0x22)
            Hex.append(raw, to: &buffer)
            buffer.append(0x22)
        } else {
            JSONWriter.append(format.decode(raw), to: &buffer)
        }
        buffer.append(0x7D)
    }

    /// Appends the payload for `raw` with an already decoded `value` to `buffer`.
    public static func append(raw: some Collection<UInt8>, value: JSONValue, to buffer: inout [UInt8]) {
        appendRaw(raw, to: &buffer)
        JSONWriter.append(value, to: &buffer)
        buffer.append(0x7D)
    }

    /// `{"raw":"<hex>","value":`
    static func appendRaw(_ raw: some Collection<UInt8>, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: prefix)
        Hex.append(raw, to: &buffer)
        buffer.append(contentsOf: middle)
    }

    static let prefix: [UInt8] = Array(#"{"raw":""#.utf8)
    static let middle: [UInt8] = Array(#"","value":"#.utf8)
}
