import BlueZ
import BridgeCore
import Logging

/// The session of a `connection: advertisement` device (SPEC §7), and of an advertiser that
/// `bluetooth.advertisements: decodable` picked up: never connected.
///
/// Packets are decoded and published by ``AdvertisementRouter`` on the I/O thread; this loop
/// owns the device's availability (`online` from its first advertisement, `offline` when none
/// came for `advertisement.timeout`), answers commands (there is no link to run them on) and
/// reports new value names for Home Assistant discovery. BlueZ dropping the device object (a
/// temporary device that went quiet) does not end it: the object comes back with the device's
/// next advertisement, at the same path. Availability changes are reported to the supervisor,
/// which records them in the registry.
final class AdvertisementSession {
    /// The seams it acts on (only BlueZ's tree, publishing, the clock, the supervisor's inbox and
    /// the command responder are used).
    let io: SessionIO
    let availabilityTopic: String
    let device: SessionDevice
    let mailbox: Mailbox<SessionInput>
    let router: AdvertisementRouter
    let timeout: Duration
    var logger: Logger
    var available = false
    var reportedValues = 0
    var reportedModel: (manufacturer: String?, model: String?) = (nil, nil)

    init(
        io: SessionIO, topics: TopicMapper, logger: Logger, device: SessionDevice, mailbox: Mailbox<SessionInput>,
        router: AdvertisementRouter
    ) {
        self.io = io
        availabilityTopic = topics.availability(device: device.segment)
        self.device = device
        self.mailbox = mailbox
        self.router = router
        var logger = logger
        logger[metadataKey: "device"] = "\(device.segment)"
        self.logger = logger
        var bindkey: [UInt8]?
        var timeout: Duration = .seconds(600)
        // No `devices` entry: `advertisements: decodable` picked it up.
        let configured = device.config != nil
        if case .advertisement(let key, let t) = device.policy {
            bindkey = key
            timeout = t
        }
        self.timeout = timeout
        router.setRoute(
            path: device.path,
            AdvertisementRouter.Route(
                segment: device.segment, topic: topics.advertisement(device: device.segment), bindkey: bindkey,
                mailbox: mailbox, configured: configured))
    }

    var now: BridgeInstant { io.clock.now }

    /// Runs until ``SessionInput/stop``.
    func run() async {
        // The advertisement that made BlueZ create the device object came with InterfacesAdded,
        // not as a change: hand what the tree holds to the router first, if it is from this scan
        // (BlueZ drops `RSSI` when discovery stops; data without it is an old scan's).
        if let dev = io.central.device(device.path), dev.rssi != nil,
           !(dev.serviceData.isEmpty && dev.manufacturerData.isEmpty)
        {
            router.handle(BlueZAdvertisement(
                path: device.path, address: dev.address, rssi: dev.rssi, serviceData: dev.serviceData,
                manufacturerData: dev.manufacturerData, dataChanged: true, addressType: dev.addressType,
                name: dev.localName, serviceUUIDs: dev.uuids))
        }
        if router.seen(path: device.path).online {
            setAvailable(true)
        } else {
            io.broker.publish(availabilityTopic, text: "offline", retain: true)
        }
        while true {
            let deadline = available ? router.seen(path: device.path).last?.advanced(by: timeout) : nil
            switch await mailbox.receive(until: deadline, clock: io.clock) {
            case .input(.stop), .finished:
                end()
                return
            case .input(.advertised):
                update()
            case .input(.command(let command)):
                io.responder.fail(
                    command,
                    CommandError(
                        .notConnected,
                        "device '\(device.segment)' is an advertisement device (connection: advertisement): the bridge never connects to it"))
            case .input:
                break  // link events do not concern a device that is never connected
            case .deadline:
                expireIfQuiet()
            }
        }
    }

    /// An advertisement brought the device online, or new value names appeared.
    private func update() {
        let seen = router.seen(path: device.path)
        if seen.online && !available { setAvailable(true) }
        let advertised = router.advertised(path: device.path)
        if advertised.values.count > reportedValues || advertised.manufacturer != reportedModel.manufacturer
            || advertised.model != reportedModel.model
        {
            reportedValues = advertised.values.count
            reportedModel = (advertised.manufacturer, advertised.model)
            io.supervisor.send(.session(path: device.path, .advertised(advertised)))
        }
    }

    private func expireIfQuiet() {
        guard available, let last = router.seen(path: device.path).last, now >= last.advanced(by: timeout) else { return }
        logger.notice("\(device.address): no advertisement for \(timeout): offline")
        router.markOffline(path: device.path)
        setAvailable(false)
    }

    private func setAvailable(_ value: Bool) {
        available = value
        if value { logger.info("\(device.address): advertising: online") }
        io.broker.publish(availabilityTopic, text: value ? "online" : "offline", retain: true)
        io.supervisor.send(.session(path: device.path, .availability(value)))
    }

    private func end() {
        router.removeRoute(path: device.path)
        if available {
            io.broker.publish(availabilityTopic, text: "offline", retain: true)
            io.supervisor.send(.session(path: device.path, .availability(false)))
        }
    }
}
