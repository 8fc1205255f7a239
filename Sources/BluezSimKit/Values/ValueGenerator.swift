import BridgeBase

/// How a characteristic's successive values are produced (scenario `generator:`).
public enum ValueGeneratorSpec: Sendable, Hashable {
    /// The given values, cycled.
    case cycle([[UInt8]])
    /// A little-endian unsigned counter of `width` bytes (1, 2, 4 or 8).
    case counter(width: Int, start: UInt64, step: UInt64)
    /// Heart Rate Measurement (0x2A37): flags, 8-bit bpm wandering in 60...90,
    /// sensor contact bits, energy expended every tenth value, one RR interval.
    case heartRate
    /// Battery Level (0x2A19): one byte percent, decreasing from `start`, wrapping to 100 below 5.
    case battery(start: Int)
    /// Temperature (0x2A6E): sint16 in 0.01 °C, a random walk around `center` (°C).
    case temperature(center: Double)
    /// Humidity (0x2A6F): uint16 in 0.01 %, a random walk around `center` (%).
    case humidity(center: Double)
    /// `length` random bytes.
    case random(length: Int)
}

/// The running state of a ``ValueGeneratorSpec``: call ``next()`` for each new value.
public struct ValueGenerator: Sendable {
    /// What this generator produces.
    public let spec: ValueGeneratorSpec
    private var rng: SplitMix64
    private var index: UInt64 = 0
    private var level: Double
    private var energy: Int = 0

    /// A generator for `spec` seeded with `seed`.
    public init(spec: ValueGeneratorSpec, seed: SplitMix64) {
        self.spec = spec
        self.rng = seed
        switch spec {
        case .heartRate: level = 72
        case .battery(let start): level = Double(start)
        case .temperature(let center): level = center
        case .humidity(let center): level = center
        default: level = 0
        }
    }

    /// The next value.
    public mutating func next() -> [UInt8] {
        defer { index &+= 1 }
        switch spec {
        case .cycle(let values):
            guard !values.isEmpty else { return [] }
            return values[Int(index % UInt64(values.count))]
        case .counter(let width, let start, let step):
            let v = start &+ step &* index
            var out = [UInt8]()
            out.reserveCapacity(width)
            for i in 0..<width { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
            return out
        case .heartRate:
            return nextHeartRate()
        case .battery:
            let v = Int(level)
            level -= 1
            if level < 5 { level = 100 }
            return [UInt8(clamping: v)]
        case .temperature(let center):
            level = walk(level, center: center, spread: 1.5, step: 0.05)
            let raw = Int16(clamping: Int((level * 100).rounded()))
            let u = UInt16(bitPattern: raw)
            return [UInt8(u & 0xff), UInt8(u >> 8)]
        case .humidity(let center):
            level = walk(level, center: center, spread: 5, step: 0.2)
            let raw = UInt16(clamping: Int((max(0, min(100, level)) * 100).rounded()))
            return [UInt8(raw & 0xff), UInt8(raw >> 8)]
        case .random(let length):
            var out = [UInt8]()
            out.reserveCapacity(length)
            for _ in 0..<length { out.append(UInt8(truncatingIfNeeded: rng.next())) }
            return out
        }
    }

    private mutating func nextHeartRate() -> [UInt8] {
        level = walk(level, center: 75, spread: 15, step: 1.5)
        let bpm = UInt8(clamping: Int(level.rounded()))
        // Bits 1-2: sensor contact supported (0b10) and detected (0b11); lose contact now and then.
        let contact: UInt8 = index % 37 == 36 ? 0b100 : 0b110
        let withEnergy = index % 10 == 0
        var flags: UInt8 = contact | 0x10  // RR intervals present
        if withEnergy { flags |= 0x08 }
        var out: [UInt8] = [flags, bpm]
        if withEnergy {
            energy = (energy + 1) & 0xffff
            out.append(UInt8(energy & 0xff))
            out.append(UInt8(energy >> 8))
        }
        let rr = UInt16(clamping: Int((60.0 / Double(max(bpm, 30)) * 1024).rounded()))
        out.append(UInt8(rr & 0xff))
        out.append(UInt8(rr >> 8))
        return out
    }

    private mutating func walk(_ value: Double, center: Double, spread: Double, step: Double) -> Double {
        let r = Double(rng.next() % 2001) / 1000.0 - 1.0  // -1...1
        var v = value + r * step
        // Pull gently back towards the centre.
        v += (center - v) * 0.02
        return min(center + spread, max(center - spread, v))
    }
}
