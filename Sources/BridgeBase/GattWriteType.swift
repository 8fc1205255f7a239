/// How a GATT write is sent (the `type` option of BlueZ's `WriteValue`, and the names of
/// `write_types` in `bridge.yaml`).
public enum GattWriteType: String, Sendable, Hashable, CaseIterable {
    /// Write with response (ATT Write Request): BlueZ answers after the peripheral acknowledged.
    case request
    /// Write without response (ATT Write Command).
    case command

    /// Whether the write waits for the peripheral's response: the result's `"response"` field.
    public var withResponse: Bool { self == .request }
}
