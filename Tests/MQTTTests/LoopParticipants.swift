import BridgeBase
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A pipe on a ``PollLoop``: ``signal()`` writes a byte (any thread); the loop thread reads it and
/// calls `onReadable`, as the bridge's notification sockets do.
final class PipeParticipant: PollParticipant {
    let readFD: Int32
    let writeFD: Int32
    let onReadable: @Sendable () -> Void

    init(onReadable: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readFD = fds[0]
        writeFD = fds[1]
        self.onReadable = onReadable
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Makes the pipe readable.
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    func prepare(_ turn: inout PollLoop.Turn) {
        turn.watch(readFD, events: Int16(POLLIN))
    }

    func handle(_ ready: UnsafeBufferPointer<pollfd>, nowMs: Int64) {
        guard let entry = ready.first, entry.revents & Int16(POLLIN) != 0 else { return }
        var buffer = (UInt64(0), UInt64(0))
        let count = withUnsafeMutableBytes(of: &buffer) { read(readFD, $0.baseAddress, $0.count) }
        for _ in 0..<max(0, count) { onReadable() }
    }
}

/// Counts a loop's turns and, at the end of each, evaluates `probe` (it runs after the
/// participants added before it have ended their turn). Tests await turns with ``waitUntil(ended:)``.
///
/// Add it before the participants whose turns it numbers: a turn takes the participants added so
/// far, and `add` wakes the loop, so one added later could be in a turn without the counter.
/// Its own first turn may wait for the loop's next event (it polls nothing): do not await it on a
/// loop where nothing else happens.
final class TurnCounter: PollParticipant {
    private struct State {
        var started = 0
        var ended = 0
        var probes: [Int: Bool] = [:]
        var threadID: Int32 = 0
        var waiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())
    private let probe: @Sendable () -> Bool

    init(probe: @escaping @Sendable () -> Bool = { true }) {
        self.probe = probe
    }

    /// The number of the turn in progress (1-based; the loop thread's view).
    var currentTurn: Int { state.withLock { $0.started } }
    /// Turns ended so far.
    var endedTurns: Int { state.withLock { $0.ended } }
    /// The loop thread's kernel id (after its first turn).
    var loopThreadID: Int32 { state.withLock { $0.threadID } }

    /// What `probe` returned at the end of turn `turn`.
    func probe(ofTurn turn: Int) -> Bool? { state.withLock { $0.probes[turn] } }

    func prepare(_ turn: inout PollLoop.Turn) {
        let tid = state.withLock { $0.threadID } != 0 ? state.withLock { $0.threadID } : Self.currentThreadID()
        state.withLock { s in
            s.started += 1
            s.threadID = tid
        }
    }

    func handle(_ ready: UnsafeBufferPointer<pollfd>, nowMs: Int64) {}

    func turnEnded() {
        let value = probe()
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.ended += 1
            s.probes[s.started] = value
            let ended = s.ended
            let ready = s.waiters.filter { $0.0 <= ended }.map(\.1)
            s.waiters.removeAll { $0.0 <= ended }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once `ended` turns have ended.
    func waitUntil(ended: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.ended >= ended { return true }
                s.waiters.append((ended, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The calling thread's kernel id (`/proc/thread-self` links to `<pid>/task/<tid>`).
    private static func currentThreadID() -> Int32 {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard length > 0 else { return 0 }
        let path = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Int32(path.split(separator: "/").last ?? "") ?? 0
    }

    /// The loop thread's voluntary context switches so far (each time it blocked and was woken).
    func voluntaryContextSwitches() -> Int {
        let tid = loopThreadID
        guard tid != 0, let text = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8)
        else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
            return Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? -1
        }
        return -1
    }
}
