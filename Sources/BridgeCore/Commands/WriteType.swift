/// The BlueZ `WriteValue` `type` option: how a write is sent.
public enum WriteType: String, Sendable, Hashable, CaseIterable {
    /// Write with response (ATT Write Request): BlueZ answers after the peripheral acknowledged.
    case request
    /// Write without response (ATT Write Command).
    case command

    /// Whether the write waits for the peripheral's response: the result's `"response"` field.
    public var withResponse: Bool { self == .request }
}
