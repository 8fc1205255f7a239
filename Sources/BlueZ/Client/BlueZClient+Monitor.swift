import DBusKit

/// Passive scanning (`org.bluez.AdvertisementMonitorManager1`, experimental in BlueZ 5.66: only
/// with `bluetoothd --experimental`): the client exports an `AdvertisementMonitor1` object under
/// an ObjectManager and registers its root; BlueZ then reports matching advertisements on
/// `Device1` (RSSI, ServiceData, ManufacturerData) without a discovery session.
extension BlueZClient {
    /// One or-pattern: the advertisement data structure of `adType` whose data, from `start`,
    /// begins with `content`.
    public struct MonitorPattern: Sendable, Hashable {
        public var start: UInt8
        public var adType: UInt8
        public var content: [UInt8]

        /// Creates a pattern.
        public init(start: UInt8 = 0, adType: UInt8, content: [UInt8]) {
            self.start = start
            self.adType = adType
            self.content = content
        }

        /// Service data (AD type 0x16) of a 16-bit UUID, whatever follows.
        public static func serviceData16(_ uuid: UInt16) -> MonitorPattern {
            MonitorPattern(adType: 0x16, content: [UInt8(uuid & 0xFF), UInt8(uuid >> 8)])
        }
    }

    /// The root of the exported monitor hierarchy, and the monitor.
    public static let monitorRoot = "/org/ble_mqtt_bridge/monitors"
    static let monitorPath = monitorRoot + "/0"
    /// The interface of the adapter's monitor manager.
    public static let monitorManagerInterface = "org.bluez.AdvertisementMonitorManager1"

    /// Exports the monitor (once per client) and registers it with the adapter's manager.
    public func registerAdvertisementMonitor(adapter: String, patterns: [MonitorPattern]) async throws(BlueZError) {
        let server = DBusObjectServer(connection: connection, logger: logger)
        server.addObjectManager(path: Self.monitorRoot)
        let logger = self.logger
        let noop: @Sendable (DBusMethodInvocation) async throws -> [DBusValue] = { _ in [] }
        server.addInterfaces(path: Self.monitorPath, [
            DBusInterfaceExport(
                name: "org.bluez.AdvertisementMonitor1",
                properties: [
                    "Type": .string("or_patterns"),
                    "Patterns": .array(
                        "(yyay)", patterns.map { .structure([.byte($0.start), .byte($0.adType), .bytes($0.content)]) }),
                ],
                methods: [
                    "Release": DBusMethod { _ in
                        logger.notice("BlueZ released the advertisement monitor")
                        return []
                    },
                    "Activate": DBusMethod { _ in
                        logger.info("advertisement monitor active: passive scanning")
                        return []
                    },
                    "DeviceFound": DBusMethod(in: "o", noop),
                    "DeviceLost": DBusMethod(in: "o", noop),
                ])
        ])
        keepMonitorServer(server)
        do {
            _ = try await connection.call(
                destination: BlueZ.service, path: adapter, interface: Self.monitorManagerInterface, method: "RegisterMonitor",
                arguments: [.objectPath(Self.monitorRoot)], timeout: callTimeout)
        } catch {
            throw BlueZError(error)
        }
    }
}
