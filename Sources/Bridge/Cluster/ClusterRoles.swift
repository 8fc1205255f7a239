import BridgeCore
import Synchronization

/// Who handles a device's `/set` and `/get` in a cluster (SPEC §10, rule 1), as the supervisor last decided: command
/// intake reads it for each command from the I/O side, the supervisor writes it after each cluster step that can
/// change an owner or a bridge's state.
final class ClusterRoles: Sendable {
    /// The part of the cluster's view that decides command roles.
    struct Snapshot: Sendable, Equatable {
        /// The online owner of each owned device.
        var owners: [String: String] = [:]
        /// Whether this bridge is the online bridge whose id sorts first (it answers for unowned devices).
        var answersUnowned = false
    }

    /// This bridge's id.
    let bridgeID: String
    private let snapshot = Mutex(Snapshot())

    init(bridgeID: String) {
        self.bridgeID = bridgeID
    }

    /// Replaces the snapshot.
    func update(_ new: Snapshot) { snapshot.withLock { $0 = new } }

    /// The role of this bridge for a command to `segment`, and the owner when another bridge has it.
    func role(for segment: String) -> (ClusterCommandRole, owner: String?) {
        snapshot.withLock { s in
            if let owner = s.owners[segment] { return (owner == bridgeID ? .execute : .ignore, owner) }
            return (s.answersUnowned ? .answerNotConnected : .ignore, nil)
        }
    }
}

extension ClusterCore {
    /// The roles as the core sees them now (the same rule as ``OwnershipCore/commandRole(for:)``).
    var roles: ClusterRoles.Snapshot {
        var owners: [String: String] = [:]
        for device in ownership.owners.keys {
            if let owner = ownership.effectiveOwner(of: device) { owners[device] = owner.bridge }
        }
        return ClusterRoles.Snapshot(owners: owners, answersUnowned: ownership.answersUnownedCommands)
    }
}
