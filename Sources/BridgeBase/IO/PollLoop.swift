import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Something that has descriptors to poll on a ``PollLoop``: a D-Bus connection's watches, the
/// MQTT socket, notification sockets. All calls come from the loop's thread.
public protocol PollParticipant: AnyObject, Sendable {
    /// Before each poll: the descriptors to poll (``PollLoop/Turn/watch(_:events:)``) and the
    /// time by which the loop must come back (``PollLoop/Turn/wake(atMs:)``).
    func prepare(_ turn: inout PollLoop.Turn)
    /// After each poll: what happened to the descriptors this participant asked for, in the
    /// order it asked (`revents` 0 for those with nothing), and the time.
    func handle(_ ready: UnsafeBufferPointer<pollfd>, nowMs: Int64)
    /// After every participant handled the turn: flush what the turn produced (one write for
    /// several values).
    func turnEnded()
    /// The participant was removed, or the loop stopped: it is polled no more.
    func detached()
}

extension PollParticipant {
    public func turnEnded() {}
    public func detached() {}
}

/// One I/O thread for everything the bridge reads and writes: it polls the descriptors of its
/// ``PollParticipant``s and a pipe that ``wake()`` signals, lets each participant handle
/// what is ready, runs the closures given to ``execute(_:)``, and ends each turn by letting the
/// participants flush. A notification read from BlueZ is therefore published to the broker in
/// the same turn, with one wake-up.
public final class PollLoop: Sendable {
    /// What one participant asks of a turn.
    public struct Turn {
        var fds: [pollfd] = []
        var deadline: Int64?

        /// Polls `fd` for `events` (`POLLIN`, `POLLOUT`; errors and hang-ups always come).
        public mutating func watch(_ fd: Int32, events: Int16) {
            fds.append(pollfd(fd: fd, events: events, revents: 0))
        }

        /// Comes back by `ms` (monotonic milliseconds, ``PollLoop/nowMs()``) at the latest.
        public mutating func wake(atMs ms: Int64) {
            deadline = min(deadline ?? ms, ms)
        }
    }

    private struct State {
        var participants: [ObjectIdentifier: any PollParticipant] = [:]
        var order: [ObjectIdentifier] = []
        /// Bumped by every add and remove: the loop rebuilds its list of participants only then.
        var version = 0
        var removed: [any PollParticipant] = []
        var jobs: [@Sendable () -> Void] = []
        var running = false
        var stopRequested = false
        /// The thread is past its last turn: jobs run on the caller's thread from now on.
        var closed = false
        var thread: pthread_t?
    }

    private let state = Mutex(State())
    /// The wake pipe: ``wake()`` writes, the loop polls and drains.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    /// Set by ``wake()``, cleared by the loop after it drains the pipe: one write per turn.
    private let wakePending = Atomic<Bool>(false)
    /// The loop's thread while it runs (0 otherwise): ``wake()`` from that thread writes no byte.
    private let loopThread = Atomic<UInt>(0)
    /// ``wake()`` was called on the loop's own thread since this turn took its jobs: the poll
    /// must not block (what the wake was for is seen by the next turn's jobs and `prepare`).
    private let wokeFromLoop = Atomic<Bool>(false)
    /// What the loop is for (logs).
    public let name: String

    /// A loop; ``start()`` runs its thread.
    public init(name: String) {
        self.name = name
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeFD = fds[0]
        wakeWriteFD = fds[1]
    }

    deinit {
        close(wakeFD)
        close(wakeWriteFD)
    }

    /// Monotonic milliseconds.
    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Whether the caller runs on the loop's thread.
    public var isCurrentThread: Bool {
        let thread = loopThread.load(ordering: .acquiring)
        return thread != 0 && pthread_equal(thread, pthread_self()) != 0
    }

    /// Whether the thread runs (started and not stopped).
    public var isRunning: Bool { state.withLock { $0.running } }

    /// Adds a participant (any thread); it is polled from the next turn on.
    /// On a loop that has stopped, the participant is detached at once.
    public func add(_ participant: any PollParticipant) {
        let added = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            let id = ObjectIdentifier(participant)
            if s.participants.updateValue(participant, forKey: id) == nil { s.order.append(id) }
            s.version &+= 1
            return true
        }
        if added { wake() } else { participant.detached() }
    }

    /// Removes a participant (any thread); its ``PollParticipant/detached()`` runs on the loop.
    public func remove(_ participant: any PollParticipant) {
        let removed = state.withLock { s -> Bool in
            let id = ObjectIdentifier(participant)
            guard let p = s.participants.removeValue(forKey: id) else { return false }
            s.order.removeAll { $0 == id }
            s.version &+= 1
            if s.running && !s.closed {
                s.removed.append(p)
                return false
            }
            return true
        }
        if removed { participant.detached() } else { wake() }
    }

    /// Runs `job` on the loop's thread, in order with the other jobs, before the next poll.
    /// After the loop stopped, `job` runs at once on the caller's thread (every participant is
    /// detached by then): a job is never dropped.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        let queued = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            s.jobs.append(job)
            return true
        }
        if queued { wake() } else { job() }
    }

    /// Makes the current or next poll return at once. On the loop's own thread (libdbus asks for
    /// a wake-up after every message it reads, from inside the turn) it only keeps the next poll
    /// from blocking: a byte through the pipe would cost a `write`, a `read` and a second `poll`
    /// for nothing, as the turn is not in a poll.
    public func wake() {
        if isCurrentThread {
            wokeFromLoop.store(true, ordering: .relaxed)
            return
        }
        guard !wakePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)
    }

    /// Writes the wake byte whatever the pending flag says: the watchdog's remedy for a loop
    /// that stopped turning although it was woken.
    public func forceWake() {
        wakePending.store(true, ordering: .sequentiallyConsistent)
        var one: UInt8 = 1
        _ = write(wakeWriteFD, &one, 1)
    }

    /// Starts the thread (once).
    public func start() {
        let started = state.withLock { s -> Bool in
            guard !s.running, s.thread == nil else { return false }
            s.running = true
            return true
        }
        guard started else { return }
        let box = Unmanaged.passRetained(self)
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { raw in
            let loop = Unmanaged<PollLoop>.fromOpaque(raw!).takeRetainedValue()
            loop.run()
            return nil
        }, box.toOpaque())
        if rc == 0 {
            pthread_detach(tid)
        } else {
            box.release()
            state.withLock { $0.running = false }
        }
    }

    /// Stops the thread after its current turn; every participant is detached.
    public func stop() {
        state.withLock { $0.stopRequested = true }
        wake()
    }

    private func run() {
        state.withLock { $0.thread = pthread_self() }
        loopThread.store(pthread_self(), ordering: .releasing)
        var turn = Turn()
        var ranges: [(participant: any PollParticipant, start: Int, count: Int)] = []
        var participants: [any PollParticipant] = []
        var participantsVersion = -1
        var jobs: [@Sendable () -> Void] = []
        var gone: [any PollParticipant] = []
        while true {
            wokeFromLoop.store(false, ordering: .relaxed)
            // A turn with no change to the participants and no job costs one lock and no copy.
            let stop = state.withLock { s -> Bool in
                if s.version != participantsVersion {
                    participantsVersion = s.version
                    participants.removeAll(keepingCapacity: true)
                    for id in s.order { if let p = s.participants[id] { participants.append(p) } }
                }
                if !s.jobs.isEmpty { swap(&jobs, &s.jobs) }
                if !s.removed.isEmpty { swap(&gone, &s.removed) }
                return s.stopRequested
            }
            for p in gone { p.detached() }
            gone.removeAll(keepingCapacity: true)
            // Jobs given before the stop still run (they may close descriptors or complete
            // someone's wait).
            for job in jobs { job() }
            jobs.removeAll(keepingCapacity: true)
            if stop { break }
            turn.fds.removeAll(keepingCapacity: true)
            turn.fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            turn.deadline = nil
            ranges.removeAll(keepingCapacity: true)
            for p in participants {
                let start = turn.fds.count
                p.prepare(&turn)
                ranges.append((p, start, turn.fds.count - start))
            }
            var timeoutMs: Int32 = -1
            if let d = turn.deadline { timeoutMs = Int32(clamping: max(0, d - Self.nowMs())) }
            if wokeFromLoop.load(ordering: .relaxed) { timeoutMs = 0 }
            let n = turn.fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeoutMs) }
            if n < 0 && errno != EINTR && errno != EAGAIN {
                // Only a bad descriptor set gets here (EFAULT, EINVAL, ENOMEM). Stop the way
                // stop() does, so that every participant hears of it (D-Bus fails its calls).
                var line = Array("\(name): poll failed (errno \(errno)): the I/O loop stops\n".utf8)
                _ = write(2, &line, line.count)
                break
            }
            if turn.fds[0].revents != 0 {
                // Drain first, then clear: a wake() between the two finds the flag still set and
                // writes nothing, and its change is seen by the next turn, which always runs. The
                // other order lost wake-ups for good (a byte written after the clear was drained,
                // the flag stayed set, and every later wake() was skipped).
                var drain: (UInt64, UInt64) = (0, 0)
                _ = withUnsafeMutableBytes(of: &drain) { read(wakeFD, $0.baseAddress, $0.count) }
                wakePending.store(false, ordering: .sequentiallyConsistent)
            }
            let now = Self.nowMs()
            turn.fds.withUnsafeBufferPointer { all in
                for r in ranges {
                    r.participant.handle(UnsafeBufferPointer(rebasing: all[r.start..<(r.start + r.count)]), nowMs: now)
                }
            }
            for p in participants { p.turnEnded() }
        }
        // Jobs given since the last turn still run; from here on execute() runs jobs itself.
        let (rest, lastJobs) = state.withLock { s -> ([any PollParticipant], [@Sendable () -> Void]) in
            let all = s.order.compactMap { s.participants[$0] } + s.removed
            s.participants.removeAll()
            s.order.removeAll()
            s.removed.removeAll()
            s.closed = true
            defer { s.jobs.removeAll() }
            return (all, s.jobs)
        }
        for job in lastJobs { job() }
        for p in rest { p.detached() }
        loopThread.store(0, ordering: .releasing)
        state.withLock { s in
            s.running = false
            s.thread = nil
        }
    }
}
