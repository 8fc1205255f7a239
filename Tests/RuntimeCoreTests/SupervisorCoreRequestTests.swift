import BridgeCore
import Testing

@testable import RuntimeCore

/// ``SupervisorCore``'s `bridge/request/*` decisions, driven directly: no task, no clock, no broker.
@Suite struct SupervisorCoreRequestTests {
    typealias F = CoreFixture
    typealias Response = SupervisorCore.Response

    static func request(_ core: inout SupervisorCore, _ command: String, _ json: String, at ms: Int64 = 2000) -> [SupervisorCore.Action] {
        core.handle(.request(command: command, payload: Array(json.utf8)), now: F.at(ms), tree: F.scanningTree)
    }

    /// A scanning core with the thermometer managed.
    static func withThermo() throws -> (SupervisorCore, String) {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        let thermo = F.device(F.thermo, uuids: ["180f"])
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(1000), tree: F.tree(devices: [thermo]))
        #expect(core.sessions == [thermo.path])
        return (core, thermo.path)
    }

    @Test("health_check is answered with what the executor assembles, devices with the core's list; the transaction is echoed")
    func healthAndDevices() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        #expect(
            Self.request(&core, "health_check", #"{"transaction":"t1"}"#).decisions
                == [.respond(Response(command: "health_check", body: .health(bluez: true, adapter: true), transaction: .string("t1")))])
        #expect(Self.request(&core, "devices", "").decisions == [.respond(Response(command: "devices", body: .devices([])))])
        // BlueZ gone: the answer says so.
        var lost = try F.scanning("bluetooth: { services: [\"180f\"] }")
        _ = lost.handle(.bluezLost, now: F.at(1500), tree: F.noBlueZ)
        let actions = lost.handle(.request(command: "health_check", payload: []), now: F.at(2000), tree: F.noBlueZ)
        #expect(actions.decisions == [.respond(Response(command: "health_check", body: .health(bluez: false, adapter: false)))])
    }

    @Test("a bad request is answered with an error and changes nothing")
    func errors() throws {
        let (fresh, path) = try Self.withThermo()
        var core = fresh
        #expect(
            Self.request(&core, "restart", #"{"transaction":7}"#).decisions == [
                .respond(Response(
                    command: "restart",
                    error: "unknown request 'restart' (known: health_check, devices, forget, reconnect, unpair, scan, device/add, device/remove, device/rename)", transaction: .integer(7))),
            ])
        for payload in ["", "{}", #"{"device": 3}"#, "not json"] {
            #expect(
                Self.request(&core, "forget", payload).decisions
                    == [.respond(Response(command: "forget", error: "expected {\"device\": \"<name or address>\"}"))], "\(payload)")
        }
        #expect(
            Self.request(&core, "reconnect", #"{"device":"kitchen"}"#).decisions
                == [.respond(Response(command: "reconnect", error: "no device 'kitchen' is known to the bridge"))])
        #expect(core.find(F.thermo)?.path == path)
    }

    @Test("reconnect by address (or a bare string) tells the device's session; an unknown, unstored address is refused")
    func reconnect() throws {
        let (fresh, path) = try Self.withThermo()
        var core = fresh
        let answer = Response(command: "reconnect", body: .device(name: "e45f01abcdef", address: F.thermo))
        #expect(
            Self.request(&core, "reconnect", #"{"device":"e4:5f:01:ab:cd:ef"}"#).decisions
                == [.send(path: path, .reconnectRequested), .respond(answer)])
        #expect(Self.request(&core, "reconnect", #""e45f01abcdef""#).decisions == [.send(path: path, .reconnectRequested), .respond(answer)])
        #expect(
            Self.request(&core, "forget", #"{"device":"11:22:33:44:55:66"}"#).decisions
                == [.respond(Response(command: "forget", error: "no device '11:22:33:44:55:66' is known to the bridge"))])
    }

    @Test("unpair: the session stops and BlueZ's object (with the bond) is removed; the state file keeps it")
    func unpair() throws {
        let (fresh, path) = try Self.withThermo()
        var core = fresh
        #expect(
            Self.request(&core, "unpair", #"{"device":"e45f01abcdef","transaction":1}"#).decisions == [
                .send(path: path, .stop), .removeDevice(path: path),
                .respond(Response(command: "unpair", body: .device(name: "e45f01abcdef", address: F.thermo), transaction: .integer(1))),
            ])
        #expect(
            Self.request(&core, "unpair", #"{"device":"nosuch"}"#).decisions
                == [.respond(Response(command: "unpair", error: "no device 'nosuch' is known to the bridge"))])
        #expect(
            Self.request(&core, "unpair", "[]").decisions
                == [.respond(Response(command: "unpair", error: "expected {\"device\": \"<name or address>\"}"))])
    }

    @Test("forget of a stored peripheral without a session: the state file only, answered with the name asked for")
    func forgetStored() throws {
        let stored = KnownPeripheral(address: "11:22:33:44:55:66", addressType: "random")
        var core = SupervisorCore(config: try F.config(""), now: F.at(0))
        _ = core.handle(.started(stored: [stored]), now: F.at(0), tree: F.noBlueZ)
        #expect(core.isStored("11:22:33:44:55:66"))
        #expect(
            Self.request(&core, "forget", #"{"device":"11:22:33:44:55:66","transaction":"x"}"#).decisions == [
                .forgetStored(address: "11:22:33:44:55:66"),
                .respond(Response(command: "forget", body: .device(name: "11:22:33:44:55:66", address: nil), transaction: .string("x"))),
            ])
        #expect(!core.isStored("11:22:33:44:55:66"))
        // Forgotten: a second request finds nothing.
        #expect(
            Self.request(&core, "forget", #""11:22:33:44:55:66""#).decisions
                == [.respond(Response(command: "forget", error: "no device '11:22:33:44:55:66' is known to the bridge"))])
    }
}
