import BlueZ
import BridgeCore

extension Supervisor {
    static func devicePath(adapter: String, address: String) -> String {
        adapter + "/dev_" + address.uppercased().split(separator: ":").joined(separator: "_")
    }

    /// Connects the peripherals of the state file straight away: the device object BlueZ still
    /// has, else `Adapter1.ConnectDevice` with the stored address type, else the scan finds it.
    func connectKnownPeripherals(only address: String? = nil, _ group: inout DiscardingTaskGroup) {
        for p in known.all where address == nil || p.address == address {
            guard adapterReady else { return }
            let path = Self.devicePath(adapter: adapterPath, address: p.address)
            if central.withTree({ $0.device(path) }) != nil {
                logger.info("stored peripheral \(p.address): BlueZ still knows it, connecting")
                consider(path, connectNow: true, &group)
                continue
            }
            logger.info("stored peripheral \(p.address): not in BlueZ's tree, trying ConnectDevice")
            let central = self.central, adapter = adapterPath, logger = self.logger
            group.addTask {
                do throws(BlueZError) {
                    let created = try await central.connectDevice(adapter: adapter, address: p.address, addressType: p.addressType)
                    logger.info("ConnectDevice \(p.address) → \(created)")
                } catch {
                    logger.notice("ConnectDevice \(p.address) failed (\(error)); waiting for the scan to find it")
                }
            }
        }
    }
}
