#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Drives periodic notifications of every notifying characteristic from one thread.
///
/// Entries sit in a min-heap ordered by deadline; the thread sleeps on a monotonic condition
/// variable until the earliest deadline, emits every entry that is due (within a small slack,
/// so bursts of nearby deadlines cost one wake-up), and re-arms each at `deadline + interval`.
/// Stopping a characteristic does not touch the heap: its entry is dropped when it next comes
/// due (``SimCharacteristic/nextNotification(token:)`` returns nil for a stale token).
/// This sustains tens of thousands of notifications per second without a task per notification.
final class NotificationScheduler: @unchecked Sendable {
    private struct Entry {
        var deadline: UInt64
        var interval: UInt64
        var token: UInt64
        var characteristic: SimCharacteristic
    }

    /// Delivers one value: to the acquired socket when one is given, else as a signal.
    typealias Emit = @Sendable (SimCharacteristic, [UInt8], NotifySocket?) -> Void

    private let emit: Emit
    // The one place without Synchronization.Mutex: a timed condition-variable wait needs the
    // pthread mutex it is paired with.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var heap: [Entry] = []
    private var stopped = false
    private var thread: pthread_t?
    /// Entries due within this many nanoseconds of now are emitted in the same wake-up.
    private let slack: UInt64 = 200_000

    init(emit: @escaping Emit) {
        self.emit = emit
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Starts the scheduler thread.
    func start() {
        let unmanaged = Unmanaged.passRetained(self)
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { arg in
            let scheduler = Unmanaged<NotificationScheduler>.fromOpaque(arg!).takeRetainedValue()
            scheduler.run()
            return nil
        }, unmanaged.toOpaque())
        if rc == 0 {
            thread = tid
        } else {
            unmanaged.release()
        }
    }

    /// Stops the thread (pending entries are discarded).
    func stop() {
        pthread_mutex_lock(mutex)
        stopped = true
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
        if let t = thread {
            pthread_join(t, nil)
            thread = nil
        }
    }

    /// Schedules notifications of `c` every `interval`, the first one `interval` from now,
    /// for as long as `token` is the characteristic's current token and it is active.
    func schedule(_ c: SimCharacteristic, token: UInt64, interval: Duration) {
        let ns = max(DurationText.nanoseconds(interval), 1_000)
        pthread_mutex_lock(mutex)
        push(Entry(deadline: Self.now() &+ ns, interval: ns, token: token, characteristic: c))
        pthread_cond_signal(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Monotonic nanoseconds.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    // MARK: - Thread

    private func run() {
        var due: [Entry] = []
        due.reserveCapacity(256)
        pthread_mutex_lock(mutex)
        while !stopped {
            let now = Self.now()
            due.removeAll(keepingCapacity: true)
            while let top = heap.first, top.deadline <= now &+ slack {
                var e = popTop()
                due.append(e)
                e.deadline &+= e.interval
                // Far behind (overload, or the machine slept): skip the backlog instead of bursting.
                if e.deadline &+ 1_000_000_000 < now { e.deadline = now &+ e.interval }
                push(e)
            }
            if due.isEmpty {
                if let top = heap.first {
                    var ts = timespec(tv_sec: Int(top.deadline / 1_000_000_000), tv_nsec: Int(top.deadline % 1_000_000_000))
                    pthread_cond_timedwait(cond, mutex, &ts)
                } else {
                    pthread_cond_wait(cond, mutex)
                }
                continue
            }
            pthread_mutex_unlock(mutex)
            var stale: [(SimCharacteristic, UInt64)] = []
            for e in due {
                if let next = e.characteristic.nextNotification(token: e.token) {
                    emit(e.characteristic, next.value, next.socket)
                } else {
                    stale.append((e.characteristic, e.token))
                }
            }
            pthread_mutex_lock(mutex)
            if !stale.isEmpty {
                heap.removeAll { e in stale.contains { $0.0 === e.characteristic && $0.1 == e.token } }
                heapify()
            }
        }
        heap.removeAll()
        pthread_mutex_unlock(mutex)
    }

    // MARK: - Heap

    private func push(_ e: Entry) {
        heap.append(e)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            if heap[parent].deadline <= heap[i].deadline { break }
            heap.swapAt(parent, i)
            i = parent
        }
    }

    private func popTop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return top
    }

    private func siftDown(_ start: Int) {
        var i = start
        let n = heap.count
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var m = i
            if l < n && heap[l].deadline < heap[m].deadline { m = l }
            if r < n && heap[r].deadline < heap[m].deadline { m = r }
            if m == i { return }
            heap.swapAt(i, m)
            i = m
        }
    }

    private func heapify() {
        var i = heap.count / 2
        while i > 0 {
            i -= 1
            siftDown(i)
        }
    }
}
