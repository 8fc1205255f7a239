import BridgeBase
import DBusKit

/// A GATT operation a client asks bluetoothd for, as far as faults are concerned.
public enum GattOperation: String, Sendable, CaseIterable {
    /// `ReadValue`.
    case read
    /// `WriteValue` with a response (`request`, `reliable`).
    case write
    /// `StartNotify` (the CCC write that enables notifications or indications).
    case notify
}

/// An error a characteristic answers with (scenario `read_error` / `write_error` / `notify_error`,
/// control method `SetCharacteristicError`).
///
/// Two kinds, mirroring where errors come from on a real system:
/// - ``peripheral(name:code:)``: the peripheral answers with an ATT error; the client sees what
///   BlueZ 5.66's `gatt-client.c` (`create_gatt_dbus_error`) makes of it. Named errors are what a
///   BlueZ-based peripheral application raises (as BlueZ's `example-gatt-server` does), turned into
///   ATT codes as the peripheral's bluetoothd 5.66 does (`gatt-database.c`, `dbus_error_to_att_ecode`).
/// - ``verbatim(_:)``: an exact D-Bus error returned to the client as given.
public enum GattErrorSpec: Sendable, Hashable, CustomStringConvertible {
    /// The peripheral answers with ATT error `code`; `name` is how it was written (for logs).
    case peripheral(name: String, code: UInt8)
    /// This exact D-Bus error is returned.
    case verbatim(DBusError)

    /// Parses a scenario or control error name for `operation`:
    /// - an ATT code (`0x80`, `128`);
    /// - a BlueZ error name, short (`NotPermitted`) or full (`org.bluez.Error.NotPermitted`): what the
    ///   peripheral application raises. `Failed` → 0x80, `NotSupported` → 0x06, `NotAuthorized` → 0x08,
    ///   `InvalidValueLength` → 0x0d, `InvalidOffset` → 0x07, `InProgress` → 0xfe, `NotPermitted` →
    ///   0x02 (read) / 0x03 (write, notify); any other name → 0x0e (Unlikely Error), as bluetoothd does.
    ///   The sim also knows `NotPaired` / `InsufficientEncryption` → 0x0f and
    ///   `InsufficientAuthentication` → 0x05.
    /// Returns nil for text that is neither (empty, `0x00`, `300`, `no such`).
    public static func parse(_ text: String, operation: GattOperation) -> GattErrorSpec? {
        let s = text.trimmingSpaces()
        guard let first = s.first else { return nil }
        if let code = Self.attCode(s) { return .peripheral(name: s, code: code) }
        guard first.isLetter, s.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" }),
              !s.hasSuffix(".") else { return nil }
        let short = s.hasPrefix(BluezError.prefix) ? String(s.dropFirst(BluezError.prefix.count)) : s
        let code: UInt8
        switch short {
        case "Failed": code = 0x80
        case "NotSupported": code = 0x06
        case "NotAuthorized": code = 0x08
        case "InvalidValueLength": code = 0x0d
        case "InvalidOffset": code = 0x07
        case "InProgress": code = 0xfe
        case "NotPermitted": code = operation == .read ? 0x02 : 0x03
        case "NotPaired", "InsufficientEncryption": code = 0x0f
        case "InsufficientAuthentication": code = 0x05
        default: code = 0x0e
        }
        return .peripheral(name: short, code: code)
    }

    /// `0x80`, `0X80` or `128` as an ATT code (1...255).
    static func attCode(_ s: String) -> UInt8? {
        let lower = s.lowercased()
        let v = lower.hasPrefix("0x") ? UInt8(lower.dropFirst(2), radix: 16) : UInt8(lower)
        guard let v, v != 0 else { return nil }
        return v
    }

    /// The D-Bus error the client receives.
    public var dbusError: DBusError {
        switch self {
        case .peripheral(_, let code): return BluezError.att(code)
        case .verbatim(let e): return e
        }
    }

    /// `NotPermitted (ATT 0x03)` or the verbatim error.
    public var description: String {
        switch self {
        case .peripheral(let name, let code): return "\(name) (ATT 0x\(Hex.encode([code])))"
        case .verbatim(let e): return e.description
        }
    }
}

/// When a write fault applies (scenario `error_when`, `accepted_writes`); every set field must match.
public struct WriteCondition: Sendable, Hashable {
    /// The written value is one of these.
    public var values: [[UInt8]]?
    /// The written value is none of these.
    public var valuesNot: [[UInt8]]?
    /// The written value has this length.
    public var length: Int?
    /// The written value does not have this length.
    public var lengthNot: Int?

    /// A condition; all nil matches every write.
    public init(values: [[UInt8]]? = nil, valuesNot: [[UInt8]]? = nil, length: Int? = nil, lengthNot: Int? = nil) {
        self.values = values
        self.valuesNot = valuesNot
        self.length = length
        self.lengthNot = lengthNot
    }

    /// True when a write of `value` meets every set field.
    public func matches(_ value: [UInt8]) -> Bool {
        if let values, !values.contains(value) { return false }
        if let valuesNot, valuesNot.contains(value) { return false }
        if let length, value.count != length { return false }
        if let lengthNot, value.count == lengthNot { return false }
        return true
    }
}

/// One write fault: `error` for writes that meet `condition` (every write when nil).
public struct WriteFaultRule: Sendable, Hashable {
    /// The error answered.
    public var error: GattErrorSpec
    /// Which writes it applies to.
    public var condition: WriteCondition?

    /// Creates a rule.
    public init(error: GattErrorSpec, condition: WriteCondition? = nil) {
        self.error = error
        self.condition = condition
    }
}

/// The injected errors and delays of one characteristic: the scenario's, plus overrides set at run
/// time through the control interface (an override is unconditional and wins; clearing it restores
/// the scenario's behaviour).
public struct CharacteristicFaults: Sendable, Hashable {
    /// Reads fail with this error.
    public var readError: GattErrorSpec?
    /// Writes fail with the first rule that matches the written value.
    public var writeRules: [WriteFaultRule] = []
    /// `StartNotify` fails with this error (the peripheral refuses the CCC write).
    public var notifyError: GattErrorSpec?
    /// The peripheral answers reads this late.
    public var readDelay: Duration?
    /// The peripheral answers write requests this late.
    public var writeDelay: Duration?
    /// The peripheral answers the CCC write of `StartNotify` this late.
    public var notifyDelay: Duration?
    /// Run-time overrides by operation (control `SetCharacteristicError`).
    public var overrides: [GattOperation: GattErrorSpec] = [:]

    /// No faults.
    public init() {}

    /// The error a read answers with, if any.
    public var effectiveReadError: GattErrorSpec? { overrides[.read] ?? readError }

    /// The error `StartNotify` answers with, if any.
    public var effectiveNotifyError: GattErrorSpec? { overrides[.notify] ?? notifyError }

    /// The error a write of `value` answers with, if any.
    public func writeError(for value: [UInt8]) -> GattErrorSpec? {
        if let o = overrides[.write] { return o }
        return writeRules.first { $0.condition?.matches(value) ?? true }?.error
    }

    /// The delay of `operation`.
    public func delay(_ operation: GattOperation) -> Duration? {
        switch operation {
        case .read: return readDelay
        case .write: return writeDelay
        case .notify: return notifyDelay
        }
    }

    /// Sets the delay of `operation` (nil or zero: none).
    public mutating func setDelay(_ operation: GattOperation, _ d: Duration?) {
        let v = (d ?? .zero) > .zero ? d : nil
        switch operation {
        case .read: readDelay = v
        case .write: writeDelay = v
        case .notify: notifyDelay = v
        }
    }
}
