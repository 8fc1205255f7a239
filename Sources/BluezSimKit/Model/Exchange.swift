import BridgeBase

/// A peripheral's request/answer protocol as data (scenario `exchanges`): ordered rules, the first
/// whose `when` matches a write runs its effects. Models devices that need a handshake (a mode
/// write before a read gives real data, a password in every command, checksummed frames answered
/// with ACK or NACK).
public struct DeviceExchanges: Sendable {
    /// The rules in scenario order.
    public var rules: [ExchangeRule]
    /// Every new connection restores the exchange state and the values of the characteristics the
    /// rules write or set (a Mi Flora falls back to its garbage answer after a disconnect).
    public var resetOnConnect: Bool
    /// The state name at start (and after a reset): rules with `when.state` match only in that state.
    public var initialState: String

    /// Creates the exchanges of a device.
    public init(rules: [ExchangeRule] = [], resetOnConnect: Bool = false, initialState: String = "initial") {
        self.rules = rules
        self.resetOnConnect = resetOnConnect
        self.initialState = initialState
    }

    /// The first rule that matches a write of `value` to the characteristic `uuid` in `state`.
    public func rule(characteristic uuid: String, value: [UInt8], state: String) -> ExchangeRule? {
        rules.first { $0.matches(characteristic: uuid, value: value, state: state) }
    }

    /// The characteristics whose value a reset restores: every one the rules write, notify or set.
    public var touchedCharacteristics: Set<String> {
        var out = Set<String>()
        for r in rules {
            out.insert(r.characteristic)
            for e in r.effects {
                switch e {
                case .notify(let u, _), .set(let u, _): out.insert(u)
                case .error, .state: break
                }
            }
        }
        return out
    }
}

/// One exchange rule: `when: {write: {characteristic, value, checksum}, state}`, `then: [effects]`.
public struct ExchangeRule: Sendable {
    /// Full UUID of the written characteristic.
    public var characteristic: String
    /// The written value must match it (nil: any value).
    public var pattern: BytePattern?
    /// The written value must carry a valid checksum (nil: not checked).
    public var checksum: FrameChecksum?
    /// The device must be in this exchange state (nil: any).
    public var state: String?
    /// What the peripheral does, in order.
    public var effects: [ExchangeEffect]

    /// Creates a rule.
    public init(characteristic: String, pattern: BytePattern? = nil, checksum: FrameChecksum? = nil,
                state: String? = nil, effects: [ExchangeEffect]) {
        self.characteristic = characteristic
        self.pattern = pattern
        self.checksum = checksum
        self.state = state
        self.effects = effects
    }

    /// True when a write of `value` to `uuid` in `state` meets every condition.
    public func matches(characteristic uuid: String, value: [UInt8], state current: String) -> Bool {
        guard uuid == characteristic else { return false }
        if let state, state != current { return false }
        if let pattern, !pattern.matches(value) { return false }
        if let checksum, !checksum.isValid(value) { return false }
        return true
    }

    /// The ATT error the rule refuses the write with, if any.
    public var error: GattErrorSpec? {
        for case .error(let e) in effects { return e }
        return nil
    }
}

/// What a matching rule does.
public enum ExchangeEffect: Sendable {
    /// A notification (or indication) of `value` on the characteristic with this UUID, sent only when
    /// a client subscribed (dropped otherwise, like a real peripheral); the value is also stored.
    case notify(characteristic: String, value: [UInt8])
    /// The characteristic's value (what later reads return) becomes `value`.
    case set(characteristic: String, value: [UInt8])
    /// The write is refused with this error (a command is dropped); the value is not stored.
    case error(GattErrorSpec)
    /// The device's exchange state becomes this name.
    case state(String)
}

/// A hex byte pattern (`5711........00`): `..` matches any one byte; the whole written value must
/// match (same length).
public struct BytePattern: Sendable, Hashable, CustomStringConvertible {
    /// Each byte, nil for a wildcard.
    public var bytes: [UInt8?]

    /// Parses `text` (hex digits and `..` pairs, spaces ignored); nil when it is not a pattern.
    public init?(_ text: String) {
        let chars = Array(text.filter { $0 != " " })
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8?] = []
        var i = 0
        while i < chars.count {
            let pair = String(chars[i..<i + 2])
            if pair == ".." {
                out.append(nil)
            } else if let b = UInt8(pair, radix: 16), pair.allSatisfy(\.isHexDigit) {
                out.append(b)
            } else {
                return nil
            }
            i += 2
        }
        bytes = out
    }

    /// True when `value` has the pattern's length and every fixed byte.
    public func matches(_ value: [UInt8]) -> Bool {
        guard value.count == bytes.count else { return false }
        for (b, p) in zip(value, bytes) where p != nil && p != b { return false }
        return true
    }

    /// The pattern as hex with `..` wildcards.
    public var description: String {
        bytes.map { $0.map { Hex.encode([$0]) } ?? ".." }.joined()
    }
}

/// A checksum the last byte of a frame must carry (scenario `checksum: xor8` or
/// `{kind: xor8, from: 4}`).
public struct FrameChecksum: Sendable, Hashable {
    /// The checksum kinds.
    public enum Kind: String, Sendable, CaseIterable {
        /// The XOR of the bytes from ``FrameChecksum/from`` up to the last one (an AM43 frame).
        case xor8
    }

    /// The algorithm.
    public var kind: Kind
    /// The first byte it covers (a frame prefix before it is not covered).
    public var from: Int

    /// Creates a checksum rule.
    public init(kind: Kind, from: Int = 0) {
        self.kind = kind
        self.from = from
    }

    /// True when the last byte of `value` is the checksum of `value[from..<last]`.
    public func isValid(_ value: [UInt8]) -> Bool {
        guard value.count > from + 1, let last = value.last else { return false }
        switch kind {
        case .xor8:
            return value[from..<(value.count - 1)].reduce(0, ^) == last
        }
    }
}
