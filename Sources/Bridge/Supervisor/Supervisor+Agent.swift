import BlueZ
import BridgeCore
import RuntimeCore
import Logging

/// The pairing agent's answers (SPEC §11): ``PairingAgentPolicy`` decides for the device BlueZ names (its address,
/// and its name from the tree), and rejects a device whose failed pairing's delay runs (``PairingHolds``); every
/// request is logged with the device and the answer.
extension Supervisor {
    func agentHandler(_ policy: PairingAgentPolicy) -> BlueZAgentHandler {
        { [central, logger, holds = ctx.pairingHolds, clock = ctx.clock] request in
            guard let path = request.device else {
                logger.info("pairing agent: \(request == .cancel ? "BlueZ cancelled the request in progress" : "released by BlueZ")")
                return .accept
            }
            let address = BluetoothAddress(BlueZDevice.address(fromPath: path))
            let name = central.device(path).flatMap { $0.name ?? $0.alias }
            guard let address, let asked = Self.policyRequest(request) else {
                logger.warning("pairing agent: \(request) for \(path) rejected (not a device object)")
                return .reject("not a device")
            }
            let answer = policy.answer(asked, address: address, name: name, held: holds.holds(address, at: clock.now))
            switch answer {
            case .passkey:
                logger.notice("pairing agent: \(asked) from \(address) (\(name ?? "no name")): answered with the configured passkey")
                return answer.blueZ
            case .accept:
                logger.notice("pairing agent: \(asked) from \(address) (\(name ?? "no name")): accepted")
                return answer.blueZ
            case .reject(let why):
                logger.warning("pairing agent: \(asked) from \(address) (\(name ?? "no name")): rejected: \(why)")
                return answer.blueZ
            }
        }
    }

    static func policyRequest(_ request: BlueZAgentRequest) -> PairingAgentPolicy.Request? {
        switch request {
        case .requestPasskey: .passkey
        case .requestPinCode: .pinCode
        case .displayPasskey(_, let passkey, let entered): .displayPasskey(passkey, entered: entered)
        case .displayPinCode(_, let pin): .displayPinCode(pin)
        case .requestConfirmation(_, let passkey): .confirmation(passkey: passkey)
        case .requestAuthorization: .authorization
        case .authorizeService(_, let uuid): .authorizeService(uuid: uuid)
        case .cancel, .release: nil
        }
    }
}

extension PairingAgentPolicy.Answer {
    /// The answer as the BlueZ client returns it.
    var blueZ: BlueZAgentAnswer {
        switch self {
        case .passkey(let passkey): .passkey(passkey)
        case .accept: .accept
        case .reject(let why): .reject(why)
        }
    }
}
