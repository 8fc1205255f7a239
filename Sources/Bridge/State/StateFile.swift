import BridgeCore
import RuntimeCore
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes the state file (SPEC §5): atomically (temporary file, fsync, rename); a
/// corrupt or unreadable file is reported, moved aside, and the bridge starts without it.
struct StateFile: Sendable {
    let path: String
    /// Names a corrupt file moved aside by its wall time.
    let clock: any BridgeClock
    let logger: Logger

    /// Loads the known peripherals; never throws.
    func load() -> KnownPeripherals {
        guard let bytes = readAll() else { return KnownPeripherals() }
        do {
            let known = try KnownPeripherals.decode(bytes)
            logger.info("state file \(path): \(known.peripherals.count) known peripherals")
            return known
        } catch {
            let aside = path + ".corrupt-\(clock.unixTime)"
            if rename(path, aside) == 0 {
                logger.error("state file \(path) is unusable (\(error)); moved it to \(aside) and starting without it")
            } else {
                logger.error("state file \(path) is unusable (\(error)) and could not be moved aside; starting without it")
            }
            return KnownPeripherals()
        }
    }

    private func readAll() -> [UInt8]? {
        switch readFile(path, limit: 16 << 20) {
        case .success(let bytes):
            return bytes
        case .failure(let error):
            if !error.isMissing { logger.error("cannot read state file \(path): \(error); starting without it") }
            return nil
        }
    }

    /// Writes atomically; logs and returns false on failure.
    @discardableResult
    func save(_ known: KnownPeripherals) -> Bool {
        AtomicFile.makeParentDirectories(of: path)
        if let failure = AtomicFile.write(known.encode(), to: path) {
            logger.error("cannot write state file \(failure)")
            return false
        }
        return true
    }
}
