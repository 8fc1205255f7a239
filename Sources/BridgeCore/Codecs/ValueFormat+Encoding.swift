extension ValueFormat {
    /// Encodes a JSON value for a write in this format.
    ///
    /// - ``hex``: a string such as `"01ff"`, `"01 ff"` or `"0x01ff"`.
    /// - ``utf8``: a string.
    /// - integer formats, ``batteryLevel`` (0...100), ``bodySensorLocation``:
    ///   an integral number in range.
    /// - ``float32``, ``float64``, ``sfloat``, ``float``: a number in range.
    /// - ``temperature`` (°C) and ``humidity`` (%): a number, stored in 0.01 units.
    /// - ``heartRateMeasurement``: an object like the decoded value.
    /// - Throws: ``ValueEncodingError`` when the value has the wrong type or is out of range.
    public func encode(_ value: JSONValue) throws(ValueEncodingError) -> [UInt8] {
        switch self {
        case .hex:
            guard case .string(let text) = value else { throw wrongType(value, expected: "a hex string") }
            do {
                return try Hex.decode(text)
            } catch {
                throw ValueEncodingError(format: self, code: .invalidHex, message: error.description)
            }
        case .utf8:
            guard case .string(let text) = value else { throw wrongType(value, expected: "a string") }
            return Array(text.utf8)
        case .uint8:
            return Self.bytes(try Self.integer(value, in: 0...0xFF, format: self), size: 1)
        case .uint16:
            return Self.bytes(try Self.integer(value, in: 0...0xFFFF, format: self), size: 2)
        case .uint32:
            return Self.bytes(try Self.integer(value, in: 0...0xFFFF_FFFF, format: self), size: 4)
        case .sint8:
            return Self.bytes(try Self.integer(value, in: -0x80...0x7F, format: self), size: 1)
        case .sint16:
            return Self.bytes(try Self.integer(value, in: -0x8000...0x7FFF, format: self), size: 2)
        case .sint32:
            return Self.bytes(try Self.integer(value, in: -0x8000_0000...0x7FFF_FFFF, format: self), size: 4)
        case .batteryLevel:
            return Self.bytes(try Self.integer(value, in: 0...100, format: self), size: 1)
        case .bodySensorLocation:
            return Self.bytes(try Self.integer(value, in: 0...0xFF, format: self), size: 1)
        case .float32:
            let number = try self.number(value)
            guard number.magnitude <= Double(Float.greatestFiniteMagnitude) else {
                throw ValueEncodingError(format: self, code: .outOfRange, message: "\(number) does not fit a float32")
            }
            return Self.bytes(Int64(Float(number).bitPattern), size: 4)
        case .float64:
            return Self.bytes(Int64(bitPattern: try self.number(value).bitPattern), size: 8)
        case .sfloat:
            let number = try self.number(value)
            guard let raw = IEEE11073.encodeSFloat(number) else {
                throw ValueEncodingError(format: self, code: .outOfRange, message: "\(number) does not fit an SFLOAT")
            }
            return Self.bytes(Int64(raw), size: 2)
        case .float:
            let number = try self.number(value)
            guard let raw = IEEE11073.encodeFloat(number) else {
                throw ValueEncodingError(format: self, code: .outOfRange, message: "\(number) does not fit a FLOAT")
            }
            return Self.bytes(Int64(raw), size: 4)
        case .temperature:
            if value.isNull { return [0x00, 0x80] }
            let hundredths = try scaled(value, by: 100, in: -32767...32767, unit: "°C")
            return Self.bytes(hundredths, size: 2)
        case .humidity:
            if value.isNull { return [0xFF, 0xFF] }
            let hundredths = try scaled(value, by: 100, in: 0...10000, unit: "%")
            return Self.bytes(hundredths, size: 2)
        case .heartRateMeasurement:
            return try HeartRateMeasurement(json: value).bytes
        }
    }

    /// The integer in `value` if it is integral and within `range`.
    static func integer(
        _ value: JSONValue, in range: ClosedRange<Int64>, format: ValueFormat, field: String? = nil
    ) throws(ValueEncodingError) -> Int64 {
        let what = field.map { "\"\($0)\"" } ?? "value"
        let integer: Int64
        switch value {
        case .integer(let number):
            integer = number
        case .number(let number):
            guard number.isFinite, number.rounded(.towardZero) == number else {
                throw ValueEncodingError(format: format, code: .notAnInteger, message: "\(what) \(number) is not an integer")
            }
            guard number >= Double(range.lowerBound), number <= Double(range.upperBound) else {
                throw ValueEncodingError(
                    format: format, code: .outOfRange,
                    message: "\(what) \(number) is out of range \(range.lowerBound)...\(range.upperBound)")
            }
            integer = Int64(number)
        default:
            throw ValueEncodingError(
                format: format, code: .wrongType, message: "\(what) must be an integer, not \(value.kindName)")
        }
        guard range.contains(integer) else {
            throw ValueEncodingError(
                format: format, code: .outOfRange,
                message: "\(what) \(integer) is out of range \(range.lowerBound)...\(range.upperBound)")
        }
        return integer
    }

    func number(_ value: JSONValue) throws(ValueEncodingError) -> Double {
        guard let number = value.doubleValue else { throw wrongType(value, expected: "a number") }
        return number
    }

    func scaled(
        _ value: JSONValue, by factor: Double, in range: ClosedRange<Int64>, unit: String
    ) throws(ValueEncodingError) -> Int64 {
        let number = try self.number(value)
        let scaled = (number * factor).rounded()
        guard scaled >= Double(range.lowerBound), scaled <= Double(range.upperBound) else {
            throw ValueEncodingError(
                format: self, code: .outOfRange,
                message: "\(number) \(unit) is out of range "
                    + "\(Double(range.lowerBound) / factor)...\(Double(range.upperBound) / factor)")
        }
        return Int64(scaled)
    }

    func wrongType(_ value: JSONValue, expected: String) -> ValueEncodingError {
        ValueEncodingError(format: self, code: .wrongType, message: "expected \(expected), not \(value.kindName)")
    }

    /// The low `size` bytes of `value`, little endian.
    static func bytes<Value: FixedWidthInteger>(_ value: Value, size: Int) -> [UInt8] {
        let bits = UInt64(truncatingIfNeeded: value)
        return (0..<size).map { UInt8(truncatingIfNeeded: bits >> UInt64(8 * $0)) }
    }
}
