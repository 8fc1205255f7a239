import BridgeCore
import Testing

@testable import RuntimeCore

/// Self-describing characteristics (SPEC §11) in ``SessionCore``: the Presentation Format
/// (0x2904) and User Description (0x2901) descriptors are read once per connection, through the
/// GATT queue, before the subscriptions and reads, and only for characteristics that need them.
@Suite struct SessionCoreDescriptorTests {
    typealias F = SessionCoreFixture
    static let discovery = F.yaml + "\nhomeassistant: { discovery: true }\n"
    /// sint16, exponent -2, °C.
    static let celsius: [UInt8] = [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x00, 0x00]
    /// uint8, exponent 0, percent.
    static let percent: [UInt8] = [0x04, 0x00, 0xAD, 0x27, 0x01, 0x00, 0x00]

    /// The strap, with a presentation format on 2a38 and both descriptors on 2a19.
    static let described: SessionCore.DeviceView = {
        var view = F.resolved
        view.services[0].characteristics[1].presentationFormat = "\(F.path)/180d/2a38/desc01"
        view.services[1].characteristics[0].presentationFormat = "\(F.path)/180f/2a19/desc01"
        view.services[1].characteristics[0].userDescription = "\(F.path)/180f/2a19/desc02"
        return view
    }()

    /// The strap connected with `view` at 2 s: the setup's first operation is in flight.
    static func connect(_ f: inout F, _ view: SessionCore.DeviceView) -> [String] {
        _ = f.step(.start, F.disconnected, at: 0)
        _ = f.receive(.slotGranted, F.disconnected, at: 0)
        _ = f.receive(.connectFinished(attempt: 1, error: nil), F.connected, at: 1)
        return f.receive(.servicesResolved(true), view, at: 2).filter { !$0.hasPrefix("route") }
    }

    static func descriptor(_ f: F, _ uuid: String, _ kind: DescriptorKind, attempt: Int, _ result: Result<[UInt8], BluetoothError>)
        throws -> SessionInput
    {
        .operationFinished(attempt: attempt, .descriptor(try f.mapped(uuid), kind, result))
    }

    @Test("descriptors are read first, one at a time; the values are then routed decoded and reported for discovery")
    func readBeforeTheSetup() throws {
        var f = try F(yaml: Self.discovery)
        #expect(Self.connect(&f, Self.described) == ["ReadDescriptor 180d/2a38 2904 #1"])
        f.expect(try Self.descriptor(f, "2a38", .presentationFormat, attempt: 1, .success(Self.percent)), Self.described, at: 2.1, [
            "present 180d/2a38 uint8 0 27ad", "ReadDescriptor 180f/2a19 2904 #1",
        ])
        f.expect(try Self.descriptor(f, "2a19", .presentationFormat, attempt: 1, .success(Self.celsius)), Self.described, at: 2.2, [
            "present 180f/2a19 sint16 -2 272f", "ReadDescriptor 180f/2a19 2901 #1",
        ])
        f.expect(
            try Self.descriptor(f, "2a19", .userDescription, attempt: 1, .success(Array("Outdoor temperature".utf8))),
            Self.described, at: 2.3, ["AcquireNotify 180d/2a37 #1"])
        #expect(try f.mapped("2a19").presentation == PresentationFormat(descriptor: Self.celsius))
        #expect(try f.mapped("2a19").userDescription == "Outdoor temperature")
        #expect(try f.mapped("2a38").presentation?.unit == 0x27AD)
        _ = f.receive(try f.subscribed("2a37", attempt: 1), Self.described, at: 2.4)
        _ = f.receive(try f.subscribed("2a19", attempt: 1), Self.described, at: 2.5)
        _ = f.receive(try f.read("2a38", attempt: 1, [1]), Self.described, at: 2.6)
        let actions = f.core.handle(.received(try f.read("2a19", attempt: 1, [0x29, 0x09])), device: Self.described, now: F.t(2.7))
        let mapped = try #require(actions.lazy.compactMap { action -> MappedDevice? in
            if case .report(.mapped(let m)) = action { return m } else { return nil }
        }.first)
        let battery = try #require(mapped.discovery.first { $0.uuid == BluetoothUUID("2a19")! })
        #expect(battery.presentation?.format == .sint16)
        #expect(battery.userDescription == "Outdoor temperature")
        let location = try #require(mapped.discovery.first { $0.uuid == BluetoothUUID("2a38")! })
        #expect(location.presentation?.unit == 0x27AD && location.userDescription == nil)
        #expect(f.core.machine.isReady)
    }

    @Test("a configured format or name, or discovery off, means that descriptor is not read")
    func onlyWhatIsNeeded() throws {
        let configured = F.yaml + """

                characteristics:
                  - { uuid: "2a19", format: uint8 }
                  - { uuid: "2a38", name: location }
            homeassistant: { discovery: true }
            """
        var f = try F(yaml: configured)
        // 2a38 has no configured format: its 2904 is read. 2a19's format is configured and its
        // 2901 is the only one left.
        #expect(Self.connect(&f, Self.described) == ["ReadDescriptor 180d/2a38 2904 #1"])
        f.expect(try Self.descriptor(f, "2a38", .presentationFormat, attempt: 1, .success(Self.percent)), Self.described, at: 2.1, [
            "present 180d/2a38 uint8 0 27ad", "ReadDescriptor 180f/2a19 2901 #1",
        ])
        // Without discovery, user descriptions are not read at all.
        var plain = try F()
        #expect(Self.connect(&plain, Self.described) == ["ReadDescriptor 180d/2a38 2904 #1"])
        plain.expect(
            try Self.descriptor(plain, "2a38", .presentationFormat, attempt: 1, .success(Self.percent)), Self.described, at: 2.1,
            ["present 180d/2a38 uint8 0 27ad", "ReadDescriptor 180f/2a19 2904 #1"])
        plain.expect(
            try Self.descriptor(plain, "2a19", .presentationFormat, attempt: 1, .success(Self.celsius)), Self.described, at: 2.2,
            ["present 180f/2a19 sint16 -2 272f", "AcquireNotify 180d/2a37 #1"])
        // A device without the descriptors: the setup as ever.
        var none = try F(yaml: Self.discovery)
        #expect(Self.connect(&none, F.resolved) == ["AcquireNotify 180d/2a37 #1"])
    }

    @Test("a malformed or failed descriptor read changes nothing and the setup goes on")
    func malformedAndFailed() throws {
        var f = try F(yaml: Self.discovery)
        _ = Self.connect(&f, Self.described)
        f.expect(
            try Self.descriptor(f, "2a38", .presentationFormat, attempt: 1, .success([0x0E, 0xFE, 0x2F])), Self.described,
            at: 2.1, ["ReadDescriptor 180f/2a19 2904 #1"])
        let refused = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "Operation failed")
        f.expect(
            try Self.descriptor(f, "2a19", .presentationFormat, attempt: 1, .failure(refused)), Self.described, at: 2.2,
            ["ReadDescriptor 180f/2a19 2901 #1"])
        f.expect(
            try Self.descriptor(f, "2a19", .userDescription, attempt: 1, .success([0, 0])), Self.described, at: 2.3,
            ["AcquireNotify 180d/2a37 #1"])
        #expect(try f.mapped("2a38").presentation == nil)
        #expect(try f.mapped("2a19").presentation == nil && f.mapped("2a19").userDescription == nil)
        // struct says nothing to decode by: not used.
        var g = try F(yaml: Self.discovery)
        _ = Self.connect(&g, Self.described)
        g.expect(
            try Self.descriptor(g, "2a38", .presentationFormat, attempt: 1, .success([0x1B, 0, 0, 0x27, 1, 0, 0])),
            Self.described, at: 2.1, ["ReadDescriptor 180f/2a19 2904 #1"])
    }

    @Test("descriptors are read again on every connection; a completion of an earlier one is dropped")
    func oncePerConnection() throws {
        var f = try F(yaml: Self.discovery)
        _ = Self.connect(&f, Self.described)
        f.expect(.connectedChanged(false), F.disconnected, at: 3, ["releaseSlot", "report link down"])
        f.expect(
            try Self.descriptor(f, "2a38", .presentationFormat, attempt: 1, .success(Self.percent)), F.disconnected, at: 3.1, [])
        #expect(try f.mapped("2a38").presentation == nil)
        let retry = try #require(f.core.nextDeadline)
        _ = f.step(.deadline, F.disconnected, now: retry)
        #expect(f.receive(.slotGranted, F.disconnected, now: retry) == ["connect #3"])
        _ = f.receive(.connectFinished(attempt: 3, error: nil), F.connected, now: retry.advanced(by: .seconds(1)))
        let setup = f.receive(.servicesResolved(true), Self.described, now: retry.advanced(by: .seconds(2)))
        #expect(setup.filter { !$0.hasPrefix("route") } == ["ReadDescriptor 180d/2a38 2904 #3"])
    }
}
