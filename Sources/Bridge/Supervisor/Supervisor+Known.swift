import BlueZ
import BridgeCore

extension Supervisor {
    static func devicePath(adapter: String, address: String) -> String {
        adapter + "/dev_" + address.uppercased().split(separator: ":").joined(separator: "_")
    }

    /// Connects the peripherals of the state file straight away: the device object BlueZ still
    /// has, else `Adapter1.ConnectDevice` with the stored address type, else the scan finds it.
    /// With `holdingScan`, the scan waits until each first attempt returned, at most
    /// ``DiscoveryState/storedHeadStart``.
    func connectKnownPeripherals(only address: String? = nil, holdingScan: Bool = false, _ group: inout DiscardingTaskGroup) {
        for p in known.all where address == nil || p.address == address {
            guard adapterReady else { return }
            let path = Self.devicePath(adapter: adapterPath, address: p.address)
            if central.withTree({ $0.device(path) }) != nil {
                logger.info("stored peripheral \(p.address): BlueZ still knows it, connecting")
                consider(path, connectNow: true, &group)
                // An advertisement device sends no Connect.
                if holdingScan, let entry = ctx.registry.entry(path: path), entry.policy != "advertisement" {
                    discovery.heldFor.insert(path)
                }
                continue
            }
            logger.info("stored peripheral \(p.address): not in BlueZ's tree, trying ConnectDevice")
            if holdingScan { discovery.heldFor.insert(path) }
            let central = self.central, adapter = adapterPath, logger = self.logger, mailbox = self.mailbox
            group.addTask {
                do throws(BlueZError) {
                    let created = try await central.connectDevice(adapter: adapter, address: p.address, addressType: p.addressType)
                    logger.info("ConnectDevice \(p.address) → \(created)")
                } catch {
                    logger.notice("ConnectDevice \(p.address) failed (\(error)); waiting for the scan to find it")
                }
                mailbox.send(.storedConnectReturned(path: path))
            }
        }
        if !discovery.heldFor.isEmpty {
            discovery.heldUntil = now.advanced(by: DiscoveryState.storedHeadStart)
            logger.debug("the scan waits for the first Connect of \(discovery.heldFor.count) stored peripheral(s)")
        }
    }
}
