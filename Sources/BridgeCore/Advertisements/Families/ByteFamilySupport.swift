/// What the families without a real company id (Govee, ThermoPro, Inkbird, SensorPush, SPEC §13)
/// share: looking at the advertised name without building strings, picking the one manufacturer
/// data entry a frame can be read from, and Python's `round(x, 2)` where a reference rounds.
enum ByteFamilySupport {
    /// Apple's company id: iBeacon frames that some of these devices advertise beside their own.
    static let apple: UInt16 = 0x004C

    /// Whether `name` equals `text`, ignoring ASCII case.
    static func name(_ name: String?, equalsIgnoringCase text: StaticString) -> Bool {
        guard let name else { return false }
        let want = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        var i = 0
        for byte in name.utf8 {
            guard i < want.count, lower(byte) == lower(want[i]) else { return false }
            i += 1
        }
        return i == want.count
    }

    /// Whether `name` starts with `prefix` (case-sensitive).
    static func name(_ name: String?, hasPrefix prefix: StaticString) -> Bool {
        guard let name else { return false }
        let want = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        var i = 0
        for byte in name.utf8 {
            if i == want.count { return true }
            guard byte == want[i] else { return false }
            i += 1
        }
        return i == want.count
    }

    /// Whether `name` contains `text`, ignoring ASCII case.
    static func name(_ name: String?, containsIgnoringCase text: StaticString) -> Bool {
        guard let name else { return false }
        let want = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        guard !want.isEmpty else { return true }
        let utf8 = name.utf8
        var start = utf8.startIndex
        while start != utf8.endIndex {
            var i = start
            var j = 0
            while j < want.count, i != utf8.endIndex, lower(utf8[i]) == lower(want[j]) {
                j += 1
                i = utf8.index(after: i)
            }
            if j == want.count { return true }
            start = utf8.index(after: start)
        }
        return false
    }

    /// The frame's one manufacturer-data entry other than Apple's, with its company id; nil when
    /// there is none or several. For the families whose "company id" is really their first two
    /// data bytes (a temperature, a page and type byte), BlueZ keeps every value it has seen under
    /// its own id, so with several entries there is no telling which one is the newest: the
    /// frame is not read (the reference libraries wait for the next advertisement, too).
    static func soleEntry(_ frame: AdvertisementFrame) -> (id: UInt16, value: [UInt8])? {
        var found: (id: UInt16, value: [UInt8])?
        for (id, value) in frame.manufacturerData where id != apple {
            if found != nil { return nil }
            found = (id, value)
        }
        return found
    }

    /// Python's `round(x, 2)` (the decimal value of the double, ties to even), as the SensorPush
    /// reference rounds: the same double, so that both print the same number.
    static func round2(_ x: Double) -> Double {
        guard x.isFinite, abs(x) < 1e13 else { return x }
        let k = (x * 100).rounded(.down)
        // Compare x with the midpoint (2k+1)/200 exactly: 200·x = p + e, e exact by FMA.
        let p = 200 * x
        let residual = (-p).addingProduct(200, x)
        let mid = 2 * k + 1
        let up: Bool
        if p < mid {
            up = false
        } else if p > mid {
            up = true
        } else if residual != 0 {
            up = residual > 0
        } else {
            up = k.truncatingRemainder(dividingBy: 2) != 0
        }
        return (up ? k + 1 : k) / 100
    }

    @inline(__always) static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
