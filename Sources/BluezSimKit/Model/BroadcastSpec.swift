/// A peripheral that broadcasts sensor readings in its advertisements (`broadcast:` of a
/// scenario device): what each advertisement's service data holds, and how often one comes.
public struct BroadcastSpec: Sendable {
    /// The frame format.
    public enum Kind: String, Sendable, CaseIterable {
        /// BTHome v2 service data (`fcd2`), encrypted with ``BroadcastSpec/bindkey`` when set.
        case bthomeV2 = "bthome_v2"
        /// pvvx custom format (`181a`, 15 bytes).
        case pvvx
        /// ATC1441 format (`181a`, 13 bytes).
        case atc1441
    }

    public var kind: Kind
    /// Time between advertisements (each a new packet).
    public var interval: Duration
    /// BTHome v2 AES-CCM key (16 bytes): frames are encrypted.
    public var bindkey: [UInt8]?
    /// Every Nth packet carries a BTHome button press (0: never).
    public var buttonEvery: Int
    /// Centre of the temperature walk (°C), humidity (%), battery (%).
    public var temperature: Double
    public var humidity: Double
    public var battery: Int

    /// Creates a broadcast description.
    public init(
        kind: Kind, interval: Duration = .seconds(1), bindkey: [UInt8]? = nil, buttonEvery: Int = 0,
        temperature: Double = 21.5, humidity: Double = 45, battery: Int = 91
    ) {
        self.kind = kind
        self.interval = interval
        self.bindkey = bindkey
        self.buttonEvery = buttonEvery
        self.temperature = temperature
        self.humidity = humidity
        self.battery = battery
    }
}
