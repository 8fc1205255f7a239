extension ValueFormat {
    /// Decodes a characteristic value into the `"value"` of its payload.
    ///
    /// Never fails: bytes that do not fit the format (wrong length, invalid
    /// UTF-8, malformed SIG structure) decode to their hex string, like ``hex``.
    /// Special "unknown" values (IEEE 11073 NaN/NRes/±INF, temperature 0x8000,
    /// humidity 0xFFFF) and non-finite floats decode to `null`.
    public func decode(_ bytes: some Collection<UInt8>) -> JSONValue {
        if let value = decodeIfValid(bytes) { return value }
        return .string(Hex.encode(bytes))
    }

    /// Like ``decode(_:)`` but `nil` where ``decode(_:)`` falls back to hex (``hex`` itself always succeeds).
    public func decodeIfValid(_ bytes: some Collection<UInt8>) -> JSONValue? {
        switch self {
        case .hex:
            return .string(Hex.encode(bytes))
        case .utf8:
            var end = bytes.endIndex
            var count = bytes.count
            // Drop trailing NULs (fixed-size string characteristics are often padded).
            while count > 0 {
                let last = bytes.index(bytes.startIndex, offsetBy: count - 1)
                guard bytes[last] == 0 else { break }
                end = last
                count -= 1
            }
            let text = bytes[bytes.startIndex..<end]
            guard UTF8Validation.isValid(text) else { return nil }
            return .string(String(decoding: text, as: UTF8.self))
        case .uint8, .batteryLevel, .bodySensorLocation:
            guard let value = Self.littleEndian(bytes, size: 1) else { return nil }
            return .integer(Int64(value))
        case .uint16:
            guard let value = Self.littleEndian(bytes, size: 2) else { return nil }
            return .integer(Int64(value))
        case .uint32:
            guard let value = Self.littleEndian(bytes, size: 4) else { return nil }
            return .integer(Int64(value))
        case .sint8:
            guard let value = Self.littleEndian(bytes, size: 1) else { return nil }
            return .integer(Int64(Int8(truncatingIfNeeded: value)))
        case .sint16:
            guard let value = Self.littleEndian(bytes, size: 2) else { return nil }
            return .integer(Int64(Int16(truncatingIfNeeded: value)))
        case .sint32:
            guard let value = Self.littleEndian(bytes, size: 4) else { return nil }
            return .integer(Int64(Int32(truncatingIfNeeded: value)))
        case .float32:
            guard let value = Self.littleEndian(bytes, size: 4) else { return nil }
            let float = Float(bitPattern: UInt32(truncatingIfNeeded: value))
            guard float.isFinite else { return .null }
            // Go through the shortest Float text so 0.1f reads 0.1, not 0.10000000149011612.
            return .number(Double(float.description) ?? Double(float))
        case .float64:
            guard let value = Self.littleEndian(bytes, size: 8) else { return nil }
            let double = Double(bitPattern: value)
            return double.isFinite ? .number(double) : .null
        case .sfloat:
            guard let value = Self.littleEndian(bytes, size: 2) else { return nil }
            return IEEE11073.decodeSFloat(UInt16(truncatingIfNeeded: value)).map(JSONValue.number) ?? .null
        case .float:
            guard let value = Self.littleEndian(bytes, size: 4) else { return nil }
            return IEEE11073.decodeFloat(UInt32(truncatingIfNeeded: value)).map(JSONValue.number) ?? .null
        case .heartRateMeasurement:
            return HeartRateMeasurement(bytes: bytes)?.jsonValue
        case .temperature:
            guard let value = Self.littleEndian(bytes, size: 2) else { return nil }
            let raw = Int16(truncatingIfNeeded: value)
            return raw == .min ? .null : .number(Double(raw) / 100)
        case .humidity:
            guard let value = Self.littleEndian(bytes, size: 2) else { return nil }
            return value == 0xFFFF ? .null : .number(Double(value) / 100)
        }
    }

    /// The little-endian integer of exactly `size` bytes, else `nil`.
    @inline(__always)
    static func littleEndian(_ bytes: some Collection<UInt8>, size: Int) -> UInt64? {
        guard bytes.count == size else { return nil }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes {
            value |= UInt64(byte) << shift
            shift += 8
        }
        return value
    }
}
