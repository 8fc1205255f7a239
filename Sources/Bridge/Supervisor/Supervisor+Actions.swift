import BlueZ
import BridgeCore
import RuntimeCore
import Logging

/// Performing the core's actions: BlueZ calls as child tasks (their results come back through the
/// inbox), sessions, the registry, publishing.
extension Supervisor {
    func perform(_ action: SupervisorCore.Action, _ group: inout DiscardingTaskGroup) {
        let central = self.central, mailbox = self.mailbox, logger = self.logger
        switch action {
        case .log(let level, let message):
            logger.log(level: level, "\(message)")

        case .powerOn(let name):
            let adapter = BlueZNames.adapterPath(name)
            group.addTask {
                do throws(BlueZError) {
                    try await central.setPowered(adapter: adapter, true)
                    mailbox.send(.powerFinished(adapter: name, error: nil))
                } catch {
                    mailbox.send(.powerFinished(adapter: name, error: error))
                }
            }
        case .registerMonitor(let name):
            let patterns = Self.monitorPatterns, adapter = BlueZNames.adapterPath(name)
            group.addTask {
                do throws(BlueZError) {
                    try await central.registerAdvertisementMonitor(adapter: adapter, patterns: patterns)
                    mailbox.send(.monitorRegistered(adapter: name, error: nil))
                } catch {
                    mailbox.send(.monitorRegistered(adapter: name, error: error))
                }
            }
        case .startDiscovery(let name, let uuids, let duplicateData):
            let adapter = BlueZNames.adapterPath(name)
            group.addTask {
                do throws(BlueZError) {
                    try await central.setDiscoveryFilter(adapter: adapter, uuids: uuids, duplicateData: duplicateData)
                } catch {
                    logger.warning("SetDiscoveryFilter failed: \(error)")
                }
                let error = await Supervisor.startDiscovery(central, adapter: adapter)
                mailbox.send(.discoveryFinished(adapter: name, error: error))
            }
        case .restartDiscovery(let name):
            let adapter = BlueZNames.adapterPath(name)
            group.addTask {
                try? await central.stopDiscovery(adapter: adapter)
                let error = await Supervisor.startDiscovery(central, adapter: adapter)
                mailbox.send(.discoveryFinished(adapter: name, error: error))
            }
        case .stopDiscovery(let name):
            let adapter = BlueZNames.adapterPath(name)
            group.addTask {
                do throws(BlueZError) { try await central.stopDiscovery(adapter: adapter) } catch {
                    logger.debug("StopDiscovery: \(error)")
                }
            }
        case .connectDevice(let address, let addressType, let path):
            let adapter = BlueZNames.adapterPath(BlueZNames.adapterName(of: path))
            group.addTask {
                do throws(BlueZError) {
                    let created = try await central.connectDevice(adapter: adapter, address: address, addressType: addressType)
                    logger.info("ConnectDevice \(address) → \(created)")
                } catch {
                    logger.notice("ConnectDevice \(address) failed (\(error)); waiting for the scan to find it")
                }
                mailbox.send(.storedConnectReturned(path: path))
            }
        case .registerAgent:
            let policy = PairingAgentPolicy(config: config), handler = agentHandler(policy)
            group.addTask {
                do throws(BlueZError) {
                    try await central.registerAgent(capability: policy.capability, handler: handler)
                    logger.info("pairing agent registered (\(policy.capability)): it answers for the configured devices only")
                } catch {
                    logger.warning("cannot register the pairing agent: \(error); devices that need pairing will fail to pair")
                }
            }
        case .disconnectDevice(let path):
            group.addTask {
                do throws(BlueZError) { try await central.disconnect(device: path) } catch {
                    logger.debug("Disconnect \(path): \(error)")
                }
            }
        case .removeDevice(let path):
            let adapter = BlueZNames.adapterPath(BlueZNames.adapterName(of: path))
            group.addTask {
                try? await central.disconnect(device: path)
                do throws(BlueZError) { try await central.removeDevice(adapter: adapter, device: path) } catch {
                    logger.debug("RemoveDevice \(path): \(error)")
                }
            }

        case .publishRetained, .subscribeClusterTopics, .commandRoles, .trackerOwnership, .trackerSightings, .bridgeGone:
            performCluster(action)
        case .startSession(let plan):
            startSession(plan, &group)
        case .send(let path, let signal):
            sessions[path]?.send(Self.input(signal))
        case .record(let record):
            ctx.registry.record(record)
        case .unregister(let path):
            ctx.registry.remove(path: path)

        case .publishBridgeState(let online):
            ctx.broker.publish(ctx.topics.bridgeState, text: online ? "online" : "offline", retain: true)
        case .publishAvailability(let segment, let online):
            ctx.broker.publish(ctx.topics.availability(device: segment), text: online ? "online" : "offline", retain: true)
        case .sendDevices(let payload):
            ctx.broker.publish(topic: ctx.topics.bridgeDevices, payload: payload, qos: 1, retain: true)
        case .respond(let response):
            respond(response)
        case .devicesChanged(let devices):
            ctx.config.devices = devices
            ctx.topics = TopicMapper(config: ctx.config)
        case .writeAddedDevices(let entries):
            ctx.config.devicesFilePath.map { DevicesFile(path: $0, logger: logger) }?.save(entries)
        case .scanStarted:
            scanCollector.begin()
        case .answerScan(var response, let since):
            response.body = .scan(scanList(since: since))
            respond(response)
        case .scanFinished:
            scanCollector.end()
        case .flushHeldValues:
            let (sent, dropped) = ctx.router.flushHeld()
            if sent > 0 || dropped > 0 {
                logger.notice("broker back: published \(sent) values held while it was away; \(dropped) older values were replaced by newer ones")
            }
        case .publishHealth:
            publishHealth()

        case .homeAssistantRepublish(let reason, let startHold):
            homeAssistant.republish(reason: reason, startHold: startHold)
        case .homeAssistantPublish(let path, let peripheral, let hold):
            if homeAssistant.publish(path: path, peripheral, hold: hold) {
                feed(.homeAssistantSent(devices: [peripheral.device]), .noDevices, &group)
            }
        case .homeAssistantReleaseHeld:
            if homeAssistant.releaseHeld() { feed(.homeAssistantSent(devices: nil), .noDevices, &group) }
        case .resendLastValues(let segments):
            let sent = ctx.router.resendLast(devices: segments)
            if sent > 0 { logger.debug("Home Assistant: sent the last \(sent) values again") }
        case .homeAssistantRemove(let path):
            homeAssistant.remove(path: path)
        case .homeAssistantForget(let path):
            homeAssistant.forget(path: path)
        case .clearLegacyDiscovery(let topic):
            homeAssistant.clearLegacy(topic: topic)
        case .presenceBroker(let up):
            ctx.presence?.broker(up: up)

        case .remember(let address, let addressType, let mapped):
            known.remember(address: address, addressType: addressType, mapped, startedAt: core.startedAt, now: now, logger: logger)
        case .markUnreadable(let address, let uuid):
            known.markUnreadable(address: address, uuid: uuid)
        case .forgetStored(let address):
            known.forget(address)
        case .forgetLastValues(let segment):
            ctx.router.forgetLast(device: segment)

        case .finishShutdown:
            sessions.removeAll()
            central.stop()
            done = true
        }
    }

    /// `StartDiscovery`; its error, nil when the scan started (the core is told either way).
    static func startDiscovery(_ central: any BluetoothCentral, adapter: String) async -> BlueZError? {
        do throws(BlueZError) {
            try await central.startDiscovery(adapter: adapter)
            return nil
        } catch {
            return error
        }
    }

    /// The or-patterns of the monitor (``AdvertisementMonitorPattern+Families``): the service data
    /// and company ids of every decoder, and the advertised names of the families told by name.
    static let monitorPatterns = AdvertisementMonitorPattern.decoders

    static func input(_ signal: SupervisorCore.SessionSignal) -> SessionInput {
        switch signal {
        case .connectedChanged(let connected): .connectedChanged(connected)
        case .servicesResolved(let resolved): .servicesResolved(resolved)
        case .gattObjectsChanged: .gattObjectsChanged
        case .deviceRemoved: .deviceRemoved
        case .notificationsReleased(let characteristic): .notificationsReleased(characteristic: characteristic)
        case .reconnectRequested: .reconnectRequested
        case .stop: .stop
        }
    }

    /// Creates a session, its inbox and its registry entry; its loop is a child task.
    private func startSession(_ plan: SupervisorCore.SessionPlan, _ group: inout DiscardingTaskGroup) {
        let path = plan.path
        let device = SessionDevice(
            path: path, address: plan.address, addressType: plan.addressType, segment: plan.segment, config: plan.config,
            unreadable: known.unreadable(address: plan.address.description), connectNow: plan.connectNow, seed: plan.seed,
            policy: plan.policy, pairingRetry: ctx.pairingHolds.retry(of: plan.address))
        let inbox = Mailbox<SessionInput>()
        sessions[path] = inbox
        let record = DeviceRecord(
            path: path, segment: plan.segment, address: plan.address, addressType: plan.addressType, policy: plan.policy)
        ctx.registry.add(DeviceRegistry.Entry(record: record, mailbox: inbox))
        let context = ctx, supervisor = mailbox
        if case .advertisement = plan.policy {
            let session = AdvertisementSession(
                io: ctx.io, topics: ctx.topics, logger: logger, device: device, mailbox: inbox, router: ctx.advertisements)
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
    }
}
