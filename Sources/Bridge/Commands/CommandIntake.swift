import BridgeCore
import RuntimeCore
import Logging
import MQTT

/// Takes every message of the bridge's subscriptions, in arrival order: `/set` and `/get` go to
/// their device's session queue with their deadline (SPEC §4); bridge requests and Home
/// Assistant's status go to the supervisor. Unknown devices are answered at once.
///
/// It knows the broker only as a ``MessageBroker`` (through its responder) and a stream of
/// ``MQTTMessage``s.
struct CommandIntake: Sendable {
    let topics: TopicMapper
    let registry: DeviceRegistry
    let responder: CommandResponder
    let supervisor: Mailbox<SupervisorInput>
    let clock: any BridgeClock
    let timeout: Duration
    /// `commands` (its `allow` list, SPEC §8).
    let allow: BridgeConfig.Commands
    /// `{prefix}/status` when Home Assistant discovery is on.
    let homeAssistantStatus: String?
    /// With `cluster.enabled`: the cluster topics (to the supervisor) and who executes each device's commands.
    var cluster: (topics: ClusterTopics, roles: ClusterRoles)? = nil

    /// The topic filters whose messages intake takes: the commands and bridge requests, and with
    /// Home Assistant discovery its status topic and the retained per-entity configs of earlier
    /// versions (cleared by the supervisor).
    static func filters(topics: TopicMapper, homeAssistantDiscovery: Bool) -> [String] {
        let own = topics.commandFilters + (topics.cluster?.filters ?? [])
        guard homeAssistantDiscovery else { return own }
        return own + [
            HomeAssistantDiscovery.statusTopic(topics), HomeAssistantDiscovery.legacyFilter(topics),
        ]
    }

    /// Takes the messages in arrival order until the stream finishes or the task is cancelled.
    func run(_ messages: AsyncStream<MQTTMessage>) async {
        for await message in messages { handle(message) }
    }

    /// Takes one message.
    func handle(_ message: MQTTMessage) {
        if let status = homeAssistantStatus {
            if message.topic == status {
                if message.payload == Array("online".utf8) { supervisor.send(.homeAssistantOnline) }
                return
            }
            if HomeAssistantDiscovery.isLegacyTopic(message.topic, topics: topics) {
                if !message.payload.isEmpty { supervisor.send(.legacyDiscovery(topic: message.topic)) }
                return
            }
        }
        if let cluster, let topic = cluster.topics.parse(message.topic) {
            supervisor.send(.cluster(topic, payload: message.payload))
            return
        }
        guard let parsed = topics.parse(message.topic) else { return }
        switch parsed {
        case .bridgeRequest(let command):
            supervisor.send(.request(command: command, message: message))
        case .configDevice(let segment):
            supervisor.send(.configDevice(segment, payload: message.payload))
        case .characteristic(let device, let service, let characteristic, let op):
            let pending = PendingCommand(
                payload: message.payload, replyTo: CommandResponder.replyAddress(of: message), device: device,
                service: service, characteristic: characteristic, operation: op,
                resultTopic: topics.result(device: device, service: service, characteristic: characteristic),
                deadline: clock.now.advanced(by: timeout))
            // Rule 1 of a cluster: the owner executes, the others ignore; for a device nobody owns, one bridge answers.
            var owner: String?
            if let cluster {
                let (role, by) = cluster.roles.role(for: device)
                if role == .ignore { return }
                owner = by
                if role == .answerNotConnected {
                    responder.fail(pending, CommandError(.notConnected, "no bridge of the cluster owns device '\(device)'"))
                    return
                }
            }
            guard allow.allows(device: device, service: service, characteristic: characteristic) else {
                responder.fail(pending, CommandError(
                    .notAllowed, "commands.allow has no pattern for \(device)/\(service)/\(characteristic)"))
                return
            }
            guard let entry = registry.entry(segment: device), entry.mailbox.send(.command(pending)) else {
                if owner != nil {
                    responder.fail(pending, CommandError(.notConnected, "device '\(device)' is being connected by this bridge"))
                    return
                }
                responder.fail(pending, CommandError(.unknownCharacteristic, "no device '\(device)' is known to the bridge"))
                return
            }
        }
    }
}
