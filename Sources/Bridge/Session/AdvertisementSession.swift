import BlueZ
import BridgeCore
import RuntimeCore
import Logging

/// Executes an advertisement device's session (SPEC §7; also an advertiser that `bluetooth.advertisements:
/// decodable` picked up): its ``AdvertisementCore`` decides availability and answers; this loop feeds it what the
/// ``AdvertisementRouter`` saw of the device and performs what it decided.
///
/// Packets are decoded and published by the router on the I/O thread. BlueZ dropping the device object (a temporary
/// device that went quiet) does not end the session: the object comes back with the device's next advertisement, at
/// the same path. Availability changes are reported to the supervisor, which records them in the registry.
final class AdvertisementSession {
    /// The seams it acts on (only BlueZ's tree, publishing, the clock, the supervisor's inbox and
    /// the command responder are used).
    let io: SessionIO
    let availabilityTopic: String
    let device: SessionDevice
    let mailbox: Mailbox<SessionInput>
    let router: AdvertisementRouter
    var logger: Logger
    /// The decisions.
    var core: AdvertisementCore

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
        core = AdvertisementCore(
            address: device.address, segment: device.segment, timeout: AdvertisementCore.timeout(of: device.policy))
        var bindkey: [UInt8]?
        if case .advertisement(let key, _) = device.policy { bindkey = key }
        router.setRoute(
            path: device.path,
            AdvertisementRouter.Route(
                segment: device.segment, topic: topics.advertisement(device: device.segment), bindkey: bindkey,
                // No `devices` entry: `advertisements: decodable` picked it up.
                mailbox: mailbox, configured: device.config != nil))
    }

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
        step(.start)
        while true {
            switch await mailbox.receive(until: core.nextDeadline(seen), clock: io.clock) {
            case .input(.stop), .finished:
                router.removeRoute(path: device.path)
                step(.stop)
                return
            case .input(.advertised):
                step(.advertised(router.advertised(path: device.path)))
            case .input(.command(let command)):
                step(.command(command))
            case .input:
                break  // link events do not concern a device that is never connected
            case .deadline:
                step(.deadline)
            }
        }
    }

    /// What the router saw of the device.
    private var seen: AdvertisementCore.Seen {
        let (last, online) = router.seen(path: device.path)
        return .init(last: last, online: online)
    }

    /// Feeds one input to the core and performs what it decided.
    private func step(_ input: AdvertisementCore.Input) {
        for action in core.handle(input, seen: seen, now: io.clock.now) {
            switch action {
            case .publishAvailability(let online):
                io.broker.publish(availabilityTopic, text: online ? "online" : "offline", retain: true)
            case .report(let report):
                io.supervisor.send(.session(path: device.path, report))
            case .respond(let command, let result):
                io.responder.finish(command, result)
            case .markOffline:
                router.markOffline(path: device.path)
            case .log(let level, let message):
                logger.log(level: level, "\(message)")
            }
        }
    }
}
