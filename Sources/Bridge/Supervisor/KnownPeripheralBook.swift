import BridgeCore
import RuntimeCore
import Logging

/// The peripherals the bridge has connected to (SPEC §5), with the state file behind them.
struct KnownPeripheralBook {
    var stateFile: StateFile?
    private(set) var peripherals = KnownPeripherals()
    private(set) var addresses: Set<String> = []
    /// Characteristic UUIDs whose reads need pairing, by address.
    private var unreadableByAddress: [String: Set<String>] = [:]
    /// Stored peripherals whose first value after start is still awaited (for the log line).
    private var awaitingFirstValue: Set<String> = []

    mutating func load() {
        guard let stateFile else { return }
        peripherals = stateFile.load()
        addresses = Set(peripherals.peripherals.map(\.address))
        awaitingFirstValue = addresses
        for p in peripherals.peripherals where !p.unreadable.isEmpty {
            unreadableByAddress[p.address] = Set(p.unreadable)
        }
    }

    var all: [KnownPeripheral] { peripherals.peripherals }

    func contains(_ address: String) -> Bool { addresses.contains(address) }

    func unreadable(address: String) -> Set<String> { unreadableByAddress[address] ?? [] }

    mutating func markUnreadable(address: String, uuid: String) {
        unreadableByAddress[address, default: []].insert(uuid)
    }

    /// Records a peripheral after a successful setup.
    mutating func remember(
        address: String, addressType: String, _ mapped: MappedDevice, startedAt: BridgeInstant, now: BridgeInstant,
        logger: Logger
    ) {
        if awaitingFirstValue.remove(address) != nil {
            let elapsed = startedAt.duration(to: now).components
            let ms = elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
            logger.notice("stored peripheral \(address) publishing \(ms) ms after start")
        }
        guard let stateFile else { return }
        let record = KnownPeripheral(
            address: address, addressType: addressType, name: mapped.name, services: mapped.services,
            characteristics: mapped.characteristics, unreadable: unreadable(address: address).sorted())
        addresses.insert(address)
        if peripherals.upsert(record) { stateFile.save(peripherals) }
    }

    /// Forgets a peripheral; false when it was not known.
    @discardableResult
    mutating func forget(_ address: String) -> Bool {
        unreadableByAddress[address] = nil
        addresses.remove(address)
        guard peripherals.remove(address: address) else { return false }
        stateFile?.save(peripherals)
        return true
    }
}
