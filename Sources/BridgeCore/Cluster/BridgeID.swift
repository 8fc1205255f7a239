/// Bridge ids in a cluster: `[a-z0-9_-]+` (SPEC §10), compared byte by byte.
///
/// "Ties: the id that sorts first" and "the online bridge whose id sorts first" use ``sortsBefore(_:_:)``:
/// plain UTF-8 byte order, the same on every bridge whatever its locale or Swift's `String` ordering rules.
public enum BridgeID {
    /// The longest id accepted from the broker.
    public static let maxLength = 64

    /// Whether `text` is a valid id (also used for adapter names, which fit the same pattern).
    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F || byte == 0x2D
        }
    }

    /// Whether `lhs` sorts before `rhs` in UTF-8 byte order.
    public static func sortsBefore(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
