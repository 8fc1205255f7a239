/// What the bridge's pairing agent (`org.bluez.Agent1`, SPEC §11) answers, as a pure function of the configuration:
/// BlueZ asks, for a device (its address, and its name when BlueZ has one), and the policy says what to answer.
///
/// The agent answers only for configured devices (a `devices` entry matching the address, or the name): a request
/// from any other device is rejected, so that no nearby device can bond with the host through the bridge. For a
/// configured device:
/// - `RequestPasskey`: the device's `passkey` (with `pairing: passkey`); rejected without one.
/// - `RequestConfirmation` (numeric comparison, or Just Works with a confirmation) and `RequestAuthorization` (Just
///   Works): accepted for `pairing: none` and `just_works`; rejected for `passkey` (a device that should show a
///   passkey and does not is not the device configured).
/// - `AuthorizeService`: accepted (a bonded, configured device's service).
/// - `RequestPinCode` (legacy BR/EDR pairing): rejected; the bridge speaks LE.
/// - `DisplayPasskey`, `DisplayPinCode`: nothing to answer (the bridge has no display); logged.
///
/// After a failed pairing of a device, every request of it is rejected until the next attempt (SPEC §11: BlueZ pairs
/// by itself when a request needs encryption, and a lock may lock itself after a few wrong codes).
public struct PairingAgentPolicy: Sendable {
    /// A request of BlueZ to the agent.
    public enum Request: Sendable, Hashable, CustomStringConvertible {
        case passkey
        case pinCode
        case confirmation(passkey: UInt32)
        case authorization
        case authorizeService(uuid: String)
        case displayPasskey(UInt32, entered: UInt16)
        case displayPinCode(String)

        public var description: String {
            switch self {
            case .passkey: "RequestPasskey"
            case .pinCode: "RequestPinCode"
            case .confirmation(let passkey): "RequestConfirmation(\(PairingAgentPolicy.sixDigits(passkey)))"
            case .authorization: "RequestAuthorization"
            case .authorizeService(let uuid): "AuthorizeService(\(uuid))"
            case .displayPasskey(let passkey, let entered): "DisplayPasskey(\(PairingAgentPolicy.sixDigits(passkey)), \(entered) typed)"
            case .displayPinCode(let pin): "DisplayPinCode(\(pin))"
            }
        }
    }

    /// The answer.
    public enum Answer: Sendable, Hashable {
        /// Return this passkey (`RequestPasskey`).
        case passkey(UInt32)
        /// Return normally (accepted, or nothing to say).
        case accept
        /// Return `org.bluez.Error.Rejected` with this reason (for the log).
        case reject(String)
    }

    /// The agent's capability for `AgentManager1.RegisterAgent`: `KeyboardOnly` when a device has a passkey to type,
    /// else `NoInputNoOutput` (Just Works for everything).
    public let capability: String
    let config: BridgeConfig

    /// The policy of a configuration.
    public init(config: BridgeConfig) {
        self.config = config
        capability = config.devices.contains { $0.pairing == .passkey } ? "KeyboardOnly" : "NoInputNoOutput"
    }

    /// The configured device BlueZ asks about, if any.
    public func device(address: BluetoothAddress, name: String?) -> BridgeConfig.Device? {
        config.device(address: address, name: name)
    }

    /// The answer to `request` for the device at `address` (named `name`); `held`: a failed pairing's delay
    /// (``PairingRetry``) runs for the device, and every request of it is rejected until the next attempt.
    public func answer(_ request: Request, address: BluetoothAddress, name: String?, held: Bool = false) -> Answer {
        guard let device = device(address: address, name: name) else {
            return .reject("\(address) is not a configured device")
        }
        if held {
            return .reject("a pairing of \(address) failed; not again before the next attempt")
        }
        switch request {
        case .passkey:
            guard device.pairing == .passkey, let passkey = device.passkey else {
                return .reject("no passkey is configured for \(address) (pairing: \(device.pairing.rawValue))")
            }
            return .passkey(passkey)
        case .confirmation, .authorization:
            guard device.pairing != .passkey else {
                return .reject("\(address) is configured for passkey pairing, not Just Works")
            }
            return .accept
        case .authorizeService:
            return .accept
        case .pinCode:
            return .reject("PIN codes (legacy pairing) are not supported")
        case .displayPasskey, .displayPinCode:
            return .accept
        }
    }

    /// `012345` for 12345.
    public static func sixDigits(_ passkey: UInt32) -> String {
        let text = String(passkey)
        return String(repeating: "0", count: max(0, 6 - text.count)) + text
    }
}
