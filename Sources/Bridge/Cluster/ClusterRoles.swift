import BridgeCore
import RuntimeCore
import Synchronization

/// Who handles a device's `/set` and `/get` in a cluster (SPEC §10, rule 1), as the supervisor last decided
/// (``CommandRoles``): command intake reads it for each command from the I/O side, the supervisor writes it after
/// each cluster step that can change an owner or a bridge's state.
final class ClusterRoles: Sendable {
    /// This bridge's id.
    let bridgeID: String
    private let snapshot = Mutex(CommandRoles())

    init(bridgeID: String) {
        self.bridgeID = bridgeID
    }

    /// Replaces the roles.
    func update(_ new: CommandRoles) { snapshot.withLock { $0 = new } }

    /// The role of this bridge for a command to `segment`, and the owner when another bridge has it.
    func role(for segment: String) -> (ClusterCommandRole, owner: String?) {
        snapshot.withLock { $0.role(for: segment, bridgeID: bridgeID) }
    }
}
