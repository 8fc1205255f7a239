/// How the bridge treats a peripheral's connection (SPEC §6, `devices[].connection`).
public enum ConnectionPolicy: Sendable, Hashable {
    /// Connected as long as it is reachable (the default).
    case always
    /// Every `interval` (from the start of the previous cycle): connect, read every readable
    /// characteristic, take notifications for `listen` when above zero, disconnect.
    case poll(interval: Duration, listen: Duration)
    /// Never connected: its advertisements are listened to (SPEC §7). `bindkey`: the AES key of
    /// encrypted BTHome frames; `timeout`: no advertisement for this long makes it `offline`.
    case advertisement(bindkey: [UInt8]?, timeout: Duration)

    /// `always`, `poll` or `advertisement` (the word of the configuration and of `bridge/devices`).
    public var name: String {
        switch self {
        case .always: return "always"
        case .poll: return "poll"
        case .advertisement: return "advertisement"
        }
    }
}
