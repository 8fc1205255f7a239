import BridgeCore

/// The part of a cluster core's view that decides who handles each device's `/set` and `/get` (SPEC §10, rule 1):
/// what the supervisor hands command intake after each cluster step that can change an owner or a bridge's state.
package struct CommandRoles: Sendable, Equatable {
    /// The online owner of each owned device.
    package var owners: [String: String] = [:]
    /// Whether this bridge is the online bridge whose id sorts first (it answers for unowned devices).
    package var answersUnowned = false

    /// Roles with these owners.
    package init(owners: [String: String] = [:], answersUnowned: Bool = false) {
        self.owners = owners
        self.answersUnowned = answersUnowned
    }

    /// The role of bridge `bridgeID` for a command to `segment`, and the owner when there is one.
    package func role(for segment: String, bridgeID: String) -> (ClusterCommandRole, owner: String?) {
        let owner = owners[segment]
        return (.of(bridge: bridgeID, owner: owner, answersUnowned: answersUnowned), owner)
    }
}

extension ClusterCore {
    /// The roles as the core sees them now (``OwnershipCore/commandRole(for:)`` for each device).
    package var roles: CommandRoles {
        var owners: [String: String] = [:]
        for device in ownership.owners.keys {
            if let owner = ownership.effectiveOwner(of: device) { owners[device] = owner.bridge }
        }
        return CommandRoles(owners: owners, answersUnowned: ownership.answersUnownedCommands)
    }
}
