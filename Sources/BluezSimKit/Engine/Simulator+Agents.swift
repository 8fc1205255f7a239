import BridgeBase
import DBusKit

/// `org.bluez.AgentManager1` on `/org/bluez`, as bluetoothd 5.66 (`src/agent.c`) runs it: one agent
/// per client (its unique bus name), a stack of default agents (the newest `RequestDefaultAgent`
/// first), an agent dropped when its client leaves the bus.
extension Simulator {
    /// `RegisterAgent(o path, s capability)`: `AlreadyExists` when the client has an agent (whatever
    /// its path), `InvalidArguments` for an unknown capability. Registering does not make it the
    /// default: only `RequestDefaultAgent` does.
    func registerAgent(sender: String, path: String, capability: String) throws(DBusError) {
        guard agents[sender] == nil else { throw BluezError.alreadyExists }
        guard let io = IOCapability(agentCapability: capability) else { throw BluezError.invalidArguments }
        agents[sender] = RegisteredAgent(owner: sender, path: path, capabilityName: capability, capability: io)
        logger.info("agent registered", metadata: ["client": "\(sender)", "path": "\(path)", "capability": "\(capability)"])
    }

    /// `UnregisterAgent(o path)`: `DoesNotExist` when the client has no agent at that path.
    func unregisterAgent(sender: String, path: String) throws(DBusError) {
        guard let agent = agents[sender], agent.path == path else { throw BluezError.doesNotExist }
        removeAgent(owner: sender)
        logger.info("agent unregistered", metadata: ["client": "\(sender)", "path": "\(path)"])
    }

    /// `RequestDefaultAgent(o path)`: the client's agent at `path` becomes the default (used for
    /// pairings nobody's `Pair` started, and for every `Pair` of clients without an agent).
    func requestDefaultAgent(sender: String, path: String) throws(DBusError) {
        guard let agent = agents[sender], agent.path == path else { throw BluezError.doesNotExist }
        defaultAgents.removeAll { $0 == sender }
        defaultAgents.insert(sender, at: 0)
        logger.info("default agent", metadata: ["client": "\(sender)", "path": "\(path)"])
    }

    /// The client left the bus (bluetoothd's disconnect watch): its agent goes.
    func agentVanished(_ owner: String) {
        guard agents[owner] != nil else { return }
        removeAgent(owner: owner)
        logger.info("agent's client left the bus", metadata: ["client": "\(owner)"])
    }

    func removeAgent(owner: String) {
        agents[owner] = nil
        defaultAgents.removeAll { $0 == owner }
    }

    /// The default agent, if any (bluetoothd's `agent_get(NULL)`).
    var defaultAgent: RegisteredAgent? {
        defaultAgents.first.flatMap { agents[$0] }
    }

    /// The agent a `Pair` from `sender` uses: the sender's own, else the default
    /// (`agent_get(sender)`).
    func agent(for sender: String) -> RegisteredAgent? {
        agents[sender] ?? defaultAgent
    }

    /// The agents for `GetStats`/tests: owner, path, capability, default.
    func agentList() -> [(owner: String, path: String, capability: String, isDefault: Bool)] {
        agents.values.sorted { $0.owner < $1.owner }.map {
            ($0.owner, $0.path, $0.capabilityName, defaultAgents.first == $0.owner)
        }
    }
}
