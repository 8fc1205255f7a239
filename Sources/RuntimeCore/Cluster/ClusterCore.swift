import BridgeCore
import Logging

/// This bridge's part of a cluster (SPEC §10), as a pure state machine: the owner choice (``OwnershipCore``) and
/// this bridge's sightings (``SightingsBook``) behind one ``handle(_:now:unixTime:)``, with the topics and payloads
/// of the broker. Inputs in (the cluster topics received, what the radios hear, the links, the free slots, the
/// time), ``Action``s out (publish, serve, stop serving); no I/O, no clock: ``SupervisorCore`` steps it and decides
/// on its actions in the same step.
///
/// Each sightings payload this bridge publishes is also fed to its own ``OwnershipCore`` at once (its echo from the
/// broker is ignored), so the decisions never wait for a round trip to the broker about this bridge's own radios.
package struct ClusterCore<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What the core is told.
    package enum Event: Sendable, Equatable {
        /// The broker accepted the connection (again): the views start afresh from the retained topics.
        case brokerConnected
        /// The broker connection is lost: stop serving everything.
        case brokerDisconnected
        /// A message on one of ``ClusterTopics/filters``.
        case message(ClusterTopic, payload: [UInt8])
        /// The configuration wants this device (found by address, name, service or decoder; or stored).
        case want(segment: String, address: BluetoothAddress, service: ClusterService)
        /// An adapter of this bridge heard a device.
        case heard(address: BluetoothAddress, adapter: String, rssi: Int)
        /// An adapter of this bridge heard a tracker (SPEC §12) at `address` (a phone's changes every few minutes):
        /// wanted from its first sighting on, owned like an advertisement device (no slot).
        case trackerHeard(segment: String, address: BluetoothAddress, adapter: String, rssi: Int)
        /// This bridge's link to a device came up on `adapter`, or went down (`nil`).
        case link(segment: String, address: BluetoothAddress, adapter: String?)
        /// Free connection slots per adapter of this bridge.
        case freeSlots([String: Int])
        /// The configuration no longer wants this device (removed or renamed at run time, SPEC §14).
        case unwant(segment: String)
        /// A device wanted at run time (SPEC §14): nobody is claimed for it until the sightings of the other bridges,
        /// which learn of it a little later, are in (two sightings intervals).
        case holdClaims(segment: String)
        /// Time passed (``nextDeadline(after:)`` is due).
        case tick
    }

    /// What the executor does, in order.
    package enum Action: Sendable, Equatable {
        /// Publish a retained message (QoS 1); an empty payload deletes the retained topic.
        case publish(topic: String, payload: [UInt8])
        /// Serve the device: start its session.
        case serve(segment: String, adapter: String)
        /// Stop serving the device: stop its session (it disconnects).
        case stopServing(segment: String)
        /// A line for the log.
        case log(Logger.Level, String)
        /// Another bridge's sightings named these trackers (all it names: the others are no longer heard there).
        case trackerSightings(bridge: String, [String: RemoteSighting])
        /// Another bridge went offline: its reports no longer count.
        case bridgeGone(bridge: String)
    }

    package let topics: ClusterTopics
    package private(set) var ownership: OwnershipCore<Instant>
    package private(set) var sightings: SightingsBook<Instant>
    /// The configured trackers' names (SPEC §12): their entries in other bridges' sightings are reported.
    package let trackers: Set<String>

    /// A core for the bridge `settings.bridgeID` under `baseTopic`, with no device wanted yet.
    package init(settings: ClusterSettings, baseTopic: String, trackers: Set<String> = []) {
        self.trackers = trackers
        topics = ClusterTopics(baseTopic: baseTopic, bridgeID: settings.bridgeID)
        ownership = OwnershipCore(settings: settings, wanted: [:])
        sightings = SightingsBook(wanted: [:], rule: settings.switchRule)
    }

    package var bridgeID: String { ownership.bridgeID }

    /// How old another bridge's reading of a tracker may be and still count for the room.
    package static var trackerReadingAge: Duration { .seconds(10) }

    /// Whether a device with this address is wanted (what the radios hear of others is not needed).
    package func wants(address: BluetoothAddress) -> Bool { sightings.wants(address: address) }

    /// Who handles a `/set` or `/get` of the device (rule 1).
    package func commandRole(for segment: String) -> ClusterCommandRole { ownership.commandRole(for: segment) }

    /// Wants a device without a step (the caller steps the cluster with a ``Event/tick`` before it hands out what
    /// it decided): the line for the log when it was not wanted yet, else nil.
    package mutating func want(_ segment: String, address: BluetoothAddress, service: ClusterService) -> Action? {
        guard ownership.wanted[segment] == nil else { return nil }
        sightings.want(segment, address: address)
        ownership.want(segment, service)
        return .log(.debug, "cluster: \(segment) (\(address)) is wanted [\(service == .link ? "link" : "listen")]")
    }

    /// The address of a wanted device (a tracker's latest).
    package func address(of segment: String) -> BluetoothAddress? { sightings.wanted[segment] }

    /// The bridge that owns the device, if online (for logs and the command answers).
    package func owner(of segment: String) -> String? { ownership.effectiveOwner(of: segment)?.bridge }

    /// The earliest time a ``Event/tick`` could change something.
    package func nextDeadline(after now: Instant) -> Instant? {
        [ownership.nextDeadline(after: now), sightings.nextDeadline(after: now)].compactMap { $0 }.min()
    }

    /// Handles one event at `now` (`unixTime`: the wall clock, for `t` and `since`) and returns what to do.
    package mutating func handle(_ event: Event, now: Instant, unixTime: Int64) -> [Action] {
        var out: [Action] = []
        switch event {
        case .brokerConnected:
            ownershipStep(.brokerConnected, now: now, unixTime: unixTime, &out)
            sightingsStep(.brokerConnected, now: now, unixTime: unixTime, &out)
        case .brokerDisconnected:
            sightingsStep(.brokerDisconnected, now: now, unixTime: unixTime, &out)
            ownershipStep(.brokerDisconnected, now: now, unixTime: unixTime, &out)
        case .message(let topic, let payload):
            guard let event = decode(topic, payload, &out) else { break }
            ownershipStep(event, now: now, unixTime: unixTime, &out)
        case .want(let segment, let address, let service):
            guard let line = want(segment, address: address, service: service) else { break }
            out.append(line)
            ownershipStep(.tick, now: now, unixTime: unixTime, &out)
        case .heard(let address, let adapter, let rssi):
            sightingsStep(.heard(address: address, adapter: adapter, rssi: rssi), now: now, unixTime: unixTime, &out)
        case .trackerHeard(let segment, let address, let adapter, let rssi):
            if ownership.wanted[segment] == nil {
                out.append(.log(.debug, "cluster: tracker \(segment) is wanted [listen]"))
                sightings.want(segment, address: address)
                sightings.reportLastSeen(segment)
                ownership.want(segment, .listen)
                ownershipStep(.tick, now: now, unixTime: unixTime, &out)
            } else {
                sightings.move(segment, to: address)
            }
            sightingsStep(.heard(address: address, adapter: adapter, rssi: rssi), now: now, unixTime: unixTime, &out)
        case .link(let segment, let address, let adapter):
            if let adapter {
                sightingsStep(.linkUp(address: address, adapter: adapter), now: now, unixTime: unixTime, &out)
                ownershipStep(.linkUp(device: segment), now: now, unixTime: unixTime, &out)
            } else {
                sightingsStep(.linkDown(address: address), now: now, unixTime: unixTime, &out)
                ownershipStep(.linkDown(device: segment), now: now, unixTime: unixTime, &out)
            }
        case .freeSlots(let slots):
            sightingsStep(.adapters(freeSlots: slots), now: now, unixTime: unixTime, &out)
        case .holdClaims(let segment):
            ownership.holdClaims(segment, until: now.advanced(by: ownership.settings.startupQuiet * 2))
        case .unwant(let segment):
            guard ownership.wanted[segment] != nil else { break }
            sightings.unwant(segment)
            if ownership.unwant(segment) {
                out.append(.publish(topic: topics.owner(device: segment), payload: []))
            }
            out.append(.log(.debug, "cluster: \(segment) is no longer wanted"))
        case .tick:
            sightingsStep(.tick, now: now, unixTime: unixTime, &out)
            ownershipStep(.tick, now: now, unixTime: unixTime, &out)
        }
        return out
    }

    /// A received topic as an ``ClusterEvent``; nil for this bridge's own sightings (fed directly when published).
    private func decode(_ topic: ClusterTopic, _ payload: [UInt8], _ out: inout [Action]) -> ClusterEvent? {
        switch topic {
        case .bridgeState(let bridge):
            let text = String(decoding: payload, as: UTF8.self)
            let online: Bool? = text == "online" ? true : text == "offline" ? false : nil
            if online == nil && !payload.isEmpty {
                out.append(.log(.warning, "cluster: bridge \(bridge) has an unknown state '\(text.prefix(40))': treated as offline"))
            }
            if online != true, bridge != bridgeID, !trackers.isEmpty { out.append(.bridgeGone(bridge: bridge)) }
            return .bridgeState(bridge: bridge, online: online)
        case .sightings(let bridge):
            guard bridge != bridgeID else { return nil }
            do throws(ClusterPayloadError) {
                let decoded = try SightingsPayload.decodeRetained(payload)
                if !trackers.isEmpty {
                    var heard: [String: RemoteSighting] = [:]
                    for (segment, device) in decoded?.devices ?? [:] where trackers.contains(segment) {
                        // Heard how long before the payload was built; an old reading is no strength for the room.
                        let ago = device.lastSeen.map { Duration.seconds(max(0, decoded!.time - $0)) } ?? .zero
                        heard[segment] = RemoteSighting(rssi: ago <= Self.trackerReadingAge ? device.rssi : nil, heardAgo: ago)
                    }
                    out.append(.trackerSightings(bridge: bridge, heard))
                }
                return .sightings(bridge: bridge, decoded)
            } catch {
                out.append(.log(.warning, "cluster: ignoring the sightings of bridge \(bridge): \(error)"))
                return .sightings(bridge: bridge, nil)
            }
        case .owner(let device):
            do throws(ClusterPayloadError) {
                return .owner(device: device, try OwnerPayload.decodeRetained(payload))
            } catch {
                out.append(.log(.warning, "cluster: ignoring the owner claim of \(device): \(error)"))
                return .owner(device: device, nil)
            }
        }
    }

    private mutating func ownershipStep(_ event: ClusterEvent, now: Instant, unixTime: Int64, _ out: inout [Action]) {
        for action in ownership.handle(event, now: now) {
            switch action {
            case .publishOwner(let device, let bridge, let adapter):
                out.append(.log(
                    .info,
                    bridge == bridgeID ? "cluster: claiming \(device) (through \(adapter))"
                        : "cluster: handing \(device) over to bridge \(bridge) (\(adapter))"))
                let payload = OwnerPayload(bridge: bridge, adapter: adapter, since: unixTime)
                out.append(.publish(topic: topics.owner(device: device), payload: payload.jsonBytes))
            case .clearOwner(let device):
                out.append(.log(.info, "cluster: releasing \(device): no bridge hears it"))
                out.append(.publish(topic: topics.owner(device: device), payload: []))
            case .serve(let device, let adapter):
                out.append(.log(.info, "cluster: serving \(device) through \(adapter)"))
                out.append(.serve(segment: device, adapter: adapter))
            case .stopServing(let device):
                let owner = ownership.effectiveOwner(of: device)?.bridge
                out.append(.log(.info, "cluster: no longer serving \(device)\(owner.map { " (owner: \($0))" } ?? "")"))
                out.append(.stopServing(segment: device))
            case .publishSightings:
                sightingsStep(.publishRequested, now: now, unixTime: unixTime, &out)
            }
        }
    }

    private mutating func sightingsStep(_ input: SightingsInput, now: Instant, unixTime: Int64, _ out: inout [Action]) {
        guard let payload = sightings.handle(input, now: now, unixTime: unixTime) else { return }
        out.append(.publish(topic: topics.sightings, payload: payload.jsonBytes))
        ownershipStep(.sightings(bridge: bridgeID, payload), now: now, unixTime: unixTime, &out)
    }
}
