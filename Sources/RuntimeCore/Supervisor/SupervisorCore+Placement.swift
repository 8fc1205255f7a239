import BridgeCore

/// Several adapters in one bridge (SPEC §10): which adapters are in use, where a device's session goes
/// (``AdapterPlacement``), when it moves, and what happens when an adapter goes down.
///
/// A device (address) has one session at a time, at its device object on one adapter
/// (`/org/bluez/hciN/dev_…`): BlueZ has one object per adapter that heard it. The adapter is chosen when the
/// session starts: the one that hears it best with a free slot. It moves only when its adapter goes down (the
/// session ends, and the next one starts through another adapter) or, while connected, when another adapter
/// hears it stronger by `cluster.switch_margin` for `cluster.switch_after`: then the session is stopped (it
/// disconnects) and the next one starts on the other adapter only after it ended. Never two links.
///
/// With one adapter (the default) every decision names it: nothing here changes what the bridge does.
extension SupervisorCore {
    // MARK: Adapters in use

    /// More than one adapter may be in use (`bluetooth.adapters` with several names, or `all`).
    package var severalAdapters: Bool {
        if case .named(let names) = config.bluetooth.adapterSelection { return names.count > 1 }
        return true
    }

    /// Whether the configuration uses this adapter.
    package func uses(_ name: String) -> Bool {
        switch config.bluetooth.adapterSelection {
        case .named(let names): names.contains(name)
        case .all: true
        }
    }

    /// The adapters in use: the names configured, or (`all`) every adapter in the tree.
    package func adaptersInUse(_ tree: Tree) -> [String] {
        switch config.bluetooth.adapterSelection {
        case .named(let names): names
        case .all: tree.adapters.keys.sorted()
        }
    }

    /// The adapters configured or seen so far, in order (where a device's objects may be).
    package var knownAdapters: [String] {
        var names: [String] = []
        if case .named(let configured) = config.bluetooth.adapterSelection { names = configured }
        for name in radios.keys.sorted() where !names.contains(name) { names.append(name) }
        return names
    }

    package func isReady(_ name: String) -> Bool { radios[name]?.ready == true }

    /// The adapters present and powered, in order.
    package var readyAdapters: [String] { knownAdapters.filter(isReady) }

    /// Whether any adapter in use is ready (`health_check`'s `adapter`).
    package var anyAdapterReady: Bool { radios.values.contains(where: \.ready) }

    /// The objects of `address` on the ready adapters, in adapter order.
    package func objects(of address: String, tree: Tree) -> [DeviceSnapshot] {
        readyAdapters.compactMap { tree.devices[BlueZNames.devicePath(adapterName: $0, address: address)] }
    }

    /// Free slots per ready adapter.
    package func freeSlots(_ tree: Tree) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: readyAdapters.map { ($0, tree.freeSlots[$0] ?? config.bluetooth.maxConnections) })
    }

    /// The adapter a stored peripheral BlueZ has no object of is connected through (`ConnectDevice`): the
    /// ready one with the most free slots (ties: the first).
    package func storedAdapter(_ tree: Tree) -> String? {
        let free = freeSlots(tree)
        var best: String?
        for name in readyAdapters where best.map({ (free[name] ?? 0) > (free[$0] ?? 0) }) ?? true { best = name }
        return best
    }

    // MARK: Placement

    /// How long a device heard by some of the ready adapters only waits for the others to hear it before it
    /// is placed (an advertising interval or two), so that the first adapter to hear it does not win by its
    /// timing alone. Stored peripherals connected at start do not wait.
    package static var placementWindow: Duration { .seconds(2) }

    /// The object of `seen`'s address the session goes to: with one candidate, that one; else a move
    /// decided before, else ``AdapterPlacement``'s choice (the best heard with a free slot; when none has one,
    /// the best heard, where the session waits for a slot). Nil while a `ConnectDevice` of the peripheral
    /// through an adapter that has no object yet is under way, and during its ``placementWindow``.
    package mutating func place(
        _ seen: DeviceSnapshot, connectNow: Bool, now: Instant, tree: Tree, _ out: inout [Action]
    ) -> DeviceSnapshot? {
        let address = seen.address.description
        let candidates = objects(of: address, tree: tree)
        if let connecting = connectingStored[address] {
            return candidates.first { $0.path == connecting }
        }
        if severalAdapters && candidates.count < readyAdapters.count && !connectNow && !placeOpen.contains(address) {
            if placingAt[address] == nil {
                placingAt[address] = now.advanced(by: Self.placementWindow)
                out.append(.log(.debug, "\(address): heard by \(candidates.count) of \(readyAdapters.count) adapters; placing it in \(Self.placementWindow)"))
            }
            return nil
        }
        let on = { (dev: DeviceSnapshot) in BlueZNames.adapterName(of: dev.path) }
        let target = pendingMoves.removeValue(forKey: address)
        guard candidates.count > 1 else { return seen }
        if let target, let dev = candidates.first(where: { on($0) == target }) { return dev }
        hear(address, candidates, now: now)
        let chosen: String?
        switch placement.decide(address, freeSlots: freeSlots(tree), now: now) {
        case .connect(let adapter), .stay(let adapter), .move(_, let adapter): chosen = adapter
        case .wait: chosen = nil
        }
        let heard = candidates.map { "\(on($0)) \($0.rssi.map(String.init) ?? "?")" }.joined(separator: ", ")
        if let chosen, let dev = candidates.first(where: { on($0) == chosen }) {
            out.append(.log(.info, "\(address): through \(chosen) (heard: \(heard))"))
            return dev
        }
        // 127 is BlueZ's "no valid RSSI" (btvirt reports nothing else): not the strongest.
        let valid = { (dev: DeviceSnapshot) in dev.rssi.flatMap { $0 == 127 ? nil : $0 } ?? Int.min }
        let free = freeSlots(tree)
        if candidates.allSatisfy({ valid($0) == Int.min }) {
            // No adapter reports a strength: the one with the most free slots (ties: the first).
            var pick = candidates[0]
            for dev in candidates.dropFirst() where (free[on(dev)] ?? 0) > (free[on(pick)] ?? 0) { pick = dev }
            out.append(.log(.info, "\(address): no adapter reports a valid RSSI (heard: \(heard)); through \(on(pick)), the one with the most free slots"))
            return pick
        }
        let best = candidates.max { valid($0) < valid($1) } ?? seen
        out.append(.log(.info, "\(address): no adapter that hears it has a free slot (heard: \(heard)); waiting on \(on(best))"))
        return best
    }

    /// Records what the adapters' objects of `address` say of its RSSI.
    private mutating func hear(_ address: String, _ objects: [DeviceSnapshot], now: Instant) {
        for dev in objects {
            if let rssi = dev.rssi { placement.heard(address, on: BlueZNames.adapterName(of: dev.path), rssi: rssi, now: now) }
        }
    }

    /// A connected device heard again: when another adapter has heard it stronger by the switch rule's margin
    /// for its time and has a free slot, its session is stopped (it disconnects) and the next one starts
    /// there once it ended.
    package mutating func review(_ address: String, now: Instant, tree: Tree, _ out: inout [Action]) {
        guard severalAdapters, !stopping, let path = sessionOf[address], pendingMoves[address] == nil,
              devices[path]?.connected == true
        else { return }
        hear(address, objects(of: address, tree: tree), now: now)
        guard case .move(let from, let to) = placement.decide(address, freeSlots: freeSlots(tree), now: now) else { return }
        let rule = placement.rule
        out.append(.log(
            .notice,
            "\(address) is heard better by \(to) (by \(rule.margin) dB for \(rule.after)): moving it from \(from), disconnecting first"))
        pendingMoves[address] = to
        out.append(.send(path: path, .stop))
    }

    // MARK: Adapters going down, sessions ending

    /// An adapter was removed or powered off: when another adapter is up, the sessions on it are stopped and
    /// their devices come back through the others (``reconsider(_:now:tree:_:)``); with no other adapter they
    /// wait for it, as with one adapter.
    package mutating func adapterDown(_ name: String, _ out: inout [Action]) {
        adapterLost(name)
        guard !readyAdapters.isEmpty else { return }
        let moving = sessions.filter { BlueZNames.adapterName(of: $0) == name }.sorted()
        guard !moving.isEmpty else { return }
        out.append(.log(.notice, "adapter \(name) is down: \(moving.count) device(s) move to \(readyAdapters.joined(separator: ", "))"))
        for path in moving {
            pendingMoves[BlueZNames.address(fromDevicePath: path)] = nil
            out.append(.send(path: path, .stop))
        }
    }

    /// A session of `path` ended: its address gets a session again where it is (the object may be back
    /// already), or through another adapter (a move, or its adapter went down); with several adapters, a
    /// stored peripheral no adapter has an object of is connected again.
    package mutating func reconsider(_ path: String, now: Instant, tree: Tree, _ out: inout [Action]) {
        guard severalAdapters else {
            consider(path, now: now, tree: tree, &out)
            return
        }
        let address = BlueZNames.address(fromDevicePath: path)
        guard sessionOf[address] == nil, !stopping else { return }
        if let first = objects(of: address, tree: tree).first {
            consider(first.path, now: now, tree: tree, &out)
        } else if isStored(address) {
            pendingMoves[address] = nil
            connectStored(only: address, now: now, tree: tree, &out)
        }
    }
}
