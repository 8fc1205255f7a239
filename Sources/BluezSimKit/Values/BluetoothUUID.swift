/// Helpers for Bluetooth UUID strings as BlueZ spells them.
///
/// BlueZ always presents UUIDs in their full 128-bit, lowercase form
/// (`0000180d-0000-1000-8000-00805f9b34fb`) and accepts 16- and 32-bit
/// short forms (`180d`, `0x180D`, `0000180d`) in method arguments.
public enum BluetoothUUID {
    /// The Bluetooth base UUID suffix.
    public static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// The full 128-bit lowercase form of `text`, or nil when it is not a UUID.
    public static func normalize(_ text: String) -> String? {
        var s = text.lowercased()
        if s.hasPrefix("0x") { s.removeFirst(2) }
        let hexDigits = s.utf8.allSatisfy { isHex($0) }
        if hexDigits && s.utf8.count == 4 {
            return "0000" + s + baseSuffix
        }
        if hexDigits && s.utf8.count == 8 {
            return s + baseSuffix
        }
        let bytes = Array(s.utf8)
        guard bytes.count == 36 else { return nil }
        for (i, c) in bytes.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                if c != UInt8(ascii: "-") { return nil }
            } else if !isHex(c) {
                return nil
            }
        }
        return s
    }

    /// The short 16-bit form (`180d`) when `uuid` is on the base UUID, else `uuid` itself.
    public static func short(_ uuid: String) -> String {
        if uuid.hasSuffix(baseSuffix) && uuid.hasPrefix("0000") && uuid.utf8.count == 36 {
            return String(uuid.dropFirst(4).prefix(4))
        }
        return uuid
    }

    private static func isHex(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 97 && c <= 102)
    }
}
