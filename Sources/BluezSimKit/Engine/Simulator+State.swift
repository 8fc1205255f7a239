/// Known devices across restarts (`--state-dir`), like bluetoothd's `/var/lib/bluetooth`.
extension Simulator {
    /// Writes the known (non-temporary) devices to the state store when they changed.
    func persistKnownDevices() {
        guard let store = options.stateStore else { return }
        var list: [KnownDevice] = []
        for path in deviceOrder {
            guard let d = devices[path], !d.temporary else { continue }
            let adapter = String(d.adapterPath.split(separator: "/").last ?? "")
            var known = KnownDevice(adapter: adapter, address: d.spec.address, paired: d.paired,
                                    servicesResolved: d.servicesKnown)
            known.authenticated = d.paired && d.bondAuthenticated
            list.append(known)
        }
        guard list != savedKnownDevices else { return }
        store.save(list)
        savedKnownDevices = list
    }
}
