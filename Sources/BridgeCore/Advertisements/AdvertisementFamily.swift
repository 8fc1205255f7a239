/// One maker's advertisement format (SPEC §13): a file per family under `Families/`, listed once
/// in ``AdvertisementDecoder/families``.
///
/// A family looks at a frame cheaply first (a dictionary lookup by its service UUID or company
/// id, then the length or the advertised name) and says nothing (`nil`) about frames that are not
/// its own, so that the dispatcher can ask the next family. A frame it claims but cannot read
/// (wrong length for its type byte, values outside the range the format defines, a wrong MIC)
/// is a `.failure`: no publication. A decoder never traps, whatever the bytes, and allocates no
/// more than the values it returns.
public protocol AdvertisementFamily: SendableMetatype {
    /// The `decoder` name in payloads (`"xiaomi"`, `"govee"`, ...).
    static var name: String { get }

    /// Decodes `frame` when it is this family's; `key` is the device's configured `bindkey`
    /// (for the families that encrypt), already hex-decoded.
    static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>?
}
