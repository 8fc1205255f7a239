import BridgeCore
import Testing

@testable import RuntimeCore

/// A device profile's steps (SPEC §15) run by ``SessionCore``: connection runs, waits for notifications, named
/// commands; inputs with explicit times, the exact actions asserted.
@Suite struct SessionCoreProfileTests {
    typealias F = SessionCoreFixture

    // MARK: The device: ffe1 takes writes, ffe2 is read and notifies

    static let service = SessionCore.DeviceView.Service(
        path: "\(F.path)/ffe0", uuid: BluetoothUUID("ffe0")!,
        characteristics: [
            F.characteristic("ffe0", "ffe1", ["write", "write-without-response"]), F.characteristic("ffe0", "ffe2", ["read", "notify"]),
        ])
    static let resolved = SessionCore.DeviceView(
        connected: true, servicesResolved: true, uuids: [BluetoothUUID("ffe0")!], name: "Strap", services: [service])
    static let connected = SessionCore.DeviceView(
        connected: true, servicesResolved: false, uuids: [BluetoothUUID("ffe0")!], name: "Strap", services: [])
    static let disconnected = SessionCore.DeviceView(
        connected: false, servicesResolved: false, uuids: [BluetoothUUID("ffe0")!], name: "Strap", services: [])
    static let routes = ["route ble/strap/ffe0/ffe1", "route ble/strap/ffe0/ffe2"]
    static let ffe1 = BluetoothUUID("ffe1")!
    static let ffe2 = BluetoothUUID("ffe2")!
    static let ffe2Path = "\(F.path)/ffe0/ffe2"

    static func data() throws -> ProfileDecode {
        .structure(try ProfileStruct(format: "<hB", fields: [.init("temperature", try ProfileFieldTransform.parse("/10")), .init("moisture")]))
    }

    static func write(_ template: String, line: Int = 0) throws -> ProfileStep {
        ProfileStep(.write(characteristic: ffe1, value: try ProfileTemplate(template), response: nil), line: line)
    }

    static let subscribe = ProfileStep(.subscribe(characteristic: ffe2, decode: nil))

    /// `press` (`570100`, answered on ffe2: 01 ok, 05 wrong_password), `set_position` (`{position|u8}`), `slow`
    /// (a write, 20 s of sleep, a write), `open` and `close` for the cover.
    static func commands() throws -> [ProfileCommand] {
        let answers = try ProfileFirstByte<String>([(key: "01", target: "ok"), (key: "05", target: "wrong_password")])
        return [
            ProfileCommand(name: "press", steps: [try write("570100")], expect: ProfileExpect(characteristic: ffe2, answers: answers)),
            ProfileCommand(name: "set_position", steps: [try write("0d {position|u8}")]),
            ProfileCommand(name: "slow", steps: [try write("01"), ProfileStep(.sleep(.seconds(20))), try write("02")]),
            ProfileCommand(name: "open", steps: [try write("0a01")]),
            ProfileCommand(name: "close", steps: [try write("0a02")]),
        ]
    }

    static func binding(_ steps: [ProfileStep], commands: [ProfileCommand] = [], cover: ProfileCover? = nil) throws -> DeviceProfileBinding {
        DeviceProfileBinding(profile: DeviceProfile(
            id: "thing", steps: steps, decodes: ["data": try data()], commands: commands, cover: cover))
    }

    /// Connects a fresh core at 0–2 s: the setup starts at 2 s with these actions.
    static func connect(_ f: inout F, policy: Bool = false) -> [String] {
        _ = f.step(.start, disconnected, at: 0)
        _ = f.receive(.slotGranted, disconnected, at: 0)
        _ = f.receive(.connectFinished(attempt: 1, error: nil), connected, at: 1)
        return f.receive(.servicesResolved(true), resolved, at: 2)
    }

    static func done(attempt: Int = 1, _ value: [UInt8] = []) -> SessionInput {
        .operationFinished(attempt: attempt, .profileCall(.success(value), linkDropped: false))
    }

    static func command(_ name: String, _ payload: String = "", operation: CharacteristicOperation = .set, deadline: Double) -> PendingCommand {
        PendingCommand(
            payload: Array(payload.utf8), replyTo: nil, device: "strap", service: "command", characteristic: name,
            operation: operation, resultTopic: "ble/strap/command/\(name)/result", deadline: F.t(deadline))
    }

    /// A ready core whose connection steps subscribe to ffe2.
    static func ready(commands: [ProfileCommand]? = nil, cover: ProfileCover? = nil) throws -> F {
        var f = try F(profile: try binding([subscribe], commands: commands ?? Self.commands(), cover: cover))
        #expect(connect(&f) == routes + ["AcquireNotify ffe0/ffe2 #1"])
        let ready = f.receive(try f.subscribed("ffe2", attempt: 1), resolved, at: 2.1)
        #expect(ready.contains("availability online"), "\(ready)")
        #expect(f.core.machine.isReady && f.core.queue.run == nil)
        return f
    }

    // MARK: Connection runs

    @Test("connection steps after the setup: write (the template rendered with the wall time), read decoded to values, sleep; then the setup is done")
    func connectionRun() throws {
        var f = try F(profile: try Self.binding([
            try Self.write("a0 {unix|u32le}"), ProfileStep(.read(characteristic: Self.ffe2, decode: "data")), ProfileStep(.sleep(.seconds(1))),
        ]))
        f.wall = WallTime(unix: 0x6501_0203)
        #expect(Self.connect(&f) == Self.routes + ["write ffe0/ffe1 a003020165 request #1"])
        #expect(f.core.queue.busy && f.core.machine.state != .ready(since: F.t(2)))
        f.expect(Self.done(), Self.resolved, at: 2.1, ["read ffe0/ffe2 #1"])
        f.expect(Self.done([0xe8, 0x00, 0x2a]), Self.resolved, at: 2.2, [#"values thing {"temperature":23.2,"moisture":42}"#])
        #expect(f.core.nextDeadline == F.t(3.2), "the sleep")
        let after = f.step(.deadline, Self.resolved, at: 3.2)
        #expect(after.contains("availability online"), "the setup's marker runs after the steps: \(after)")
        #expect(f.core.queue.run == nil && !f.core.queue.busy)
    }

    @Test("a device with a profile subscribes to and reads only the characteristics its entry names, then runs the steps")
    func onlyNamedCharacteristics() throws {
        let yaml = F.yaml + """

                characteristics:
                  - { uuid: "2a19" }
            """
        var f = try F(yaml: yaml, profile: try Self.binding([ProfileStep(.read(characteristic: BluetoothUUID("2a38")!, decode: nil))]))
        _ = f.step(.start, F.disconnected, at: 0)
        _ = f.receive(.slotGranted, F.disconnected, at: 0)
        _ = f.receive(.connectFinished(attempt: 1, error: nil), F.connected, at: 1)
        #expect(f.receive(.servicesResolved(true), F.resolved, at: 2).last == "AcquireNotify 180f/2a19 #1", "2a37 not subscribed")
        #expect(f.core.link?.setup.operations.map { SessionCore.describe($0) } == [
            "ReadValue 180f/2a19", "the profile's connection steps", "setup",
        ], "2a38 not read by the setup")
        f.expect(try f.subscribed("2a19", attempt: 1), F.resolved, at: 3, ["ReadValue 180f/2a19 #1"])
        f.expect(try f.read("2a19", attempt: 1, [90]), F.resolved, at: 3, ["publishRead 180f/2a19 [90]", "read 180d/2a38 #1"])
    }

    @Test("a failed step ends the connection attempt with a warning naming the step and its line; nothing more runs on the link")
    func failedStep() throws {
        var f = try F(profile: try Self.binding([try Self.write("01", line: 7), ProfileStep(.read(characteristic: Self.ffe2, decode: "data"))]))
        _ = Self.connect(&f)
        let refused = SessionInput.operationFinished(
            attempt: 1, .profileCall(.failure(CommandError(.gattError, "org.bluez.Error.Failed: nope")), linkDropped: false))
        let actions = f.core.handle(.received(refused), device: Self.resolved, now: F.t(2.1))
        let warnings = actions.compactMap { if case .log(.warning, let m) = $0 { m } else { nil } }
        #expect(warnings == ["profile thing: step 1 (line 7, write) failed: gatt_error: org.bluez.Error.Failed: nope; ending the connection"])
        let lines = actions.compactMap(F.line)
        #expect(lines.contains("disconnect #1") && !lines.contains("read ffe0/ffe2 #1") && !lines.contains("availability online"), "\(lines)")
        #expect(f.core.queue.run == nil && !f.core.machine.isReady)
    }

    @Test("a read that does not decode fails the step")
    func decodeFailure() throws {
        var f = try F(profile: try Self.binding([ProfileStep(.read(characteristic: Self.ffe2, decode: "data"))]))
        #expect(Self.connect(&f) == Self.routes + ["read ffe0/ffe2 #1"])
        let lines = f.receive(Self.done([0x01]), Self.resolved, at: 2.1)
        #expect(lines.contains("disconnect #1") && !lines.contains { $0.hasPrefix("values") }, "\(lines)")
    }

    @Test("the setup deadline covers long waits and sleeps")
    func setupDeadline() throws {
        let f = try F(profile: try Self.binding([
            ProfileStep(.waitNotify(characteristic: Self.ffe2, timeout: .seconds(60), decode: nil)), ProfileStep(.sleep(.seconds(5))), try Self.write("01"),
        ]))
        #expect(f.core.configuration.machine.subscribeTimeout == .seconds(75))
        let plain = try F()
        #expect(plain.core.configuration.machine.subscribeTimeout == .seconds(20))
    }

    @Test("wait_notify: armed before the write that makes the device notify; a notification before the write's reply is kept and taken")
    func waitNotifyArmedBeforeWrite() throws {
        var f = try F(profile: try Self.binding([
            Self.subscribe, try Self.write("01"), ProfileStep(.waitNotify(characteristic: Self.ffe2, timeout: .seconds(5), decode: "data")),
        ]))
        #expect(Self.connect(&f) == Self.routes + ["AcquireNotify ffe0/ffe2 #1"])
        f.expect(try f.subscribed("ffe2", attempt: 1, acquired: true), Self.resolved, at: 2.1, ["arm ffe0/ffe2 #1", "write ffe0/ffe1 01 request #1"])
        // The notification comes before the write's reply: kept.
        f.expect(.notified(path: Self.ffe2Path, value: [0x10, 0x00, 0x05], attempt: 1), Self.resolved, at: 2.2, [])
        let done = f.receive(Self.done(), Self.resolved, at: 2.3)
        #expect(Array(done.prefix(2)) == [#"values thing {"temperature":1.6,"moisture":5}"#, "disarm [\"ffe0/ffe2\"]"], "\(done)")
        #expect(done.contains("availability online"))
        #expect(f.core.link?.notifying == [Self.ffe2Path])
    }

    @Test("a wait_notify after a sleep is armed when the step before the sleep starts")
    func armedAcrossSleep() throws {
        var f = try F(profile: try Self.binding([
            Self.subscribe, try Self.write("01"), ProfileStep(.sleep(.seconds(1))),
            ProfileStep(.waitNotify(characteristic: Self.ffe2, timeout: .seconds(5), decode: nil)),
        ]))
        _ = Self.connect(&f)
        f.expect(try f.subscribed("ffe2", attempt: 1), Self.resolved, at: 2.1, ["arm ffe0/ffe2 #1", "write ffe0/ffe1 01 request #1"])
        f.expect(Self.done(), Self.resolved, at: 2.2, [])
        f.expect(.notified(path: Self.ffe2Path, value: [7], attempt: 1), Self.resolved, at: 2.5, [])
        let done = f.step(.deadline, Self.resolved, at: 3.2)
        #expect(done.first == "disarm [\"ffe0/ffe2\"]" && done.contains("availability online"), "\(done)")
    }

    @Test("wait_notify without its notification in time fails the connection")
    func waitNotifyTimeout() throws {
        var f = try F(profile: try Self.binding([Self.subscribe, ProfileStep(.waitNotify(characteristic: Self.ffe2, timeout: .seconds(5), decode: nil))]))
        // Armed when the step before the wait starts.
        #expect(Self.connect(&f) == Self.routes + ["arm ffe0/ffe2 #1", "AcquireNotify ffe0/ffe2 #1"])
        f.expect(try f.subscribed("ffe2", attempt: 1), Self.resolved, at: 2.1, [])
        #expect(f.core.nextDeadline == F.t(7.1))
        f.expect(.notified(path: Self.ffe2Path, value: [1], attempt: 0), Self.resolved, at: 3, [])
        let lines = f.step(.deadline, Self.resolved, at: 7.1)
        #expect(lines.first == "disarm [\"ffe0/ffe2\"]" && lines.contains("disconnect #1"), "\(lines)")
    }

    @Test("a subscribe step with a decode routes the notifications' decode")
    func subscribeDecode() throws {
        var f = try F(profile: try Self.binding([ProfileStep(.subscribe(characteristic: Self.ffe2, decode: "data"))]))
        #expect(Self.connect(&f) == Self.routes + ["routeDecode ffe0/ffe2 thing", "AcquireNotify ffe0/ffe2 #1"])
    }

    @Test("stale completions of a run's call are dropped; the next link runs the steps again")
    func staleAttempt() throws {
        var f = try F(profile: try Self.binding([try Self.write("01")]))
        _ = Self.connect(&f)
        _ = f.receive(.connectedChanged(false), Self.disconnected, at: 3)
        #expect(f.core.queue.run == nil && f.core.queue.busy, "the call is still in flight")
        f.expect(Self.done(), Self.disconnected, at: 3.1, [])
        #expect(!f.core.queue.busy)
    }

    @Test("a poll profile: the cycle connects, runs the steps, disconnects")
    func pollCycle() throws {
        var f = try F(policy: .poll(interval: .seconds(60), listen: .zero), profile: try Self.binding([
            ProfileStep(.read(characteristic: Self.ffe2, decode: "data")),
        ]))
        #expect(Self.connect(&f) == Self.routes + ["read ffe0/ffe2 #1"])
        let lines = f.receive(Self.done([0xe8, 0x00, 0x2a]), Self.resolved, at: 2.1)
        #expect(lines.first == #"values thing {"temperature":23.2,"moisture":42}"#)
        #expect(lines.contains("availability online") && lines.last == "disconnect #2", "\(lines)")
    }

    // MARK: Commands

    @Test("a command runs its steps in the queue; its expect's answer decides: ok, or the code it names")
    func commandExpect() throws {
        var f = try Self.ready()
        f.expect(.command(Self.command("press", #"{"transaction": 3}"#, deadline: 12)), Self.resolved, at: 3, [
            "arm ffe0/ffe2 #1", "write ffe0/ffe1 570100 request #1",
        ])
        f.expect(.notified(path: Self.ffe2Path, value: [0x01, 0xff], attempt: 1), Self.resolved, at: 3.1, [])
        f.expect(Self.done(), Self.resolved, at: 3.2, ["disarm [\"ffe0/ffe2\"]", "respond press ok"])
        // The answer after the write's reply.
        _ = f.receive(.command(Self.command("press", deadline: 14)), Self.resolved, at: 4)
        f.expect(Self.done(), Self.resolved, at: 4.1, [])
        #expect(f.core.nextDeadline == F.t(9.1), "the expect's 5 s")
        f.expect(.notified(path: Self.ffe2Path, value: [0x05], attempt: 1), Self.resolved, at: 4.2, [
            "disarm [\"ffe0/ffe2\"]", "respond press wrong_password",
        ])
        // A first byte the expect does not list: the wait goes on (a late frame of an earlier query); a listed
        // answer after it decides.
        _ = f.receive(.command(Self.command("press", deadline: 15)), Self.resolved, at: 5)
        f.expect(.notified(path: Self.ffe2Path, value: [0x09], attempt: 1), Self.resolved, at: 5.05, [])
        _ = f.receive(Self.done(), Self.resolved, at: 5.1)
        f.expect(.notified(path: Self.ffe2Path, value: [0x01], attempt: 1), Self.resolved, at: 5.2, [
            "disarm [\"ffe0/ffe2\"]", "respond press ok",
        ])
        // Only unlisted ones until the expect's timeout: unexpected_answer.
        _ = f.receive(.command(Self.command("press", deadline: 15)), Self.resolved, at: 5.3)
        _ = f.receive(Self.done(), Self.resolved, at: 5.4)
        f.expect(.notified(path: Self.ffe2Path, value: [0x09], attempt: 1), Self.resolved, at: 5.5, [])
        f.expect(.deadline, Self.resolved, at: 10.4, ["disarm [\"ffe0/ffe2\"]", "respond press unexpected_answer"])
        // No answer in time.
        _ = f.receive(.command(Self.command("press", deadline: 21)), Self.resolved, at: 11)
        _ = f.receive(Self.done(), Self.resolved, at: 11.1)
        f.expect(.deadline, Self.resolved, at: 16.1, ["disarm [\"ffe0/ffe2\"]", "respond press timeout"])
        #expect(f.core.queue.run == nil && !f.core.queue.busy)
    }

    @Test("an expect's offset: the answer byte is read there (an AM43 ACK is byte 3 of 9a 0d 01 5a cc); the mapping report names the profile")
    func expectOffset() throws {
        let answers = try ProfileFirstByte<String>([(key: "5a", target: "ok"), (key: "a5", target: "nack")])
        let move = ProfileCommand(
            name: "move", steps: [try Self.write("9a0d01")], expect: ProfileExpect(characteristic: Self.ffe2, answers: answers, offset: 3))
        var f = try F(profile: try Self.binding([Self.subscribe], commands: [move]))
        _ = Self.connect(&f)
        let ready = f.core.handle(.received(try f.subscribed("ffe2", attempt: 1)), device: Self.resolved, now: F.t(2.1))
        let profiles = ready.compactMap { if case .report(.mapped(let m)) = $0 { m.profile } else { nil } }
        #expect(profiles == ["thing"])
        _ = f.receive(.command(Self.command("move", deadline: 13)), Self.resolved, at: 3)
        _ = f.receive(Self.done(), Self.resolved, at: 3.1)
        f.expect(.notified(path: Self.ffe2Path, value: [0x9a, 0x0d, 0x01, 0xa5, 0x31], attempt: 1), Self.resolved, at: 3.2, [
            "disarm [\"ffe0/ffe2\"]", "respond move nack",
        ])
        _ = f.receive(.command(Self.command("move", deadline: 13)), Self.resolved, at: 4)
        _ = f.receive(Self.done(), Self.resolved, at: 4.1)
        f.expect(.notified(path: Self.ffe2Path, value: [0x9a, 0x0d, 0x01, 0x5a, 0xcc], attempt: 1), Self.resolved, at: 4.2, [
            "disarm [\"ffe0/ffe2\"]", "respond move ok",
        ])
    }

    @Test("unknown commands, /get on a command topic, a device without a profile: unknown_command at once")
    func unknownCommand() throws {
        var f = try Self.ready()
        f.expect(.command(Self.command("nope", deadline: 13)), Self.resolved, at: 3, ["respond nope unknown_command"])
        f.expect(.command(Self.command("press", operation: .get, deadline: 13)), Self.resolved, at: 3, ["respond press unknown_command"])
        var plain = try F()
        try plain.driveToReady()
        plain.expect(.command(Self.command("press", deadline: 13)), F.resolved, at: 4, ["respond press unknown_command"])
    }

    @Test("a missing or bad parameter, or a payload that is no object: invalid_payload at once; a good one is rendered")
    func invalidPayload() throws {
        var f = try Self.ready()
        f.expect(.command(Self.command("set_position", "{}", deadline: 13)), Self.resolved, at: 3, ["respond set_position invalid_payload"])
        f.expect(.command(Self.command("set_position", #"{"position": 300}"#, deadline: 13)), Self.resolved, at: 3, ["respond set_position invalid_payload"])
        f.expect(.command(Self.command("set_position", "[1]", deadline: 13)), Self.resolved, at: 3, ["respond set_position invalid_payload"])
        f.expect(.command(Self.command("set_position", #"{"position": 40, "transaction": "t"}"#, deadline: 13)), Self.resolved, at: 3, [
            "write ffe0/ffe1 0d28 request #1",
        ])
        f.expect(Self.done(), Self.resolved, at: 3.1, ["respond set_position ok"])
    }

    @Test("the command's deadline mid-run: timeout, and no further call")
    func deadlineMidRun() throws {
        var f = try Self.ready()
        f.expect(.command(Self.command("slow", deadline: 13)), Self.resolved, at: 3, ["write ffe0/ffe1 01 request #1"])
        f.expect(Self.done(), Self.resolved, at: 3.1, [])
        #expect(f.core.nextDeadline == F.t(13), "the command's deadline comes before the sleep's end")
        f.expect(.deadline, Self.resolved, at: 13, ["respond slow timeout"])
        #expect(f.core.queue.run == nil && !f.core.queue.busy)
        f.expect(.deadline, Self.resolved, at: 23.1, [])
    }

    @Test("the deadline while a call is in flight: answered timeout; BlueZ's reply then ends the run without the next step")
    func deadlineDuringCall() throws {
        var f = try Self.ready()
        _ = f.receive(.command(Self.command("slow", deadline: 13)), Self.resolved, at: 3)
        f.expect(.deadline, Self.resolved, at: 13, ["respond slow timeout"])
        #expect(f.core.queue.busy)
        f.expect(Self.done(), Self.resolved, at: 13.5, [])
        #expect(f.core.queue.run == nil && !f.core.queue.busy)
    }

    @Test("the link lost mid-run: not_connected, not sent again")
    func linkLostMidRun() throws {
        var f = try Self.ready()
        _ = f.receive(.command(Self.command("slow", deadline: 13)), Self.resolved, at: 3)
        _ = f.receive(Self.done(), Self.resolved, at: 3.1)
        let lost = f.receive(.connectedChanged(false), Self.disconnected, at: 4)
        #expect(lost.contains("respond slow not_connected"), "\(lost)")
        #expect(f.core.queue.run == nil && f.core.queue.commandCount == 0)
    }

    @Test("the cover pseudo-command runs the command cover: names for open, close (plain text or a JSON string)")
    func coverCommand() throws {
        var f = try Self.ready(cover: ProfileCover(open: "open", close: "close"))
        f.expect(.command(Self.command("cover", "open", deadline: 13)), Self.resolved, at: 3, ["write ffe0/ffe1 0a01 request #1"])
        f.expect(Self.done(), Self.resolved, at: 3.1, ["respond cover ok"])
        f.expect(.command(Self.command("cover", #""close""#, deadline: 13)), Self.resolved, at: 4, ["write ffe0/ffe1 0a02 request #1"])
        f.expect(Self.done(), Self.resolved, at: 4.1, ["respond cover ok"])
        f.expect(.command(Self.command("cover", "stop", deadline: 13)), Self.resolved, at: 5, ["respond cover invalid_payload"])
        f.expect(.command(Self.command("cover", "wiggle", deadline: 13)), Self.resolved, at: 5, ["respond cover invalid_payload"])
        var none = try Self.ready()
        none.expect(.command(Self.command("cover", "open", deadline: 13)), Self.resolved, at: 3, ["respond cover unknown_command"])
    }

    @Test("a poll device connected on demand runs its connection steps first, then the command, then lets go")
    func onDemand() throws {
        var f = try F(policy: .poll(interval: .seconds(600), listen: .zero), profile: try Self.binding(
            [ProfileStep(.read(characteristic: Self.ffe2, decode: "data"))], commands: Self.commands()))
        #expect(Self.connect(&f) == Self.routes + ["read ffe0/ffe2 #1"])
        _ = f.receive(Self.done([0xe8, 0x00, 0x2a]), Self.resolved, at: 2.1)
        _ = f.receive(.connectedChanged(false), Self.disconnected, at: 2.5)
        f.expect(.command(Self.command("set_position", #"{"position": 1}"#, deadline: 20)), Self.disconnected, at: 3, ["requestSlot"])
        f.expect(.slotGranted, Self.disconnected, at: 3, ["connect #4"])
        _ = f.receive(.connectFinished(attempt: 4, error: nil), Self.connected, at: 4)
        #expect(f.receive(.servicesResolved(true), Self.resolved, at: 5) == Self.routes + ["read ffe0/ffe2 #4"])
        let afterSteps = f.receive(Self.done(attempt: 4, [0xe8, 0x00, 0x2a]), Self.resolved, at: 5.1)
        #expect(afterSteps.first == #"values thing {"temperature":23.2,"moisture":42}"#)
        #expect(afterSteps.last == "write ffe0/ffe1 0d01 request #4", "\(afterSteps)")
        let answered = f.receive(Self.done(attempt: 4), Self.resolved, at: 5.2)
        #expect(answered == ["respond set_position ok", "disconnect #5"])
    }
}
