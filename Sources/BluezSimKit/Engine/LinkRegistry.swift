#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which peripherals have a link up, shared by every adapter of one simulator and, through a
/// directory (`--link-dir`), by every simulator that uses the same directory: a peripheral takes
/// one link at a time.
///
/// Each peripheral has a lock file `<dir>/dev_AA_BB_CC_DD_EE_FF.lock`; the simulator holding its
/// link holds an exclusive `flock(2)` on it (and writes `<pid> <adapter>` into it for people
/// reading the directory). `flock` locks belong to the open file, so two simulators in one process
/// exclude each other as two processes do, and the kernel drops the lock when the process ends,
/// however it ends: a killed simulator releases its links. The files are never removed (removing
/// a lock file races with another process locking it).
///
/// Without a directory only the simulator's own adapters are excluded from each other.
/// Confined to the ``Simulator`` actor.
final class LinkRegistry {
    /// The shared directory, nil for none.
    let directory: String?
    /// The lock file descriptor of each peripheral this simulator has a link to (-1 without a directory).
    private var held: [String: Int32] = [:]

    init(directory: String?) {
        self.directory = directory
    }

    deinit {
        for fd in held.values where fd >= 0 { close(fd) }
    }

    /// The lock file of the peripheral `address`.
    func lockPath(_ address: String) -> String? {
        directory.map { "\($0)/dev_" + address.uppercased().replacingColons() + ".lock" }
    }

    /// Takes the link of `address` for `holder` (an adapter name): false when this simulator or
    /// another one holds it (or the lock file cannot be opened).
    func acquire(_ address: String, holder: String) -> Bool {
        let key = address.uppercased()
        guard held[key] == nil else { return false }
        guard let path = lockPath(key) else {
            held[key] = -1
            return true
        }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return false
        }
        let text = Array("\(getpid()) \(holder)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        held[key] = fd
        return true
    }

    /// Gives the link of `address` back (no-op when this simulator does not hold it).
    func release(_ address: String) {
        guard let fd = held.removeValue(forKey: address.uppercased()) else { return }
        if fd >= 0 {
            _ = ftruncate(fd, 0)
            close(fd)
        }
    }

    /// Gives every link back (the simulator stops, as its process ending would).
    func releaseAll() {
        for address in Array(held.keys) { release(address) }
    }

    /// This simulator holds the link of `address`.
    func holds(_ address: String) -> Bool {
        held[address.uppercased()] != nil
    }

    /// Some simulator (this one included) holds the link of `address`.
    ///
    /// Probes the lock with a shared `flock`; while the probe holds it (a few microseconds) an
    /// exclusive attempt elsewhere fails, which a connecting simulator absorbs by retrying until its
    /// connect timeout.
    func isLinked(_ address: String) -> Bool {
        if holds(address) { return true }
        guard let path = lockPath(address) else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) == 0 else { return true }
        _ = flock(fd, LOCK_UN)
        return false
    }
}

extension String {
    /// `AA:BB` → `AA_BB`.
    fileprivate func replacingColons() -> String {
        String(map { $0 == ":" ? "_" : $0 })
    }
}
