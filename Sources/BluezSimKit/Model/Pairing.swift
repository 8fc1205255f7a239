/// The security an attribute asks of the link (scenario `security`, or the BlueZ flag variants
/// `encrypt-*` / `encrypt-authenticated-*` / `secure-*`).
public enum SecurityLevel: Int, Sendable, Comparable, CaseIterable {
    /// Plain link.
    case none = 0
    /// Encrypted: any bond (Just Works gives one).
    case encrypted = 1
    /// Encrypted with an authenticated key (MITM protection: passkey entry or numeric comparison).
    case authenticated = 2

    public static func < (a: SecurityLevel, b: SecurityLevel) -> Bool { a.rawValue < b.rawValue }

    /// `none`, `encrypted`, `authenticated`.
    public init?(name: String) {
        switch name {
        case "none": self = .none
        case "encrypted": self = .encrypted
        case "authenticated": self = .authenticated
        default: return nil
        }
    }
}

/// An SMP IO capability (Core spec Vol 3 Part H 2.3.2; raw values as on the air). An agent's
/// capability string maps to one as bluetoothd 5.66 `parse_io_capability` does.
public enum IOCapability: UInt8, Sendable, CaseIterable {
    case displayOnly = 0
    case displayYesNo = 1
    case keyboardOnly = 2
    case noInputNoOutput = 3
    case keyboardDisplay = 4

    /// The `RegisterAgent` capability: `DisplayOnly`, `DisplayYesNo`, `KeyboardOnly`,
    /// `NoInputNoOutput`, `KeyboardDisplay`, or `""` (KeyboardDisplay); nil for anything else
    /// (bluetoothd answers `InvalidArguments`).
    public init?(agentCapability name: String) {
        switch name {
        case "", "KeyboardDisplay": self = .keyboardDisplay
        case "DisplayOnly": self = .displayOnly
        case "DisplayYesNo": self = .displayYesNo
        case "KeyboardOnly": self = .keyboardOnly
        case "NoInputNoOutput": self = .noInputNoOutput
        default: return nil
        }
    }
}

/// How an LE Secure Connections pairing goes, from the initiator's (the central's) side.
public enum PairingMethod: Sendable, Equatable {
    /// No user interaction on the peripheral; an unauthenticated key. Linux (with "Always request
    /// for user confirmation for Just Works (LE SC)") still asks bluetoothd, `confirm_hint` set.
    case justWorks
    /// Both display a number and confirm it (`CFM_PASSKEY`): `RequestConfirmation`.
    case numericComparison
    /// The central enters the passkey the peripheral shows (`REQ_PASSKEY`): `RequestPasskey`.
    case passkeyEntry
    /// The central shows a passkey the peripheral's user types (`DSP_PASSKEY`): `DisplayPasskey`.
    case passkeyDisplay

    /// An authenticated (MITM-protected) key results.
    public var authenticated: Bool { self != .justWorks }

    /// The method the Linux kernel picks as initiator (`net/bluetooth/smp.c` `sc_select_method`,
    /// table `sc_method[remote][local]`): the table when either side asks for MITM, else Just Works;
    /// `JUST_CFM` becomes Just Works for a pairing this side started.
    public static func select(local: IOCapability, remote: IOCapability, localMITM: Bool, remoteMITM: Bool) -> PairingMethod {
        guard localMITM || remoteMITM else { return .justWorks }
        // nil: JUST_WORKS or JUST_CFM (initiator: Just Works).
        let table: [[PairingMethod?]] = [
            /* remote DisplayOnly     */ [nil, nil, .passkeyEntry, nil, .passkeyEntry],
            /* remote DisplayYesNo    */ [nil, .numericComparison, .passkeyEntry, nil, .numericComparison],
            /* remote KeyboardOnly    */ [.passkeyDisplay, .passkeyDisplay, .passkeyEntry, nil, .passkeyDisplay],
            /* remote NoInputNoOutput */ [nil, nil, nil, nil, nil],
            /* remote KeyboardDisplay */ [.passkeyDisplay, .numericComparison, .passkeyEntry, nil, .numericComparison],
        ]
        return table[Int(remote.rawValue)][Int(local.rawValue)] ?? .justWorks
    }
}

/// What a simulated peripheral does when a central pairs with it (scenario `pairing`, `passkey`).
public enum PeripheralPairing: Sendable, Equatable {
    /// No IO (NoInputNoOutput), no MITM: Just Works.
    case justWorks
    /// Shows a fixed passkey (DisplayOnly) and requires MITM: the central must enter it; a pairing
    /// that cannot be authenticated is refused (SMP "Authentication Requirements").
    case passkey(UInt32)
    /// Answers every Pairing Request with Pairing Failed ("Pairing Not Supported").
    case refuse

    /// The peripheral's IO capability in its Pairing Response.
    public var ioCapability: IOCapability {
        switch self {
        case .justWorks, .refuse: return .noInputNoOutput
        case .passkey: return .displayOnly
        }
    }

    /// The peripheral sets the MITM bit.
    public var requiresMITM: Bool {
        if case .passkey = self { return true }
        return false
    }
}

/// One `org.bluez.Agent1` registered with `AgentManager1`.
struct RegisteredAgent: Sendable, Equatable {
    /// The unique bus name of the client that registered it.
    var owner: String
    /// Its object path.
    var path: String
    /// The capability it registered with (`RegisterAgent`'s second argument).
    var capabilityName: String
    /// That capability as an IO capability.
    var capability: IOCapability
}
