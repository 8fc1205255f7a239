extension BridgeID {
    /// The id used when `bridge.id` is not configured: `hostName` made valid (SPEC §10: "default: the host name").
    ///
    /// ASCII letters are lower-cased; every run of other characters outside `[a-z0-9_-]` (dots, spaces, non-ASCII
    /// letters) becomes one `-`, and such dashes are dropped at either end; the result is cut to ``maxLength``.
    /// `Kitchen.LAN` → `kitchen-lan`, `pi 4 (garage)` → `pi-4-garage`, `Küche` → `k-che`. A host name with
    /// nothing usable in it (empty, or only dots) gives `localhost`, the name ``BridgeConfig/currentHostName()``
    /// reports when the system has none.
    public static func derived(fromHostName hostName: String) -> String {
        var bytes: [UInt8] = []
        var pendingDash = false
        for scalar in hostName.unicodeScalars {
            var value = scalar.value
            if value >= 0x41 && value <= 0x5A { value += 0x20 }  // A-Z → a-z
            let valid =
                (value >= 0x61 && value <= 0x7A) || (value >= 0x30 && value <= 0x39) || value == 0x5F || value == 0x2D
            guard valid else {
                pendingDash = !bytes.isEmpty
                continue
            }
            if pendingDash { bytes.append(0x2D) }
            pendingDash = false
            bytes.append(UInt8(value))
        }
        while bytes.count > maxLength {
            bytes.removeLast()
        }
        let id = String(decoding: bytes, as: UTF8.self)
        return isValid(id) ? id : "localhost"
    }
}
