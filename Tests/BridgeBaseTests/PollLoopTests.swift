import BridgeBase
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A participant reading one pipe, recording what the loop asked of it.
private final class PipeReader: PollParticipant, @unchecked Sendable {
    struct Record {
        var reads: [UInt8] = []
        var handledWithData = 0
        var turnsEndedAfterData = 0
        var onLoopThread = true
        var detached = 0
        var deadlineHits = 0
    }
    let fd: Int32
    let record = Mutex(Record())
    let loop: PollLoop
    /// A time the loop must come back by, whatever the pipe does.
    let deadline = Atomic<Int64>(0)
    private var sawData = false

    init(fd: Int32, loop: PollLoop) {
        self.fd = fd
        self.loop = loop
    }

    func prepare(_ turn: inout PollLoop.Turn) {
        turn.watch(fd, events: Int16(POLLIN))
        let d = deadline.load(ordering: .acquiring)
        if d > 0 { turn.wake(atMs: d) }
    }

    func handle(_ ready: UnsafeBufferPointer<pollfd>, nowMs: Int64) {
        let onLoop = loop.isCurrentThread
        let d = deadline.load(ordering: .acquiring)
        if d > 0 && nowMs >= d {
            deadline.store(0, ordering: .releasing)
            record.withLock { $0.deadlineHits += 1 }
        }
        guard ready.count == 1, ready[0].revents & Int16(POLLIN) != 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &buffer, 64)
        sawData = n > 0
        record.withLock { r in
            r.onLoopThread = r.onLoopThread && onLoop
            if n > 0 {
                r.reads += buffer[0..<n]
                r.handledWithData += 1
            }
        }
    }

    func turnEnded() {
        if sawData { record.withLock { $0.turnsEndedAfterData += 1 } }
        sawData = false
    }

    func detached() { record.withLock { $0.detached += 1 } }
}

@Suite struct PollLoopTests {
    static func pipePair() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        return (fds[0], fds[1])
    }

    /// Polls `condition` every 2 ms for up to 20 s (a deadline, not a count of sleeps: on a loaded
    /// machine a 2 ms sleep can take far longer).
    static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(2))
        }
        if condition() { return }
        Issue.record("timed out waiting for \(what)")
    }

    @Test("a readable descriptor is handled on the loop's thread, then the turn ends")
    func readable() async throws {
        let loop = PollLoop(name: "test-io")
        let (r, w) = Self.pipePair()
        defer { close(r); close(w) }
        let reader = PipeReader(fd: r, loop: loop)
        loop.add(reader)
        loop.start()
        defer { loop.stop() }
        var bytes: [UInt8] = [1, 2, 3]
        _ = write(w, &bytes, 3)
        try await Self.waitUntil("the bytes") { reader.record.withLock { $0.reads.count == 3 } }
        try await Self.waitUntil("the turn's end") { reader.record.withLock { $0.turnsEndedAfterData >= 1 } }
        let rec = reader.record.withLock { $0 }
        #expect(rec.reads == [1, 2, 3])
        #expect(rec.onLoopThread)
        #expect(!loop.isCurrentThread)
    }

    @Test("execute runs jobs on the loop's thread in order; a deadline wakes the loop without I/O")
    func jobsAndDeadlines() async throws {
        let loop = PollLoop(name: "test-io")
        let (r, w) = Self.pipePair()
        defer { close(r); close(w) }
        let reader = PipeReader(fd: r, loop: loop)
        loop.add(reader)
        loop.start()
        defer { loop.stop() }
        let order = Mutex<[Int]>([])
        let onLoop = Mutex(true)
        for i in 0..<100 {
            loop.execute {
                order.withLock { $0.append(i) }
                onLoop.withLock { $0 = $0 && loop.isCurrentThread }
            }
        }
        try await Self.waitUntil("100 jobs") { order.withLock { $0.count == 100 } }
        #expect(order.withLock { $0 } == Array(0..<100))
        #expect(onLoop.withLock { $0 })
        let start = PollLoop.nowMs()
        reader.deadline.store(start + 50, ordering: .releasing)
        loop.wake()
        try await Self.waitUntil("the deadline") { reader.record.withLock { $0.deadlineHits == 1 } }
        #expect(PollLoop.nowMs() - start >= 50)
    }

    @Test("remove detaches one participant and the loop goes on; stop detaches the rest")
    func removeAndStop() async throws {
        let loop = PollLoop(name: "test-io")
        let (r1, w1) = Self.pipePair()
        let (r2, w2) = Self.pipePair()
        defer { close(r1); close(w1); close(r2); close(w2) }
        let a = PipeReader(fd: r1, loop: loop)
        let b = PipeReader(fd: r2, loop: loop)
        loop.add(a)
        loop.add(b)
        loop.start()
        loop.remove(a)
        try await Self.waitUntil("a detached") { a.record.withLock { $0.detached == 1 } }
        var byte: UInt8 = 7
        _ = write(w1, &byte, 1)
        _ = write(w2, &byte, 1)
        try await Self.waitUntil("b read") { b.record.withLock { $0.reads == [7] } }
        #expect(a.record.withLock { $0.reads.isEmpty }, "a removed participant is not polled")
        loop.stop()
        try await Self.waitUntil("the loop stopped") { !loop.isRunning }
        #expect(b.record.withLock { $0.detached } == 1)
        #expect(a.record.withLock { $0.detached } == 1, "detached once")
    }

    @Test("jobs given with the stop, or after it, still run; a participant added after it is detached")
    func noJobDroppedAtStop() async throws {
        let loop = PollLoop(name: "test-io")
        loop.start()
        let ran = Mutex<[String]>([])
        // From a job on the loop's thread, so that both land before the loop's next turn:
        // the job given together with the stop must still run.
        loop.execute {
            loop.execute { ran.withLock { $0.append("with the stop") } }
            loop.stop()
        }
        try await Self.waitUntil("the loop stopped") { !loop.isRunning }
        #expect(ran.withLock { $0 } == ["with the stop"])
        // After the stop: at once, on this thread.
        loop.execute { ran.withLock { $0.append("after the stop") } }
        #expect(ran.withLock { $0 } == ["with the stop", "after the stop"])
        let (r, w) = Self.pipePair()
        defer { close(r); close(w) }
        let late = PipeReader(fd: r, loop: loop)
        loop.add(late)
        #expect(late.record.withLock { $0.detached } == 1)
    }

    @Test("wake-ups from other threads are never lost: every job runs, however the wakes interleave with the loop's drain")
    func noLostWakeUps() async throws {
        // The CI run of a71f88f stalled the bridge's loop at start: a wake() that came between
        // the loop clearing its pending flag and draining the pipe left the flag set with the pipe
        // empty, and every later wake() was skipped. Three threads hammer execute() with no
        // participant to wake the loop otherwise; all jobs must run.
        let loop = PollLoop(name: "test-io")
        loop.start()
        defer { loop.stop() }
        let ran = Atomic<Int>(0)
        let threads = 3
        let perThread = 40_000
        var ids: [pthread_t] = []
        for _ in 0..<threads {
            let body: @Sendable () -> Void = {
                for i in 0..<perThread {
                    loop.execute { ran.add(1, ordering: .relaxed) }
                    if i % 64 == 0 { sched_yield() }
                }
            }
            let box = Unmanaged.passRetained(Box(body))
            var tid = pthread_t()
            let rc = pthread_create(&tid, nil, { raw in
                Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
                return nil
            }, box.toOpaque())
            #expect(rc == 0)
            ids.append(tid)
        }
        for tid in ids { pthread_join(tid, nil) }
        try await Self.waitUntil("\(threads * perThread) jobs") { ran.load(ordering: .relaxed) == threads * perThread }
        #expect(ran.load(ordering: .relaxed) == threads * perThread)
    }
}

/// A closure for a pthread.
private final class Box: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
