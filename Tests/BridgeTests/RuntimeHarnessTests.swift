import BridgeBase
import BlueZ
import Synchronization
import Testing

@testable import Bridge

/// The harness's promise: ``RuntimeHarness/advance(_:sourceLocation:)`` and
/// ``RuntimeHarness/eventually(_:step:sourceLocation:_:)`` return only when the runtime is idle,
/// so a check right after them sees all the runtime does by then (and a "nothing happened" check
/// is sound).
@Suite struct RuntimeHarnessTests {
    /// A loop built as the runtime's are (a mailbox with a deadline on the fake clock, BlueZ calls
    /// in child tasks completing into the mailbox), whose work at its deadline takes long in real
    /// time: a chain of nested child tasks, a `FakeCentral` call, and some 20 ms of CPU.
    /// The harness of before (1 ms of real time per 100 ms step) returned long before it was done.
    @Test("advance returns only after the work a deadline released ran: nested child tasks, a BlueZ call, its completion")
    func advanceWaitsForChildTasks() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base)
        let path = h.central.addDevice("C8:12:34:56:78:9A", name: "Strap", services: ["180f": [("2a19", ["read"], [90])]])
        let battery = h.central.characteristicPath(device: path, "2a19")
        let inbox = Mailbox<[UInt8]>()
        let received = Recorded()
        let clock = h.clock, central = h.central
        let due = clock.now.advanced(by: .milliseconds(700))
        try await h.run {
            let loop = Task(executorPreference: h.executor) {
                var deadline: BridgeInstant? = due
                await withDiscardingTaskGroup { group in
                    while true {
                        switch await inbox.receive(until: deadline, clock: clock) {
                        case .deadline:
                            deadline = nil
                            // The loop parks at once; its child has not even started.
                            group.addTask {
                                let value = await Self.relay(depth: 200) {
                                    let value = (try? await central.readValue(characteristic: battery, timeout: .seconds(5))) ?? []
                                    return value + [Self.work()]
                                }
                                inbox.send(value)
                            }
                        case .input(let value):
                            received.append(value)
                        case .finished:
                            return
                        }
                    }
                }
            }
            try await h.advance(.milliseconds(600))
            #expect(received.values.isEmpty, "not before the deadline")
            #expect(inbox.isReceiverParked, "the loop waits in its mailbox")
            try await h.advance(.milliseconds(400))
            #expect(received.values == [[90, 1]], "the read's value, handled by the loop")
            #expect(h.central.calls("ReadValue").map(\.at) == [due], "read at the deadline")
            #expect(inbox.isReceiverParked, "parked again")
            inbox.finish()
            await loop.value
        }
    }

    /// Runs `body` `depth` child tasks deep, yielding at each level.
    static func relay(depth: Int, _ body: @escaping @Sendable () async -> [UInt8]) async -> [UInt8] {
        guard depth > 0 else { return await body() }
        await Task.yield()
        return await withTaskGroup(of: [UInt8].self) { group in
            group.addTask { await relay(depth: depth - 1, body) }
            return await group.next() ?? []
        }
    }

    /// Some 20 ms of CPU (more on a loaded machine): returns 1.
    static func work() -> UInt8 {
        var x: UInt64 = 1
        for i in 0..<20_000_000 { x = x &* 6364136223846793005 &+ UInt64(i) }
        return x == 0 ? 0 : 1
    }

    @Test("runtime work that runs off the harness's executor is a failure: the idle check cannot see it")
    func escapesAreReported() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base)
        // The test's own task is not the runtime's: its BlueZ call and sleep stand in for a
        // `Task {}` or an actor in the runtime.
        await withKnownIssue("a FakeClock sleep off the executor") {
            try await h.clock.sleep(until: h.clock.now)
            try await h.settle()
        }
        await withKnownIssue("a FakeCentral call off the executor") {
            _ = try? await h.central.readValue(characteristic: "/org/bluez/hci0/dev_X/char1", timeout: nil)
            try await h.settle()
        }
        #expect(h.executor.escapes.count == 2)
    }

    @Test("at every settle the runtime's loops are all parked: an always, a poll and an advertisement device")
    func everyLoopParked() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            health: { interval: 7s }
            devices:
              - match: { address: "C8:12:34:56:78:9A" }
                name: strap
              - match: { address: "E4:5F:01:AB:CD:EF" }
                name: thermo
                connection: poll
                poll_interval: 10s
              - match: { address: "A4:C1:38:00:00:05" }
                name: adv
                connection: advertisement
            """)
        h.central.acquireSupported = true
        h.central.addDevice("C8:12:34:56:78:9A", name: "Strap", services: ["180d": [("2a37", ["notify"], [])]])
        h.central.addDevice("E4:5F:01:AB:CD:EF", name: "Thermo", services: ["181a": [("2a6e", ["read"], [1, 2])]])
        h.central.addDevice("A4:C1:38:00:00:05", name: "ATC", services: [:])
        try await h.run {
            try await h.eventually("the sessions") { h.runtime.context.registry.all.count == 3 }
            var checks = 0
            try await h.eventually("the strap online, the thermometer's second cycle", step: .milliseconds(250)) {
                let loops = h.loops
                #expect(loops.total == 4 && loops.parked == loops.total, "\(loops) at \(h.clock.now)")
                checks += 1
                return h.broker.last("ble/strap/availability") == "online" && h.central.calls("Connect").count >= 3
            }
            #expect(checks >= 20, "checked across the cycles: \(checks)")
        }
    }

    @Test("stop ends the runtime cleanly: notifications stopped, links closed, everything offline, BlueZ let go")
    func cleanShutdown() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["180d"] }
            devices:
              - match: { address: "A4:C1:38:00:00:05" }
                name: adv
                connection: advertisement
            """)
        h.central.acquireSupported = true
        let strap = h.central.addDevice("C8:12:34:56:78:9A", name: "Strap", services: [
            "180d": [("2a37", ["notify"], [])], "1809": [("2a1c", ["indicate"], [])],
        ])
        let band = h.central.addDevice("C8:12:34:56:78:9B", name: "Band", services: ["180d": [("2a37", ["notify"], [])]])
        let advertiser = h.central.addDevice("A4:C1:38:00:00:05", name: "ATC", services: [:])
        let hr = h.central.characteristicPath(device: strap, "2a37")
        let thermometer = h.central.characteristicPath(device: strap, "2a1c")
        try await h.run {
            try await h.eventually("both online") {
                h.broker.last("ble/c8123456789a/availability") == "online" && h.broker.last("ble/c8123456789b/availability") == "online"
            }
            h.central.advertise(advertiser, serviceData: ["181a": AdvertisementTests.pvvx(counter: 1)])
            try await h.eventually("the advertiser online") { h.broker.last("ble/adv/availability") == "online" }
            #expect(h.central.links == 2 && h.central.acquired.count == 2)
            #expect(!h.central.isStopped)
        }
        #expect(h.hasEnded, "the runtime ended")
        let took = try #require(h.shutdownTook)
        #expect(took < .seconds(3), "every session ended by itself, before the supervisor's bound: \(took)")
        #expect(h.central.links == 0, "every link closed")
        #expect(h.central.calls("Disconnect").map(\.path).sorted() == [strap, band])
        #expect(h.central.acquired.isEmpty, "every notification socket closed")
        #expect(h.central.calls("ReleaseNotify").count == 2)
        #expect(h.central.calls("StopNotify").map(\.path) == [thermometer])
        #expect(h.central.calls("ReleaseNotify").contains { $0.path == hr })
        for device in ["c8123456789a", "c8123456789b", "adv"] {
            #expect(h.broker.last("ble/\(device)/availability") == "offline", "\(device)")
        }
        #expect(h.broker.last("ble/bridge/state") == "offline")
        #expect(h.central.isStopped, "BlueZ's events no longer followed")
        #expect(h.runtime.context.registry.all.isEmpty)
        #expect(h.executor.pending == 0 && h.clock.sleeperCount == 0, "no task left behind")
    }

    @Test("a BlueZ call that never returns holds the shutdown for the supervisor's 3 s bound only")
    func shutdownBound() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["180d"] }
            """)
        let strap = h.central.addDevice("C8:12:34:56:78:9A", name: "Strap", services: ["180d": [("2a37", ["notify"], [])]])
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/c8123456789a/availability") == "online" }
            h.central.hold("Disconnect", strap)
        }
        #expect(h.hasEnded)
        let took = try #require(h.shutdownTook)
        #expect(took >= .seconds(3) && took < .seconds(4), "ended at the bound: \(took)")
        #expect(h.central.heldCount == 0, "the held call was cancelled")
        #expect(h.central.isStopped)
        #expect(h.executor.pending == 0 && h.clock.sleeperCount == 0, "no task left behind")
    }
}

/// Values a loop handled, in order.
private final class Recorded: Sendable {
    private let list = Mutex<[[UInt8]]>([])
    func append(_ value: [UInt8]) { list.withLock { $0.append(value) } }
    var values: [[UInt8]] { list.withLock { $0 } }
}
