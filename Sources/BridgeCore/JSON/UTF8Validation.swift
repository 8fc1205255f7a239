/// Strict UTF-8 validation (no overlong forms, no surrogates, nothing above U+10FFFF).
public enum UTF8Validation {
    /// Whether `bytes` is entirely valid UTF-8.
    public static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        if let result = bytes.withContiguousStorageIfAvailable({ isValid(buffer: $0) }) {
            return result
        }
        return Array(bytes).withUnsafeBufferPointer { isValid(buffer: $0) }
    }

    static func isValid(buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < buffer.count {
            if buffer[index] < 0x80 {
                index += 1
                continue
            }
            guard let length = sequenceLength(in: buffer, at: index) else { return false }
            index += length
        }
        return true
    }

    /// The length of the valid multi-byte sequence starting at `index`, or `nil` when
    /// the bytes there are not valid UTF-8. `buffer[index]` must be ≥ 0x80.
    @inline(__always)
    static func sequenceLength(in buffer: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        let lead = buffer[index]
        let remaining = buffer.count - index
        @inline(__always) func continuation(_ offset: Int) -> Bool {
            buffer[index + offset] & 0xC0 == 0x80
        }
        switch lead {
        case 0xC2...0xDF:
            guard remaining >= 2, continuation(1) else { return nil }
            return 2
        case 0xE0:
            guard remaining >= 3, (0xA0...0xBF).contains(buffer[index + 1]), continuation(2) else { return nil }
            return 3
        case 0xE1...0xEC, 0xEE...0xEF:
            guard remaining >= 3, continuation(1), continuation(2) else { return nil }
            return 3
        case 0xED:
            guard remaining >= 3, (0x80...0x9F).contains(buffer[index + 1]), continuation(2) else { return nil }
            return 3
        case 0xF0:
            guard remaining >= 4, (0x90...0xBF).contains(buffer[index + 1]), continuation(2), continuation(3)
            else { return nil }
            return 4
        case 0xF1...0xF3:
            guard remaining >= 4, continuation(1), continuation(2), continuation(3) else { return nil }
            return 4
        case 0xF4:
            guard remaining >= 4, (0x80...0x8F).contains(buffer[index + 1]), continuation(2), continuation(3)
            else { return nil }
            return 4
        default:
            return nil
        }
    }
}
