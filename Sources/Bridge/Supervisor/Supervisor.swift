import BlueZ
import BridgeCore
import Logging
import MQTT

/// Owns the adapter, discovery, the scan watchdog and the known peripherals, and creates and ends
/// one ``PeripheralSession`` per wanted peripheral, each a child task of its loop.
///
/// The supervisor never touches a device's connection: it forwards BlueZ's changes of a device to
/// its session and learns what the session did from its reports. Values do not pass through
/// here (``ValueRouter`` publishes them from the D-Bus thread).
final class Supervisor {
    let ctx: SessionContext
    let mailbox: Mailbox<SupervisorInput>
    var logger: Logger { ctx.logger }
    var config: BridgeConfig { ctx.config }
    var central: any BluetoothCentral { ctx.central }
    var adapterPath: String { config.bluetooth.adapterPath }
    var now: BridgeInstant { ctx.clock.now }

    /// Sessions by device object path.
    var sessions: [String: Mailbox<SessionInput>] = [:]
    var adapterReady = false
    var poweringOn = false
    var discovery = DiscoveryState()
    var known = KnownPeripheralBook()
    var homeAssistant: HomeAssistantPublisher
    var lastDevicesPayload: [UInt8] = []
    var nextSeed: UInt64 = 0x5eed
    let startedAt: BridgeInstant
    var stopping = false
    /// Known peripherals BlueZ dropped: connect again at these times.
    var reconnectKnownAt: [String: BridgeInstant] = [:]
    /// When `{base}/bridge/health` is published next.
    var healthAt: BridgeInstant?
    /// Broker connections since start (health: `reconnects` is one less).
    var brokerConnections = 0

    init(context: SessionContext, mailbox: Mailbox<SupervisorInput>) {
        ctx = context
        self.mailbox = mailbox
        startedAt = context.clock.now
        homeAssistant = HomeAssistantPublisher(
            broker: context.broker, topics: context.topics, logger: context.logger,
            bridge: HomeAssistantDiscovery.Bridge(
                clientID: context.config.mqtt.clientID, version: BridgeCommandLine.version,
                health: context.config.health.interval != nil))
        known.stateFile = context.config.stateFile.map { StateFile(path: $0, logger: context.logger) }
    }

    // MARK: Loop

    /// Runs until ``SupervisorInput/stop``; then stops every session within a bounded time.
    func run() async {
        central.setValueHandler { [router = ctx.router] path, value in router.handle(path: path, value: value) }
        if listensToAdvertisements {
            central.setAdvertisementHandler { [router = ctx.advertisements] ad in router.handle(ad) }
        }
        known.load()
        await withDiscardingTaskGroup { group in
            let central = self.central, mailbox = self.mailbox
            group.addTask {
                for await event in central.events { mailbox.send(.bluez(event)) }
            }
            if let interval = config.health.interval { healthAt = now.advanced(by: interval) }
            await central.start()
            if !central.isAvailable {
                logger.warning("org.bluez is not on the D-Bus: waiting for BlueZ (bluetoothd) to start")
            }
            while !stopping {
                switch await mailbox.receive(until: nextDeadline(), clock: ctx.clock) {
                case .input(let input): handle(input, &group)
                case .deadline: break
                case .finished: beginShutdown(&group)
                }
                fireTimers(&group)
            }
            await finishShutdown(&group)
            group.cancelAll()
        }
        logger.info("published \(ctx.router.published) values\(ctx.router.failed > 0 ? ", \(ctx.router.failed) not sent (broker away)" : "")")
    }

    private func handle(_ input: SupervisorInput, _ group: inout DiscardingTaskGroup) {
        switch input {
        case .bluez(let event):
            handleBlueZ(event, &group)
        case .brokerConnected:
            brokerConnections += 1
            logger.info("MQTT connected: publishing bridge state")
            ctx.broker.publish(ctx.topics.bridgeState, text: "online", retain: true)
            for e in ctx.registry.all {
                ctx.broker.publish(ctx.topics.availability(device: e.segment), text: e.available ? "online" : "offline", retain: true)
            }
            publishDevices(force: true)
            if config.homeAssistant.discovery { homeAssistant.republish(reason: "connected to the broker", now: now) }
            let (sent, dropped) = ctx.router.flushHeld()
            if sent > 0 || dropped > 0 {
                logger.notice("broker back: published \(sent) values held while it was away; \(dropped) older values were replaced by newer ones")
            }
        case .homeAssistantOnline:
            homeAssistant.republish(reason: "Home Assistant is online", now: now)
        case .legacyDiscovery(let topic):
            homeAssistant.clearLegacy(topic: topic)
        case .request(let command, let message):
            handleRequest(command, message, &group)
        case .session(let path, let report):
            handleReport(report, path: path, &group)
        case .sessionEnded(let path):
            sessions[path] = nil
            if let entry = ctx.registry.remove(path: path), entry.available {
                ctx.broker.publish(ctx.topics.availability(device: entry.segment), text: "offline", retain: true)
            }
            publishDevices()
            // The device object may be back already (removed and found again while it ended).
            consider(path, &group)
        case .storedConnectReturned(let path):
            storedConnectReturned(path, &group)
        case .powerFinished(let error):
            poweringOn = false
            if let error { logger.error("cannot power on \(config.bluetooth.adapter): \(error)") }
        case .discoveryFinished(let error):
            discoveryFinished(error, &group)
        case .monitorRegistered(let error):
            monitorRegistered(error, &group)
        case .stop:
            beginShutdown(&group)
        }
    }

    private func handleReport(_ report: SessionReport, path: String, _ group: inout DiscardingTaskGroup) {
        switch report {
        case .availability(let online):
            ctx.registry.update(path: path) { $0.available = online }
            publishDevices()
            updateDiscovery(&group)
        case .linkChanged(let connected):
            ctx.registry.update(path: path) { e in
                e.connected = connected
                if connected { e.connects += 1 }
            }
            publishDevices()
        case .connectReturned:
            storedConnectReturned(path, &group)
        case .mapped(let mapped):
            ctx.registry.update(path: path) { $0.services = mapped.serviceSegments }
            guard let entry = ctx.registry.entry(path: path) else { return }
            if config.homeAssistant.discovery {
                homeAssistant.publish(
                    path: path,
                    HomeAssistantDiscovery.Peripheral(
                        device: entry.segment, address: entry.address.description, name: mapped.name,
                        information: mapped.information, characteristics: mapped.discovery),
                    now: now)
            }
            known.remember(entry, mapped, startedAt: startedAt, now: now, logger: logger)
            publishDevices()
        case .advertised(let decoder, let values):
            guard let entry = ctx.registry.entry(path: path) else { return }
            if config.homeAssistant.discovery {
                let name = central.withTree { t in t.device(path).flatMap { $0.name ?? $0.alias } }
                homeAssistant.publish(
                    path: path,
                    HomeAssistantDiscovery.Peripheral(
                        device: entry.segment, address: entry.address.description, name: name, characteristics: [],
                        advertised: HomeAssistantDiscovery.Advertised(decoder: decoder, values: values)),
                    now: now)
            }
        case .unreadable(let uuid):
            guard let entry = ctx.registry.entry(path: path) else { return }
            known.markUnreadable(address: entry.address.description, uuid: uuid)
        }
    }

    private func nextDeadline() -> BridgeInstant? {
        [discovery.retryAt, discovery.watchdogAt, discovery.heldUntil, reconnectKnownAt.values.min(), healthAt, homeAssistant.resendAt, homeAssistant.holdUntil].compactMap { $0 }.min()
    }

    private func fireTimers(_ group: inout DiscardingTaskGroup) {
        let now = self.now
        if let at = discovery.retryAt, at <= now {
            discovery.retryAt = nil
            ensureDiscovery(&group)
        }
        if let at = discovery.heldUntil, at <= now {
            discovery.heldUntil = nil
            storedConnectReturned(nil, &group)
        }
        if let at = discovery.watchdogAt, at <= now {
            scanWatchdog(&group)
        }
        if let at = healthAt, at <= now { publishHealth() }
        homeAssistant.releaseHeld(now: now)
        if let due = homeAssistant.dueResend(now: now) {
            let sent = ctx.router.resendLast(devices: due.all ? nil : due.devices)
            if sent > 0 { logger.debug("Home Assistant: sent the last \(sent) values again") }
        }
        for (address, at) in reconnectKnownAt where at <= now {
            reconnectKnownAt[address] = nil
            connectKnownPeripherals(only: address, &group)
        }
    }

    // MARK: BlueZ events

    private func handleBlueZ(_ e: BlueZEvent, _ group: inout DiscardingTaskGroup) {
        switch e {
        case .serviceAvailable:
            logger.info("BlueZ is on the D-Bus; \(central.withTree { $0.objects.count }) objects")
            adapterCheck(&group)
        case .serviceLost:
            adapterLost()
            for mailbox in sessions.values { mailbox.send(.deviceRemoved) }
        case .interfacesAdded(let path, let ifaces):
            if ifaces.contains(BlueZ.adapter), path == adapterPath { adapterCheck(&group) }
            if ifaces.contains(BlueZ.device) {
                discovery.lastAdvertisement = now
                consider(path, &group)
            }
            if ifaces.contains(BlueZ.gattService) || ifaces.contains(BlueZ.gattCharacteristic),
               let dev = Self.devicePath(of: path)
            {
                sessions[dev]?.send(.gattObjectsChanged)
            }
        case .interfacesRemoved(let path, let ifaces):
            if ifaces.contains(BlueZ.adapter), path == adapterPath {
                logger.error("adapter \(config.bluetooth.adapter) was removed")
                adapterLost()
            }
            if ifaces.contains(BlueZ.device), let session = sessions[path] {
                let address = BlueZDevice.address(fromPath: path)
                if ctx.registry.entry(path: path)?.policy == "advertisement" {
                    // A temporary device that went quiet: its session keeps waiting for it.
                    logger.debug("BlueZ dropped advertiser \(address) from its tree")
                } else {
                    logger.notice("BlueZ dropped device \(address) from its tree: rediscovering it")
                }
                session.send(.deviceRemoved)
                if known.contains(address) { reconnectKnownAt[address] = now.advanced(by: .seconds(1)) }
            }
        case .notificationsReleased(let characteristic):
            if let dev = Self.devicePath(of: characteristic) {
                sessions[dev]?.send(.notificationsReleased(characteristic: characteristic))
            }
        case .propertiesChanged(let path, let iface, let changed):
            switch iface {
            case BlueZ.adapter where path == adapterPath:
                adapterPropertiesChanged(changed, &group)
            case BlueZ.device:
                devicePropertiesChanged(path, changed, &group)
            default:
                break
            }
        }
    }

    private func devicePropertiesChanged(_ path: String, _ changed: [String], _ group: inout DiscardingTaskGroup) {
        if changed.contains("RSSI") || changed.contains("ManufacturerData") || changed.contains("ServiceData") {
            discovery.lastAdvertisement = now
        }
        guard let session = sessions[path] else {
            if changed.contains("UUIDs") || changed.contains("Name") || changed.contains("Alias")
                || (config.bluetooth.advertisements == .decodable
                    && (changed.contains("ServiceData") || changed.contains("ManufacturerData")))
            {
                consider(path, &group)
            }
            return
        }
        guard let dev = central.withTree({ $0.device(path) }) else { return }
        if changed.contains("Connected") { session.send(.connectedChanged(dev.connected)) }
        if changed.contains("ServicesResolved") { session.send(.servicesResolved(dev.servicesResolved)) }
    }

    /// `/org/bluez/hciN/dev_XX_XX_XX_XX_XX_XX/...` → the device's path.
    static func devicePath(of path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 4, parts[3].hasPrefix("dev_") else { return nil }
        return "/" + parts[0..<4].joined(separator: "/")
    }

    // MARK: Sessions

    /// Starts a session for a device if the configuration wants it.
    func consider(_ path: String, connectNow: Bool = false, _ group: inout DiscardingTaskGroup) {
        guard sessions[path] == nil, adapterReady, !stopping, path.hasPrefix(adapterPath + "/"),
              let dev = central.withTree({ $0.device(path) })
        else { return }
        let address = dev.address
        let name = dev.name ?? dev.alias
        let deviceConfig = config.device(address: address, name: name)
        let wanted = Set(config.bluetooth.services)
        let advertises = dev.uuids.contains { wanted.contains($0) }
        var policy = deviceConfig?.connection ?? .always
        if deviceConfig == nil && !advertises && !known.contains(address.description) {
            // `advertisements: decodable`: an advertiser a decoder understands, never one it does not.
            guard config.bluetooth.advertisements == .decodable, Self.decodable(dev) else {
                logger.trace("ignoring \(dev.address) (\(name ?? "no name")): no wanted service")
                return
            }
            policy = .advertisement(bindkey: nil, timeout: .seconds(600))
        }
        let segment = ctx.topics.deviceSegment(address: address, config: deviceConfig)
        nextSeed &+= 0x9E37_79B9_7F4A_7C15
        let device = SessionDevice(
            path: path, address: address, addressType: dev.addressType.rawValue, segment: segment, config: deviceConfig,
            unreadable: known.unreadable(address: address.description),
            connectNow: connectNow || known.contains(address.description), seed: nextSeed, policy: policy)
        let inbox = Mailbox<SessionInput>()
        sessions[path] = inbox
        ctx.registry.add(DeviceRegistry.Entry(
            path: path, segment: segment, address: address, addressType: dev.addressType.rawValue, policy: policy.name,
            mailbox: inbox))
        logger.info("found \(address) (\(name ?? "no name")) → \(ctx.topics.baseTopic)/\(segment) [\(policy.name)]")
        let context = ctx, supervisor = mailbox
        if case .advertisement = policy {
            let session = AdvertisementSession(context: context, device: device, mailbox: inbox, router: ctx.advertisements)
            group.addTask {
                await session.run()
                supervisor.send(.sessionEnded(path: path))
            }
        } else {
            group.addTask {
                let session = PeripheralSession(context: context, device: device, mailbox: inbox)
                await session.run()
                supervisor.send(.sessionEnded(path: path))
            }
        }
        publishDevices()
    }

    // MARK: Shutdown

    private func beginShutdown(_ group: inout DiscardingTaskGroup) {
        guard !stopping else { return }
        stopping = true
        logger.info("shutting down")
        ctx.broker.publish(ctx.topics.bridgeState, text: "offline", retain: true)
        for mailbox in sessions.values { mailbox.send(.stop) }
        if discovery.ours {
            let central = self.central, adapter = adapterPath
            group.addTask { try? await central.stopDiscovery(adapter: adapter) }
        }
    }

    /// Waits for the sessions to stop notifications and disconnect, at most `stopTimeout`; then
    /// cancels what is left (a wedged adapter or a bus gone must not hold the exit).
    private func finishShutdown(_ group: inout DiscardingTaskGroup) async {
        let deadline = now.advanced(by: .seconds(3))
        while !sessions.isEmpty {
            switch await mailbox.receive(until: deadline, clock: ctx.clock) {
            case .input(.sessionEnded(let path)):
                sessions[path] = nil
                ctx.registry.remove(path: path)
            case .input:
                continue
            case .deadline, .finished:
                logger.notice("\(sessions.count) devices did not disconnect in time; going on")
                sessions.removeAll()
            }
        }
        central.stop()
    }
}
