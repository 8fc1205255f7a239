import BridgeCore

#if canImport(Glibc)
import Glibc
#endif

/// What commands need to know about devices, shared between the engine (which writes it) and
/// the command dispatcher (which reads it): topic segments → object paths, flags and formats,
/// and whether each device is ready, with waiters for a device to become ready.
final class DeviceDirectory: @unchecked Sendable {
    struct Characteristic: Sendable {
        var path: String
        var flags: Set<String>
        var format: ValueFormat
        /// The configured `write_types`, which replace the Flags for writes.
        var writeTypes: Set<WriteType>?
    }

    struct Key: Hashable {
        var service: String
        var characteristic: String
    }

    struct Device {
        var path: String
        var ready = false
        var characteristics: [Key: Characteristic] = [:]
    }

    private var mutex = pthread_mutex_t()
    private var devices: [String: Device] = [:]
    private var waiters: [String: [Int: CheckedContinuation<Bool, Never>]] = [:]
    private var nextWaiter = 0

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    private func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }

    /// Registers a device (kept across disconnects: BlueZ keeps its GATT cache too).
    func addDevice(segment: String, path: String) {
        locked {
            if devices[segment] == nil { devices[segment] = Device(path: path) }
        }
    }

    func forget(segment: String) {
        locked { devices[segment] = nil }
    }

    func setCharacteristics(segment: String, _ list: [Key: Characteristic]) {
        locked { devices[segment]?.characteristics = list }
    }

    /// Adds to (or replaces entries of) a device's characteristics.
    func addCharacteristics(segment: String, _ list: [Key: Characteristic]) {
        locked { devices[segment]?.characteristics.merge(list) { $1 } }
    }

    /// A device's characteristics.
    func characteristics(segment: String) -> [Key: Characteristic] {
        locked { devices[segment]?.characteristics ?? [:] }
    }

    func knows(segment: String) -> Bool {
        locked { devices[segment] != nil }
    }

    func isReady(segment: String) -> Bool {
        locked { devices[segment]?.ready ?? false }
    }

    func characteristic(segment: String, service: String, characteristic: String) -> Characteristic? {
        locked { devices[segment]?.characteristics[Key(service: service, characteristic: characteristic)] }
    }

    /// Marks a device ready or not; readiness wakes every waiter.
    func setReady(segment: String, _ ready: Bool) {
        let woken: [CheckedContinuation<Bool, Never>] = locked {
            devices[segment]?.ready = ready
            guard ready, let w = waiters.removeValue(forKey: segment) else { return [] }
            return Array(w.values)
        }
        for c in woken { c.resume(returning: true) }
    }

    /// Waits until the device is ready or `deadline` passes; true when ready.
    func waitReady(segment: String, until deadline: ContinuousClock.Instant) async -> Bool {
        if isReady(segment: segment) { return true }
        let id: Int = locked {
            nextWaiter += 1
            return nextWaiter
        }
        let timer = Task {
            try? await Task.sleep(until: deadline)
            self.expire(segment: segment, id: id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let readyNow: Bool = locked {
                if devices[segment]?.ready == true { return true }
                waiters[segment, default: [:]][id] = c
                return false
            }
            if readyNow { c.resume(returning: true) }
        }
    }

    private func expire(segment: String, id: Int) {
        let c: CheckedContinuation<Bool, Never>? = locked { waiters[segment]?.removeValue(forKey: id) }
        c?.resume(returning: false)
    }
}
