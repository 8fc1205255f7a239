import Testing

@testable import BridgeCore

/// Several ``OwnershipCore``s against a model broker, over many random steps: crashes (last will after
/// 1.5 × keepalive), clean stops, restarts, broker restarts, partitions (a bridge cut off from the broker while its
/// radio works: it notices after a keepalive, SPEC §10 rule 7; the broker publishes its will at exactly 1.5 ×),
/// RSSI changes and message latencies below the claim wait. Rule 1 is checked after every step: never two links to one device, never two publishers of
/// an advertisement device. At the end, with every bridge back and every device in range, every device is
/// served exactly once (the rules make progress).
@Suite struct ClusterSimulationTests {
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64]) func ruleOneHoldsUnderRandomSteps(seed: UInt64) {
        var model = ClusterModel(seed: seed)
        for _ in 0..<12_000 {  // 600 s of 50 ms steps
            model.perturb()
            model.step()
            if let violation = model.violation() {
                Issue.record("seed \(seed) at \(model.now) s: \(violation)")
                return
            }
        }
        model.settle()
        for _ in 0..<3_000 {  // 150 s: claims, handovers and releases run their course
            model.step()
            if let violation = model.violation() {
                Issue.record("seed \(seed) at \(model.now) s: \(violation)")
                return
            }
        }
        for device in ClusterModel.devices.keys.sorted() {
            #expect(model.holders(of: device).count == 1, "seed \(seed): \(device) held by \(model.holders(of: device))")
        }
        #expect(model.stats.serves > 10)
        #expect(model.stats.crashes > 0 && model.stats.restarts > 0 && model.stats.handovers > 0)
        #expect(model.stats.partitions > 0)
    }
}

/// The model: bridges, their links, and an MQTT broker that orders every publish and delivers each subscriber's
/// messages in that order (per-topic order, as MQTT guarantees), retaining the last message of every topic.
struct ClusterModel {
    enum Topic: Hashable, Comparable {
        case state(String), sightings(String), owner(String)
    }

    struct Stats { var serves = 0, crashes = 0, restarts = 0, brokerRestarts = 0, handovers = 0, partitions = 0 }

    /// A bridge cut off from the broker (rule 7): what it sends is lost, nothing reaches it; it notices at
    /// `noticeAt` (the bridge's keepalive after its last answered probe) and is reachable again at `healAt`.
    struct CutOff { var noticeAt: Double, healAt: Double, noticed = false }

    static let ids = ["a", "b", "c"]
    static let devices: [String: ClusterService] = ["d1": .link, "d2": .link, "d3": .link, "adv": .listen]
    static let maxSlots = 2
    static let dt = 0.05

    var random: SplitMix64
    var now = 0.0
    var stats = Stats()
    var cores: [String: Ownership] = [:]
    /// Bridges whose broker session is up.
    var online: Set<String> = []
    var rssi: [String: [String: Int]] = [:]
    var links: [String: Set<String>] = [:]
    var pendingLinkDowns: [(at: Double, bridge: String, device: String)] = []
    var listening: [String: Set<String>] = [:]
    var retained: [Topic: [UInt8]] = [:]
    var uplink: [(at: Double, topic: Topic, payload: [UInt8])] = []
    var inbox: [String: [(at: Double, topic: Topic, payload: [UInt8])]] = [:]
    var nextSightings: [String: Double] = [:]
    var wills: [String: Double] = [:]
    var brokerBackAt: Double?
    var cutOff: [String: CutOff] = [:]
    /// The keepalive of the model's bridges (their will: 1.5 × after the broker last heard them).
    static let keepAlive = 2.0
    /// When a cut-off bridge notices, after the cut: a keepalive (rule 7's probe); libmosquitto alone takes up to
    /// about 2.5 × (a PINGREQ a keepalive after the last packet, a keepalive for its answer, the misc tick).
    var noticeAfter = ClusterModel.keepAlive

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
        for id in Self.ids {
            rssi[id] = [:]
            for device in Self.devices.keys where random.next() % 4 != 0 { rssi[id]![device] = -40 - Int(random.next() % 60) }
            start(id)
        }
    }

    mutating func chance(_ probability: Double) -> Bool { random.nextUnit() < probability }
    mutating func latency() -> Double { Double(random.next() % 6) * Self.dt }  // 0...250 ms

    func holders(of device: String) -> [String] {
        Self.ids.filter { links[$0, default: []].contains(device) || listening[$0, default: []].contains(device) }
    }

    func violation() -> String? {
        for device in Self.devices.keys.sorted() where holders(of: device).count > 1 {
            return "\(device) held by \(holders(of: device))"
        }
        return nil
    }

    // MARK: bridges

    mutating func start(_ id: String) {
        if let will = wills[id], will > now { wills[id] = now }  // the old session's will goes out at takeover
        fireWills()
        cores[id] = ClusterFixture.core(id, wanted: Self.devices)
        connect(id)
    }

    mutating func connect(_ id: String) {
        online.insert(id)
        inbox[id] = []
        run(id, .brokerConnected)
        publish(.state(id), Array("online".utf8), from: id)
        for (topic, payload) in retained.sorted(by: { $0.key < $1.key }) { inbox[id]!.append((now + latency(), topic, payload)) }
        nextSightings[id] = now
    }

    mutating func crash(_ id: String) {
        cutOff[id] = nil
        cores[id] = nil
        online.remove(id)
        links[id] = []
        listening[id] = []
        inbox[id] = nil
        wills[id] = now + 3  // 1.5 × a 2 s keepalive
        stats.crashes += 1
    }

    mutating func stopCleanly(_ id: String) {
        run(id, .brokerDisconnected)
        links[id] = []
        listening[id] = []
        pendingLinkDowns.removeAll { $0.bridge == id }
        publish(.state(id), Array("offline".utf8), from: id)
        cores[id] = nil
        online.remove(id)
        inbox[id] = nil
    }

    mutating func run(_ id: String, _ event: ClusterEvent) {
        guard var core = cores[id] else { return }
        let actions = core.handle(event, now: ClusterFixture.t(now))
        cores[id] = core
        for action in actions { execute(id, action) }
    }

    mutating func execute(_ id: String, _ action: ClusterAction) {
        switch action {
        case .publishOwner(let device, let bridge, let adapter):
            if bridge != id { stats.handovers += 1 }
            publish(.owner(device), OwnerPayload(bridge: bridge, adapter: adapter, since: Int64(now)).jsonBytes, from: id)
        case .clearOwner(let device):
            publish(.owner(device), [], from: id)
        case .serve(let device, _):
            stats.serves += 1
            if Self.devices[device] == .listen {
                listening[id, default: []].insert(device)
            } else {
                links[id, default: []].insert(device)
                run(id, .linkUp(device: device))
            }
        case .stopServing(let device):
            listening[id, default: []].remove(device)
            if links[id, default: []].contains(device) {
                pendingLinkDowns.append((now + latency() + Self.dt, id, device))
            }
        case .publishSightings:
            publishSightings(id)
        }
    }

    mutating func publish(_ topic: Topic, _ payload: [UInt8], from id: String) {
        // Cut off: lost, and what the bridge queued meanwhile is forgotten at its reconnection (forgetUnsentOnLoss).
        guard brokerBackAt == nil, cutOff[id] == nil else { return }
        uplink.append((now + latency(), topic, payload))
    }

    mutating func publishSightings(_ id: String) {
        let held = links[id, default: []]
        var devices: [String: SightingsPayload.Device] = [:]
        for (device, _) in Self.devices where rssi[id]![device] != nil || held.contains(device) {
            devices[device] = .init(
                address: ClusterFixture.address(device), rssi: rssi[id]![device], adapter: "hci0", connected: held.contains(device))
        }
        let payload = SightingsPayload(
            time: Int64(now), adapters: ["hci0": .init(freeSlots: max(0, Self.maxSlots - held.count))], devices: devices)
        publish(.sightings(id), payload.jsonBytes, from: id)
        nextSightings[id] = now + 5
    }

    // MARK: broker

    mutating func fireWills() {
        for (id, at) in wills.sorted(by: { $0.key < $1.key }) where at <= now {
            wills[id] = nil
            if cutOff[id] != nil { online.remove(id) }  // the broker ends the silent session
            if !online.contains(id) { brokerAccept(.state(id), Array("offline".utf8)) }
        }
    }

    mutating func brokerAccept(_ topic: Topic, _ payload: [UInt8]) {
        retained[topic] = payload.isEmpty ? nil : payload
        for id in online.sorted() where cutOff[id] == nil {
            let earliest = inbox[id]!.last?.at ?? now
            inbox[id]!.append((max(earliest, now + latency()), topic, payload))
        }
    }

    static func event(_ topic: Topic, _ payload: [UInt8]) -> ClusterEvent {
        switch topic {
        case .state(let id):
            let text = String(decoding: payload, as: UTF8.self)
            return .bridgeState(bridge: id, online: text == "online" ? true : text == "offline" ? false : nil)
        case .sightings(let id):
            return .sightings(bridge: id, try? SightingsPayload.decodeRetained(payload))
        case .owner(let device):
            return .owner(device: device, try? OwnerPayload.decodeRetained(payload))
        }
    }

    // MARK: time

    mutating func step() {
        now += Self.dt
        if let back = brokerBackAt, back <= now {
            brokerBackAt = nil
            for id in Self.ids.sorted() where cores[id] != nil { connect(id) }
        }
        uplink.sort { $0.at < $1.at }
        while let first = uplink.first, first.at <= now {
            uplink.removeFirst()
            brokerAccept(first.topic, first.payload)
        }
        fireWills()
        stepPartitions()
        for down in pendingLinkDowns where down.at <= now {
            links[down.bridge, default: []].remove(down.device)
            run(down.bridge, .linkDown(device: down.device))
        }
        pendingLinkDowns.removeAll { $0.at <= now }
        for id in Self.ids.sorted() where online.contains(id) && cutOff[id] == nil {
            while let message = inbox[id]?.first, message.at <= now {
                inbox[id]!.removeFirst()
                run(id, Self.event(message.topic, message.payload))
            }
            if let due = nextSightings[id], due <= now { publishSightings(id) }
            if let core = cores[id], let deadline = core.nextDeadline(after: ClusterFixture.t(now - Self.dt)),
                deadline <= ClusterFixture.t(now)
            {
                run(id, .tick)
            }
        }
    }

    mutating func perturb() {
        if chance(0.02) {
            let id = Self.ids[Int(random.next() % 3)]
            let device = Self.devices.keys.sorted()[Int(random.next() % 4)]
            rssi[id]![device] = chance(0.2) ? nil : -40 - Int(random.next() % 60)
        }
        let alive = Self.ids.filter { cores[$0] != nil && cutOff[$0] == nil }
        if alive.count > 1, brokerBackAt == nil, chance(0.001) {
            partition(alive[Int(random.next() % UInt64(alive.count))], healAfter: noticeAfter + Double(random.next() % 300) * Self.dt)
        }
        if alive.count > 1, chance(0.0015) {
            let id = alive[Int(random.next() % UInt64(alive.count))]
            if chance(0.5) { crash(id) } else { stopCleanly(id) }
        }
        let dead = Self.ids.filter { cores[$0] == nil }
        if !dead.isEmpty, brokerBackAt == nil, chance(0.004) {
            stats.restarts += 1
            start(dead[Int(random.next() % UInt64(dead.count))])
        }
        if brokerBackAt == nil, cutOff.isEmpty, chance(0.0004) {
            stats.brokerRestarts += 1
            for id in online.sorted() { run(id, .brokerDisconnected) }
            online = []
            uplink = []
            inbox = [:]
            brokerBackAt = now + 2
        }
    }

    /// Every bridge back, every device in range of every bridge.
    mutating func settle() {
        for id in cutOff.keys.sorted() { cutOff[id]!.healAt = min(cutOff[id]!.healAt, max(now, cutOff[id]!.noticeAt)) }
        while !cutOff.isEmpty { step() }
        for id in Self.ids {
            for device in Self.devices.keys { rssi[id]![device] = rssi[id]![device] ?? -95 }
        }
        if brokerBackAt != nil {
            brokerBackAt = nil
            for id in Self.ids.sorted() where cores[id] != nil { connect(id) }
        }
        for id in Self.ids where cores[id] == nil { start(id) }
    }
}

// MARK: partitions

extension ClusterModel {
    /// Cuts `id` off the broker now (its radio keeps working); healed `healAfter` seconds later (at least after it
    /// noticed: a shorter blip is no loss, TCP delivers what waited).
    mutating func partition(_ id: String, healAfter: Double) {
        stats.partitions += 1
        cutOff[id] = CutOff(noticeAt: now + noticeAfter, healAt: now + max(healAfter, noticeAfter + Self.dt))
        inbox[id] = []
        // The broker last heard it now at the latest: the will at exactly 1.5 × keepalive (EMQX, HiveMQ).
        wills[id] = now + 1.5 * Self.keepAlive
    }

    /// A cut-off bridge notices (rule 7: it lets go of its links and stops serving), and is healed: it reconnects
    /// (its old session ends: the will goes out if it had not) and reads the retained topics.
    mutating func stepPartitions() {
        for id in cutOff.keys.sorted() {
            if !cutOff[id]!.noticed, cutOff[id]!.noticeAt <= now {
                cutOff[id]!.noticed = true
                run(id, .brokerDisconnected)
            }
            if cutOff[id]!.noticed, cutOff[id]!.healAt <= now {
                cutOff[id] = nil
                if let will = wills[id], will > now { wills[id] = now }
                fireWills()
                online.remove(id)
                connect(id)
            }
        }
    }
}
