import BridgeBase
import DBusKit

/// A request of bluetoothd to the pairing agent (`org.bluez.Agent1`), with the device's object path.
public enum BlueZAgentRequest: Sendable, Hashable {
    case requestPasskey(device: String)
    case requestPinCode(device: String)
    case displayPasskey(device: String, passkey: UInt32, entered: UInt16)
    case displayPinCode(device: String, pinCode: String)
    case requestConfirmation(device: String, passkey: UInt32)
    case requestAuthorization(device: String)
    case authorizeService(device: String, uuid: String)
    /// The request in progress was cancelled (the pairing failed or timed out).
    case cancel
    /// bluetoothd unregistered the agent (it is going away).
    case release

    /// The device the request is about.
    public var device: String? {
        switch self {
        case .requestPasskey(let d), .requestPinCode(let d), .displayPasskey(let d, _, _), .displayPinCode(let d, _),
            .requestConfirmation(let d, _), .requestAuthorization(let d), .authorizeService(let d, _):
            d
        case .cancel, .release: nil
        }
    }
}

/// The agent's answer.
public enum BlueZAgentAnswer: Sendable, Hashable {
    /// Return normally.
    case accept
    /// Return this passkey (`RequestPasskey`).
    case passkey(UInt32)
    /// Return `org.bluez.Error.Rejected` with this message.
    case reject(String)
}

/// Answers the agent's requests (called on the I/O thread: decide, do not wait).
public typealias BlueZAgentHandler = @Sendable (BlueZAgentRequest) -> BlueZAgentAnswer

/// Pairing (SPEC §11): the client exports an `org.bluez.Agent1` and registers it as the default agent with
/// `AgentManager1`; `Device1.Pair`, `CancelPairing` and `Trusted`.
extension BlueZClient {
    /// The agent's object path.
    public static let agentPath = "/org/ble_mqtt_bridge/agent"

    /// Exports the agent (its handler replaced on each call) and registers it with `capability` as the default
    /// agent. Again after bluetoothd restarted: it forgets the agents of its earlier life.
    public func registerAgent(capability: String, handler: @escaping BlueZAgentHandler) async throws(BlueZError) {
        let server = objectServer
        server.removeInterfaces(path: Self.agentPath)
        server.addInterfaces(path: Self.agentPath, [Self.agentInterface(handler)])
        do {
            _ = try await connection.call(
                destination: BlueZ.service, path: "/org/bluez", interface: BlueZNames.agentManager, method: "RegisterAgent",
                arguments: [.objectPath(Self.agentPath), .string(capability)], timeout: callTimeout)
        } catch {
            let e = BlueZError(error)
            // Still registered (bluetoothd did not restart): the handler is new, the registration stands.
            guard e.code == .alreadyExists else { throw e }
        }
        do {
            _ = try await connection.call(
                destination: BlueZ.service, path: "/org/bluez", interface: BlueZNames.agentManager,
                method: "RequestDefaultAgent", arguments: [.objectPath(Self.agentPath)], timeout: callTimeout)
        } catch {
            throw BlueZError(error)
        }
    }

    /// `Device1.Pair` (bounded by `timeout`: a peripheral that never answers must not hold the session).
    public func pair(device: String, timeout: Duration) async throws(BlueZError) {
        _ = try await call(device, BlueZ.device, "Pair", timeout: timeout)
    }

    /// `Device1.CancelPairing`.
    public func cancelPairing(device: String) async throws(BlueZError) {
        _ = try await call(device, BlueZ.device, "CancelPairing")
    }

    /// `Device1.Trusted`.
    public func setTrusted(device: String, _ trusted: Bool) async throws(BlueZError) {
        try await setProperty(device, interface: BlueZ.device, name: "Trusted", value: .bool(trusted))
    }

    static func agentInterface(_ handler: @escaping BlueZAgentHandler) -> DBusInterfaceExport {
        @Sendable func answer(_ request: BlueZAgentRequest) throws(DBusError) -> [DBusValue] {
            switch handler(request) {
            case .accept: return []
            case .passkey(let passkey): return [.uint32(passkey)]
            case .reject(let message): throw DBusError("org.bluez.Error.Rejected", message)
            }
        }
        func method(_ signature: DBusSignature, _ request: @escaping @Sendable ([DBusValue]) -> BlueZAgentRequest?)
            -> DBusMethod
        {
            DBusMethod(in: signature) { call in
                guard let r = request(call.arguments) else {
                    throw DBusError("org.bluez.Error.Rejected", "unexpected arguments")
                }
                return try answer(r)
            }
        }
        return DBusInterfaceExport(
            name: BlueZNames.agent1,
            properties: [:],
            methods: [
                "Release": method("") { _ in .release },
                "Cancel": method("") { _ in .cancel },
                "RequestPinCode": method("o") { a in a.first?.string.map { .requestPinCode(device: $0) } },
                "DisplayPinCode": method("os") { a in
                    guard a.count == 2, let d = a[0].string, let pin = a[1].string else { return nil }
                    return .displayPinCode(device: d, pinCode: pin)
                },
                "RequestPasskey": method("o") { a in a.first?.string.map { .requestPasskey(device: $0) } },
                "DisplayPasskey": method("ouq") { a in
                    guard a.count == 3, let d = a[0].string, let p = a[1].int.flatMap(UInt32.init(exactly:)), let e = a[2].int.flatMap(UInt16.init(exactly:)) else { return nil }
                    return .displayPasskey(device: d, passkey: p, entered: e)
                },
                "RequestConfirmation": method("ou") { a in
                    guard a.count == 2, let d = a[0].string, let p = a[1].int.flatMap(UInt32.init(exactly:)) else { return nil }
                    return .requestConfirmation(device: d, passkey: p)
                },
                "RequestAuthorization": method("o") { a in a.first?.string.map { .requestAuthorization(device: $0) } },
                "AuthorizeService": method("os") { a in
                    guard a.count == 2, let d = a[0].string, let u = a[1].string else { return nil }
                    return .authorizeService(device: d, uuid: u)
                },
            ])
    }
}
