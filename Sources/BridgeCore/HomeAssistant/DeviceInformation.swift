/// What a peripheral's Device Information service (0x180A) says about it: the strings Home
/// Assistant shows on its device page.
public struct DeviceInformation: Sendable, Hashable {
    /// Manufacturer Name String (0x2A29).
    public var manufacturer: String?
    /// Model Number String (0x2A24).
    public var model: String?
    /// Serial Number String (0x2A25).
    public var serial: String?
    /// Hardware Revision String (0x2A27).
    public var hardware: String?
    /// Firmware Revision String (0x2A26).
    public var firmware: String?
    /// Software Revision String (0x2A28).
    public var software: String?

    /// Creates an empty record.
    public init(
        manufacturer: String? = nil, model: String? = nil, serial: String? = nil, hardware: String? = nil,
        firmware: String? = nil, software: String? = nil
    ) {
        self.manufacturer = manufacturer
        self.model = model
        self.serial = serial
        self.hardware = hardware
        self.firmware = firmware
        self.software = software
    }

    /// Whether `uuid` is one of the strings kept here.
    public static func holds(_ uuid: BluetoothUUID) -> Bool {
        guard let short = uuid.uuid16 else { return false }
        return (0x2A24...0x2A29).contains(short)
    }

    /// Records the value of `uuid` (a no-op for other characteristics and for bytes that are not
    /// printable UTF-8); returns whether anything changed.
    @discardableResult
    public mutating func record(_ uuid: BluetoothUUID, bytes: some Collection<UInt8>) -> Bool {
        guard Self.holds(uuid), case .string(let raw)? = ValueFormat.utf8.decodeIfValid(bytes) else { return false }
        let text = String(raw.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
            .trimmingSpaces()
        let value: String? = text.isEmpty ? nil : String(text.prefix(64))
        let old = self
        switch uuid.uuid16 {
        case 0x2A29: manufacturer = value
        case 0x2A24: model = value
        case 0x2A25: serial = value
        case 0x2A27: hardware = value
        case 0x2A26: firmware = value
        case 0x2A28: software = value
        default: break
        }
        return old != self
    }

    /// Home Assistant's `sw_version`: the firmware revision, with the software revision when the
    /// peripheral reports both.
    public var softwareVersion: String? {
        switch (firmware, software) {
        case (let f?, let s?) where f != s: return "\(f) (software \(s))"
        case (let f?, _): return f
        case (nil, let s): return s
        }
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first == " " { scalars = scalars.dropFirst() }
        while let last = scalars.last, last == " " { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
