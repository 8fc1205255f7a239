/// A Characteristic User Description descriptor (0x2901): the peripheral's own name of a
/// characteristic, UTF-8 text. Without a configured `name` it names the characteristic's Home
/// Assistant entity (SPEC §11); its topic segment stays the UUID.
public enum UserDescription {
    /// The UUID of the descriptor.
    public static let descriptorUUID = BluetoothUUID(uuid16: 0x2901)
    /// Names longer than this (in characters) are cut.
    public static let maxLength = 64

    /// The name in a descriptor value: valid UTF-8, control characters and trailing NULs
    /// dropped, spaces trimmed; `nil` when nothing is left or the bytes are not UTF-8.
    public static func name(_ bytes: some Collection<UInt8>) -> String? {
        guard case .string(let text)? = ValueFormat.utf8.decodeIfValid(bytes) else { return nil }
        let kept = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
        var scalars = Substring(kept).unicodeScalars
        while let first = scalars.first, first == " " { scalars.removeFirst() }
        while let last = scalars.last, last == " " { scalars.removeLast() }
        let trimmed = String(String.UnicodeScalarView(scalars.prefix(maxLength)))
        return trimmed.isEmpty ? nil : trimmed
    }
}
