/// The Heart Rate Measurement characteristic (0x2A37) of the Heart Rate service.
///
/// Layout: a flags byte, then the heart rate (uint8, or uint16 when flag bit 0
/// is set), the energy expended (uint16 kJ, when bit 3 is set) and any number
/// of RR intervals (uint16 in 1/1024 s, when bit 4 is set). Bit 2 says whether
/// sensor contact is supported, bit 1 whether there is contact.
public struct HeartRateMeasurement: Sendable, Hashable {
    /// Beats per minute.
    public var bpm: UInt16
    /// Sensor contact; `nil` when the sensor does not report contact.
    public var contact: Bool?
    /// Energy expended in kJ, when present.
    public var energy: UInt16?
    /// RR intervals in units of 1/1024 s; `nil` when the field is absent.
    public var rrIntervals: [UInt16]?

    /// Creates a measurement.
    public init(bpm: UInt16, contact: Bool? = nil, energy: UInt16? = nil, rrIntervals: [UInt16]? = nil) {
        self.bpm = bpm
        self.contact = contact
        self.energy = energy
        self.rrIntervals = rrIntervals
    }

    /// Parses the characteristic value; `nil` when it is too short or has bytes left over.
    public init?(bytes: some Collection<UInt8>) {
        var reader = ByteReader(bytes)
        guard let flags = reader.uint8() else { return nil }
        if flags & 0x01 != 0 {
            guard let value = reader.uint16() else { return nil }
            bpm = value
        } else {
            guard let value = reader.uint8() else { return nil }
            bpm = UInt16(value)
        }
        contact = flags & 0x04 != 0 ? flags & 0x02 != 0 : nil
        if flags & 0x08 != 0 {
            guard let value = reader.uint16() else { return nil }
            energy = value
        } else {
            energy = nil
        }
        if flags & 0x10 != 0 {
            var intervals: [UInt16] = []
            while let value = reader.uint16() { intervals.append(value) }
            rrIntervals = intervals
        } else {
            rrIntervals = nil
        }
        guard reader.isAtEnd else { return nil }
    }

    /// The characteristic value: 8-bit heart rate when it fits, else 16-bit.
    public var bytes: [UInt8] {
        var flags: UInt8 = 0
        if bpm > 0xFF { flags |= 0x01 }
        if let contact {
            flags |= 0x04
            if contact { flags |= 0x02 }
        }
        if energy != nil { flags |= 0x08 }
        if rrIntervals != nil { flags |= 0x10 }
        var result: [UInt8] = [flags]
        if bpm > 0xFF {
            result += [UInt8(truncatingIfNeeded: bpm), UInt8(truncatingIfNeeded: bpm >> 8)]
        } else {
            result.append(UInt8(bpm))
        }
        if let energy { result += [UInt8(truncatingIfNeeded: energy), UInt8(truncatingIfNeeded: energy >> 8)] }
        for interval in rrIntervals ?? [] {
            result += [UInt8(truncatingIfNeeded: interval), UInt8(truncatingIfNeeded: interval >> 8)]
        }
        return result
    }

    /// The SPEC §4 value: `{"bpm": 72, "contact": true, "energy": 120, "rr": [0.8095703125]}`,
    /// with `contact`, `energy` and `rr` (seconds) only when present.
    public var jsonValue: JSONValue {
        var object = JSONObject()
        object.members.reserveCapacity(4)
        object.append("bpm", .integer(Int64(bpm)))
        if let contact { object.append("contact", .bool(contact)) }
        if let energy { object.append("energy", .integer(Int64(energy))) }
        if let rrIntervals {
            object.append("rr", .array(rrIntervals.map { .number(Double($0) / 1024) }))
        }
        return .object(object)
    }

    /// Builds a measurement from its JSON value (the inverse of ``jsonValue``).
    /// - Throws: ``ValueEncodingError`` for a missing `bpm`, wrong types or out-of-range numbers.
    public init(json: JSONValue) throws(ValueEncodingError) {
        let format = ValueFormat.heartRateMeasurement
        guard case .object(let object) = json else {
            throw ValueEncodingError(format: format, code: .wrongType, message: "expected an object with \"bpm\"")
        }
        for key in object.keys where !["bpm", "contact", "energy", "rr"].contains(key) {
            throw ValueEncodingError(format: format, code: .wrongType, message: "unknown field \"\(key)\"")
        }
        guard let bpmValue = object["bpm"] else {
            throw ValueEncodingError(format: format, code: .wrongType, message: "missing \"bpm\"")
        }
        bpm = UInt16(try ValueFormat.integer(bpmValue, in: 0...0xFFFF, format: format, field: "bpm"))
        switch object["contact"] {
        case nil, .null?: contact = nil
        case .bool(let value)?: contact = value
        case let other?:
            throw ValueEncodingError(
                format: format, code: .wrongType, message: "\"contact\" must be a boolean, not \(other.kindName)")
        }
        switch object["energy"] {
        case nil, .null?: energy = nil
        case let value?: energy = UInt16(try ValueFormat.integer(value, in: 0...0xFFFF, format: format, field: "energy"))
        }
        switch object["rr"] {
        case nil, .null?:
            rrIntervals = nil
        case .array(let values)?:
            var intervals: [UInt16] = []
            for value in values {
                guard let seconds = value.doubleValue, seconds >= 0, (seconds * 1024).rounded() <= 0xFFFF else {
                    throw ValueEncodingError(
                        format: format, code: .outOfRange,
                        message: "\"rr\" values must be numbers of seconds from 0 to 63.999")
                }
                intervals.append(UInt16((seconds * 1024).rounded()))
            }
            rrIntervals = intervals
        case let other?:
            throw ValueEncodingError(
                format: format, code: .wrongType, message: "\"rr\" must be an array, not \(other.kindName)")
        }
    }
}

/// Reads little-endian integers from a byte collection.
struct ByteReader<Bytes: Collection<UInt8>> {
    let bytes: Bytes
    var index: Bytes.Index

    init(_ bytes: Bytes) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    var isAtEnd: Bool { index == bytes.endIndex }

    mutating func uint8() -> UInt8? {
        guard index != bytes.endIndex else { return nil }
        defer { index = bytes.index(after: index) }
        return bytes[index]
    }

    mutating func uint16() -> UInt16? {
        guard bytes.distance(from: index, to: bytes.endIndex) >= 2, let low = uint8(), let high = uint8() else {
            return nil
        }
        return UInt16(high) << 8 | UInt16(low)
    }
}
