import Foundation
import Testing

/// SPEC §15 end to end: the shipped profiles against bluez-sim's devices that refuse a wrong
/// sequence (scripts/sim/profiles.yaml), named commands and their answers, a user profile.
@Suite(.timeLimit(.minutes(3)))
struct ProfileTests {
    @Test("Mi Flora: the mode write, then the sensor and battery reads, every poll cycle; disconnected in between")
    func miFloraPolls() async throws {
        try await Harness.with(Profiles.options([Profiles.miFlora])) { h in
            let values = try await Profiles.values(h, "ficus") { $0["temperature"] != nil }
            #expect(Profiles.number(values["temperature"], 29.3), "\(values)")
            #expect(JSON.integer(values["illuminance"]) == 9975, "\(values)")
            #expect(JSON.integer(values["moisture"]) == 40, "\(values)")
            #expect(JSON.integer(values["conductivity"]) == 270, "\(values)")
            try await Profiles.values(h, "ficus") { JSON.integer($0["battery"]) == 100 }
            // A second cycle writes the mode again: the simulated Flora forgets it on disconnect.
            try await h.waitForLine(in: h.writesLogPath, timeout: .seconds(30), "a second mode write") { _ in
                h.writesLog.split(separator: "\n").filter { $0.contains("00001a00-") && $0.hasSuffix(" a01f") }.count >= 2
            }
            try await h.waitForBridgeLog(timeout: .seconds(30), "a disconnect between cycles") {
                $0.contains("ficus") && $0.lowercased().contains("disconnect")
            }
        }
    }

    @Test("a user profile from profiles_dir runs without code; one that skips the mode write gets the Flora's garbage")
    func userProfile() async throws {
        let directory = try Launch.temporaryDirectory("/tmp/ble-mqtt-bridge-profiles")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try """
        id: lazy_flora
        manufacturer: Xiaomi
        model: HHCCJCY01 (no mode write)
        connection: poll
        interval: 2s
        steps:
          - read: { characteristic: "00001a01-0000-1000-8000-00805f9b34fb", decode: sensors }
        decode:
          sensors: { struct: "<hxIBH6x", fields: { temperature: "/10", illuminance: "", moisture: "", conductivity: "" } }

        """.write(toFile: "\(directory)/lazy_flora.yaml", atomically: true, encoding: .utf8)
        var entry = Profiles.miFlora
        entry.profile = "lazy_flora"
        entry.extra = nil
        try await Harness.with(Profiles.options([entry], extra: "profiles_dir: \(directory)")) { h in
            let values = try await Profiles.values(h, "ficus") { $0["temperature"] != nil }
            // aa bb cc dd ee ff 99 88 77 66: what the Flora answers before A0 1F
            #expect(Profiles.number(values["temperature"], -1749.4), "\(values)")
            #expect(JSON.integer(values["moisture"]) == 136, "\(values)")
            #expect(!h.writesLog.contains("a01f"), "the user profile writes nothing")
        }
    }

    @Test("LYWSD03MMC: subscribe, wait for the live frame, read the battery")
    func lywsd03mmc() async throws {
        try await Harness.with(Profiles.options([Profiles.lywsd])) { h in
            let live = try await Profiles.values(h, "thermo") { $0["humidity"] != nil }
            let first = Profiles.number(live["temperature"], 20.4) && JSON.integer(live["humidity"]) == 74
                && Profiles.number(live["voltage"], 3.03)
            let second = Profiles.number(live["temperature"], 23.93) && JSON.integer(live["humidity"]) == 43
                && Profiles.number(live["voltage"], 2.714)
            #expect(first || second, "\(live)")
            try await Profiles.values(h, "thermo") { JSON.integer($0["battery"]) == 100 }
        }
    }

    @Test("SwitchBot Bot: press without a password, with the right one, with a wrong one, and without the one it has")
    func switchBotPasswords() async throws {
        var wrong = Profiles.lockedBot
        wrong.name = "wrong_bot"
        wrong.address = "E1:2B:3C:4D:5E:70"
        wrong.options = "{ password: \"1235\" }"
        try await Harness.with(Profiles.options([Profiles.bot, Profiles.lockedBot])) { h in
            let press = try await Profiles.command(h, "bot", "press", #"{"transaction": 7}"#)
            #expect(press.status == "ok", "\(press)")
            #expect(press.op == "command", "\(press)")
            #expect(press.hasTransaction(7), "\(press)")
            try await h.waitForLine(in: h.writesLogPath, "the press") { $0.contains("E1:2B:3C:4D:5E:6F") && $0.hasSuffix(" 570100") }
            let on = try await Profiles.command(h, "bot", "on")
            #expect(on.status == "ok", "\(on)")
            let locked = try await Profiles.command(h, "locked_bot", "press")
            #expect(locked.status == "ok", "\(locked)")
            try await h.waitForLine(in: h.writesLogPath, "the press with the CRC of 1234") { $0.hasSuffix(" 57119be3e0a300") }
            let unknown = try await Profiles.command(h, "bot", "dance")
            #expect(unknown.code == "unknown_command", "\(unknown)")
            let bad = try await Profiles.command(h, "bot", "press", "[1, 2]")
            #expect(bad.code == "invalid_payload", "\(bad)")
        }
        try await Harness.with(Profiles.options([wrong])) { h in
            let press = try await Profiles.command(h, "wrong_bot", "press")
            #expect(press.status == "error", "\(press)")
            #expect(press.code == "wrong_password", "\(press)")
        }
        var none = Profiles.lockedBot
        none.options = nil
        try await Harness.with(Profiles.options([none])) { h in
            let press = try await Profiles.command(h, "locked_bot", "press")
            #expect(press.code == "password_required", "\(press)")
        }
    }

    @Test("the allow-list matches {device}/command/{name}")
    func allowList() async throws {
        try await Harness.with(Profiles.options([Profiles.bot], extra: #"  allow: ["bot/command/on"]"#)) { h in
            let press = try await Profiles.command(h, "bot", "press")
            #expect(press.code == "not_allowed", "\(press)")
            let on = try await Profiles.command(h, "bot", "on")
            #expect(on.status == "ok", "\(on)")
            #expect(!h.writesLog.contains(" 570100"), "a refused command reached the device")
        }
    }

    @Test("AM43: PIN first, a position turned round and checksummed; a wrong PIN makes the motor NACK")
    func am43() async throws {
        try await Harness.with(Profiles.options([Profiles.blind])) { h in
            try await Profiles.values(h, "blind") { JSON.integer($0["battery"]) == 81 }
            try await Profiles.values(h, "blind") { JSON.integer($0["position"]) == 100 }
            let position = try await Profiles.command(h, "blind", "position", #"{"position": 0}"#)
            #expect(position.status == "ok", "\(position)")
            try await h.waitForLine(in: h.writesLogPath, "closed: 100 on the motor") { $0.hasSuffix(" 00ff00009a0d0164f2") }
            let bad = try await Profiles.command(h, "blind", "position", #"{"position": 101}"#)
            #expect(bad.code == "invalid_payload", "\(bad)")
        }
        var wrongPin = Profiles.blind
        wrongPin.options = "{ pin: 1234 }"
        try await Harness.with(Profiles.options([wrongPin])) { h in
            let open = try await Profiles.command(h, "blind", "open")
            #expect(open.status == "error", "\(open)")
            #expect(open.code == "refused", "\(open)")
        }
    }

    @Test("eQ-3: the clock write answers the status; a target temperature is sent doubled")
    func eq3() async throws {
        try await Harness.with(Profiles.options([Profiles.eq3])) { h in
            let status = try await Profiles.values(h, "radiator") { $0["target_temperature"] != nil }
            #expect(Profiles.number(status["target_temperature"], 21.0), "\(status)")
            #expect(JSON.bool(status["manual"]) == false, "\(status)")
            let set = try await Profiles.command(h, "radiator", "set_temperature", #"{"temperature": 22.5}"#)
            #expect(set.status == "ok", "\(set)")
            try await h.waitForLine(in: h.writesLogPath, "41 2d") { $0.hasSuffix(" 412d") }
            let odd = try await Profiles.command(h, "radiator", "set_temperature", #"{"temperature": 22.3}"#)
            #expect(odd.code == "invalid_payload", "\(odd)")
        }
    }

    @Test("Airthings Wave Plus and RadonEye: values with declared names, sentinels and first-byte checks")
    func airQuality() async throws {
        try await Harness.with(Profiles.options([Profiles.wavePlus, Profiles.radonEye, Profiles.radonEyeV1])) { h in
            let wave = try await Profiles.values(h, "wave") { $0["co2"] != nil }
            #expect(Profiles.number(wave["humidity"], 28.0), "\(wave)")
            #expect(JSON.integer(wave["radon_1day"]) == 11, "\(wave)")
            #expect(JSON.integer(wave["radon_longterm"]) == 34, "\(wave)")
            #expect(Profiles.number(wave["temperature"], 24.93), "\(wave)")
            #expect(Profiles.number(wave["pressure"], 999.92), "\(wave)")
            #expect(JSON.integer(wave["co2"]) == 797, "\(wave)")
            #expect(JSON.integer(wave["voc"]) == 108, "\(wave)")
            try await Profiles.values(h, "wave") { Profiles.number($0["battery_voltage"], 3.0) }
            let radon = try await Profiles.values(h, "radon") { $0["radon"] != nil }
            #expect(JSON.integer(radon["radon"]) == 10, "\(radon)")
            #expect(JSON.integer(radon["radon_1day"]) == 8, "\(radon)")
            #expect(JSON.integer(radon["radon_peak"]) == 28, "\(radon)")
            let v1 = try await Profiles.values(h, "radon_v1") { $0["radon"] != nil }
            #expect(abs((JSON.double(v1["radon"]) ?? 0) - 0.58 * 37) < 0.01, "\(v1)")
        }
    }

    @Test("iBBQ: the login first, then the probe stream decoded on every notification; a command without an answer")
    func ibbq() async throws {
        try await Harness.with(Profiles.options([Profiles.ibbq])) { h in
            // the simulated iBBQ ignores 0b 01 without the login of this connection
            let probes = try await Profiles.values(h, "grill") { $0["temperature_probe_1"] != nil }
            #expect(Profiles.number(probes["temperature_probe_1"], 20.0), "\(probes)")
            #expect(Profiles.number(probes["temperature_probe_2"], 21.0), "\(probes)")
            let log = h.writesLog.split(separator: "\n")
            let login = log.firstIndex { $0.hasSuffix(" 2107060504030201b8220000000000") }
            let enable = log.firstIndex { $0.hasSuffix(" 0b0100000000") }
            #expect(login != nil && enable != nil && login! < enable!, "\(h.writesLog)")
            let silence = try await Profiles.command(h, "grill", "silence_alarm")
            #expect(silence.status == "ok", "\(silence)")
            try await h.waitForLine(in: h.writesLogPath, "the silence") { $0.hasSuffix(" 04ff00000000") }
        }
    }

    @Test("SwitchBot Curtain: a Home Assistant position is turned round on the wire")
    func curtain() async throws {
        try await Harness.with(Profiles.options([Profiles.curtain])) { h in
            try await Profiles.values(h, "curtain") { JSON.integer($0["position"]) == 50 && JSON.integer($0["battery"]) == 90 }
            let position = try await Profiles.command(h, "curtain", "position", #"{"position": 30}"#)
            #expect(position.status == "ok", "\(position)")
            try await h.waitForLine(in: h.writesLogPath, "70 on the device") { $0.hasSuffix(" 570f4501010146") }
        }
    }

    @Test("check-config refuses a broken profile in profiles_dir at its file:line:column, used or not")
    func brokenProfile() async throws {
        let directory = try Launch.temporaryDirectory("/tmp/ble-mqtt-bridge-profiles")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: "\(directory)/profiles", withIntermediateDirectories: true)
        try """
        id: broken
        connection: always
        steps:
          - read: { characteristic: "2a19", decode: level }
        decode:
          level: { struct: "<Bz", fields: { battery: "" } }

        """.write(toFile: "\(directory)/profiles/broken.yaml", atomically: true, encoding: .utf8)
        let config = "\(directory)/bridge.yaml"
        try """
        mqtt: { url: "mqtt://127.0.0.1:1883" }
        profiles_dir: profiles
        devices:
          - match: { address: "C4:7C:8D:6A:3E:11" }
            profile: xiaomi_miflora

        """.write(toFile: config, atomically: true, encoding: .utf8)
        let check = try await ChildProcess.run(Paths.bridge, ["check-config", "--config", config], directory: directory)
        #expect(check.termination != .exited(0), "check-config accepted it: \(check.output)")
        #expect(check.termination.isExit, "check-config crashed: \(check.termination)")
        // the 'z' of "<Bz": line 6, column 23 (inside the quotes)
        #expect(check.output.contains("\(directory)/profiles/broken.yaml:6:23:"), "\(check.output)")

        try FileManager.default.removeItem(atPath: "\(directory)/profiles/broken.yaml")
        let good = try await ChildProcess.run(Paths.bridge, ["check-config", "--config", config], directory: directory)
        #expect(good.termination == .exited(0), "\(good.output)")
        #expect(good.output.contains("profiles: 10 shipped"), "\(good.output)")
    }

    @Test("scan names the shipped profile a device fits")
    func scanRecognizes() async throws {
        var options = HarnessOptions()
        options.scenario = Profiles.scenario
        options.startBroker = false
        options.startBridge = false
        try await Harness.with(options) { harness in
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = harness.busAddress
            let scan = try await ChildProcess.run(
                Paths.bridge, ["scan", "--seconds", "3"], environment: environment, directory: harness.directory)
            #expect(scan.termination == .exited(0), "\(scan.termination): \(scan.output)")
            let flora = scan.output.split(separator: "\n").first { $0.hasPrefix(Profiles.miFlora.address) }
            #expect(flora?.contains("profile xiaomi_miflora") == true, "\(scan.output)")
        }
    }
}
