import BridgeBase
import DBusKit

/// Passive scanning (`org.bluez.AdvertisementMonitorManager1`, experimental in BlueZ 5.66: only
/// with `bluetoothd --experimental`): the client exports an `AdvertisementMonitor1` object under
/// an ObjectManager and registers its root; BlueZ then reports matching advertisements on
/// `Device1` (RSSI, ServiceData, ManufacturerData) without a discovery session.
extension BlueZClient {
    /// The root of the exported monitor hierarchy, and the monitor.
    public static let monitorRoot = "/org/ble_mqtt_bridge/monitors"
    static let monitorPath = monitorRoot + "/0"

    /// Exports the monitor (once per client) and registers it with the adapter's manager.
    public func registerAdvertisementMonitor(adapter: String, patterns: [AdvertisementMonitorPattern]) async throws(BlueZError) {
        let server = objectServer
        server.addObjectManager(path: Self.monitorRoot)
        let logger = self.logger
        let noop: @Sendable (DBusMethodInvocation) async throws -> [DBusValue] = { _ in [] }
        server.addInterfaces(path: Self.monitorPath, [
            DBusInterfaceExport(
                name: BlueZNames.advertisementMonitor,
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
        do {
            _ = try await connection.call(
                destination: BlueZ.service, path: adapter, interface: BlueZNames.advertisementMonitorManager, method: "RegisterMonitor",
                arguments: [.objectPath(Self.monitorRoot)], timeout: callTimeout)
        } catch {
            throw BlueZError(error)
        }
    }
}
