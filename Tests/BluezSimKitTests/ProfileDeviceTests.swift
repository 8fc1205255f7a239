import BridgeBase
import DBusKit
import Foundation
import Testing

@testable import BluezSimKit

/// The devices of `scripts/sim/profiles.yaml` (issue 31): each answers the sequence its real
/// counterpart needs and refuses a wrong one, through plain BlueZ calls.
@Suite struct ProfileDeviceTests {
    static let scenario: String = {
        let path = ScenarioLoaderTests.simDirectory + "/profiles.yaml"
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? "cannot read \(path)"
    }()

    static let chrc = BlueZNames.gattCharacteristic
    static let miFlora = "C4:7C:8D:6A:3E:11"
    static let lywsd = "A4:C1:38:2E:51:07"
    static let ibbq = "C8:1B:4B:0A:77:01"
    static let radonV1 = "E5:1F:3A:00:01:59"
    static let radonV2 = "D4:2E:5B:00:03:83"
    static let bot = "E1:2B:3C:4D:5E:6F"
    static let lockedBot = "E1:2B:3C:4D:5E:70"
    static let curtain = "E1:2B:3C:4D:5E:71"
    static let blind = "02:4E:A3:C1:00:43"
    static let eq3 = "00:1A:22:0E:3B:51"
    static let wavePlus = "58:93:D8:8B:12:0A"
    static let botWrite = "cba20002-224d-11e6-9fb8-0002a5d5c51b"
    static let botNotify = "cba20003-224d-11e6-9fb8-0002a5d5c51b"

    @Test func miFloraAnswersGarbageUntilTheModeWriteOnEveryConnection() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.miFlora)
            let mode = try await h.characteristicPath(Self.miFlora, "1a00")
            let data = try await h.characteristicPath(Self.miFlora, "1a01")
            let garbage = "aabbccddeeff99887766000000000000"
            let frame = "250100f7260000280e01000000000000"
            #expect(try await h.read(data) == garbage)
            try await h.write(mode, "fdff")  // blink: not the mode
            #expect(try await h.read(data) == garbage)
            try await h.write(mode, "a01f")
            #expect(try await h.read(data) == frame)
            #expect(try await h.read(data) == frame)  // the state holds across reads
            #expect(try await h.read(mode) == "a01f")
            try await h.reconnect(Self.miFlora)
            #expect(try await h.read(data) == garbage)  // reset_on_connect
            #expect(try await h.read(mode) == "0000")
            try await h.write(mode, "a01f", type: "command")  // without response works too
            #expect(try await h.read(data) == frame)
        }
    }

    @Test func lywsd03mmcNotifiesItsLiveFrameOnceSubscribed() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.lywsd)
            let live = try await h.characteristicPath(Self.lywsd, "ebe0ccc1-7a0a-4b0c-8a1a-6ff2997da3a6")
            let battery = try await h.characteristicPath(Self.lywsd, "ebe0ccc4-7a0a-4b0c-8a1a-6ff2997da3a6")
            let recorder = PropertyRecorder(h.client, path: live)
            #expect(try await h.read(battery) == "64")
            #expect(try await h.read(live) == "f8074ad60b")
            // Not writable: bluetoothd finds no procedure; a request sent anyway is refused by the peripheral.
            await #expect(throws: BluezError.notSupported) { try await h.write(live, "00") }
            await #expect(throws: BluezError.att(0x03)) { try await h.write(live, "00", type: "request") }
            try await h.call(live, Self.chrc, "StartNotify")
            try await recorder.wait(for: "Value", .bytes(try Hex.decode("59092b9a0a")))
        }
    }

    @Test func ibbqIgnoresCommandsUntilTheLoginOfThisConnection() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.ibbq)
            let login = try await h.characteristicPath(Self.ibbq, "fff2")
            let settings = try await h.characteristicPath(Self.ibbq, "fff5")
            let results = try await h.characteristicPath(Self.ibbq, "fff1")
            let realtime = try await h.characteristicPath(Self.ibbq, "fff4")
            let probes = PropertyRecorder(h.client, path: realtime)
            let answers = try await h.subscribe(results)
            try await h.call(realtime, Self.chrc, "StartNotify")
            let key = "2107060504030201b8220000000000"
            try await h.write(settings, "0b0100000000")  // before the login: ignored
            try await h.write(settings, "082400000000")
            try await h.write(login, "200706050403020101010101000000")  // the app's other key: no login
            try await h.write(settings, "0b0100000000")
            try await h.write(login, key)
            try await h.write(settings, "0b0100000000")
            try await probes.wait(for: "Value", .bytes(try Hex.decode("c800d200")))
            try await h.write(settings, "082400000000")
            try await answers.wait(for: "Value", .bytes(try Hex.decode("24061a9619")))
            #expect(probes.values("Value").count == 1)
            #expect(answers.values("Value").count == 1)
            try await h.reconnect(Self.ibbq)
            try await h.write(settings, "0b0100000000")  // a new connection: logged out again
            try await h.write(login, key, type: "command")
            try await h.write(settings, "0b0100000000", type: "command")
            try await probes.wait(for: "Value", .bytes(try Hex.decode("c800d200")), count: 2)
            #expect(probes.values("Value").count == 2)
        }
    }

    @Test func radonEyeAnswersCommandsWithoutResponseOnly() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.radonV1)
            let command = try await h.characteristicPath(Self.radonV1, "00001524-1212-efde-1523-785feabcd123")
            let status = try await h.characteristicPath(Self.radonV1, "00001525-1212-efde-1523-785feabcd123")
            let recorder = try await h.subscribe(status)
            await #expect(throws: BluezError.att(0x03)) { try await h.write(command, "50", type: "request") }
            try await h.write(command, "51", type: "command")
            try await h.write(command, "50", type: "command")
            let radon = "5010e17a143ff628bc3f00000000010004000000"
            try await recorder.wait(for: "Value", .bytes(try Hex.decode(radon)))
            #expect(recorder.values("Value") == [.bytes(try Hex.decode("510e0200c12d00003e40080050b10c4004000000")),
                                                 .bytes(try Hex.decode(radon))])
            #expect(try await h.read(status) == radon)  // readable after the notification

            try await h.connect(Self.radonV2)
            let command2 = try await h.characteristicPath(Self.radonV2, "1524")
            let status2 = try await h.characteristicPath(Self.radonV2, "1525")
            let recorder2 = try await h.subscribe(status2)
            try await h.write(command2, "40", type: "command")
            try await eventually("the 68-byte status frame") { recorder2.values("Value").count == 1 }
            guard case .bytes(let frame)? = recorder2.values("Value").first else { throw TestFailure("no frame") }
            #expect(frame.count == 68)
            #expect(Array(frame.prefix(2)) == [0x40, 0x42])
        }
    }

    @Test func airthingsWavePlusIsReadAndIndicatesItsBatteryOn6d() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.wavePlus)
            let values = try await h.characteristicPath(Self.wavePlus, "b42e2a68-ade7-11e4-89d3-123b93f75cba")
            let command = try await h.characteristicPath(Self.wavePlus, "b42e2d06-ade7-11e4-89d3-123b93f75cba")
            #expect(try await h.read(values) == "01380d800b002200bd094cc31d036c0000007d05")
            let recorder = try await h.subscribe(command)
            try await h.write(command, "6e")  // another command: no answer
            try await h.write(command, "6d")
            let battery = "6d00600c04000100008211ff00000000c04c20001f3560007006b80b0900"
            try await recorder.wait(for: "Value", .bytes(try Hex.decode(battery)))
            #expect(recorder.values("Value") == [.bytes(try Hex.decode(battery))])
        }
    }

    @Test func switchBotBotAnswersOnlyASubscriberAndTellsAPasswordWhenItHasNone() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.bot)
            let request = try await h.characteristicPath(Self.bot, Self.botWrite)
            let answer = try await h.characteristicPath(Self.bot, Self.botNotify)
            let recorder = PropertyRecorder(h.client, path: answer)
            try await h.write(request, "570100")  // nobody subscribed: the answer is dropped
            try await h.call(answer, Self.chrc, "StartNotify")
            try await h.write(request, "570100", type: "command")
            try await h.write(request, "5701")
            try await h.write(request, "57119be3e0a300")  // a password the device does not have
            try await h.write(request, "5702")
            try await recorder.wait(for: "Value", .bytes(try Hex.decode("01642c64000000a10000004800")))
            #expect(try recorder.values("Value") == ["01ff00", "01ff00", "08", "01642c64000000a10000004800"].map {
                DBusValue.bytes(try Hex.decode($0))
            })
        }
    }

    @Test func switchBotBotWithAPasswordWantsItsCrcInEveryRequest() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.lockedBot)
            let request = try await h.characteristicPath(Self.lockedBot, Self.botWrite)
            let answer = try await h.characteristicPath(Self.lockedBot, Self.botNotify)
            let recorder = try await h.subscribe(answer)
            try await h.write(request, "570100")          // no password → 07
            try await h.write(request, "5711ece4d03500")  // CRC-32 of "1235" → 09
            try await h.write(request, "57119be3e0a300")  // CRC-32 of "1234" → ok
            try await h.write(request, "57119be3e0a3", type: "command")
            try await h.write(request, "5712ece4d035")
            try await h.write(request, "57129be3e0a3")
            try await recorder.wait(for: "Value", .bytes(try Hex.decode("01642c64000000a10000004800")))
            #expect(try recorder.values("Value") == ["07", "09", "01ff00", "01ff00", "09", "01642c64000000a10000004800"].map {
                DBusValue.bytes(try Hex.decode($0))
            })
        }
    }

    @Test func switchBotBotTurnsOnAndOffAndKnowsItsPasswordInThem() async throws {
        try await SimHarness.run(Self.scenario) { h in
            for (address, on, off, expected) in [
                (Self.bot, "570101", "570102", ["01ff00", "01ff00"]),
                (Self.lockedBot, "57119be3e0a301", "57119be3e0a302", ["01ff00", "01ff00"]),
                (Self.lockedBot, "570101", "5711ece4d03502", ["07", "09"]),
            ] {
                try await h.connect(address)
                let request = try await h.characteristicPath(address, Self.botWrite)
                let recorder = try await h.subscribe(try await h.characteristicPath(address, Self.botNotify))
                try await h.write(request, on)
                try await h.write(request, off)
                try await recorder.wait(for: "Value", .bytes(try Hex.decode(expected[1])))
                #expect(try recorder.values("Value").suffix(2) == expected.map { DBusValue.bytes(try Hex.decode($0)) })
                try await h.call(h.devicePath(address), BlueZNames.device, "Disconnect")
            }
        }
    }

    @Test func switchBotCurtainAnswersItsSettingRequestsAndBasicInfo() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.curtain)
            let request = try await h.characteristicPath(Self.curtain, Self.botWrite)
            let recorder = try await h.subscribe(try await h.characteristicPath(Self.curtain, Self.botNotify))
            try await h.write(request, "570f4501010100")  // open
            try await h.write(request, "570f450100ff")    // stop
            try await h.write(request, "571f9be3e0a34501010164")  // a password it does not have
            try await h.write(request, "570f4501050000")  // not a request it knows: no answer
            try await h.write(request, "5702")
            try await recorder.wait(for: "Value", .bytes(try Hex.decode("015a2c0100043200")))
            #expect(try recorder.values("Value") == ["013200", "013200", "08", "015a2c0100043200"].map {
                DBusValue.bytes(try Hex.decode($0))
            })
        }
    }

    @Test func am43WantsItsPinAndAValidChecksumOnEveryConnection() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.blind)
            let fe51 = try await h.characteristicPath(Self.blind, "fe51")
            let recorder = try await h.subscribe(fe51)
            try await h.write(fe51, "00ff00009a0d0164f2", type: "command")  // close before the PIN → NACK
            try await h.write(fe51, "00ff00009a170222b914")               // PIN 8889 → NACK
            try await h.write(fe51, "00ff00009a170222b815")               // PIN 8888 → ACK
            try await h.write(fe51, "00ff00009a0d0164f2")                 // close → ACK
            try await h.write(fe51, "00ff00009a0d0164f3")                 // bad checksum → NACK
            try await h.write(fe51, "00ff00009a0a01cc5d")                 // stop → ACK
            try await h.write(fe51, "00ff00009aa2010138")                 // battery
            try await h.write(fe51, "00ff00009aa701013d")                 // position: three frames
            let last = "9aa9100000001100000000010000110000000022"
            try await recorder.wait(for: "Value", .bytes(try Hex.decode(last)))
            #expect(try recorder.values("Value") == [
                "9a0d01a533", "9a1701a529", "9a17015ad6", "9a0d015acc", "9a0d01a533", "9a0a015acb",
                "9aa20500000000516c", "9aa7070e32000000003036", "9aa80a01007f091e01647f11005a", last,
            ].map { DBusValue.bytes(try Hex.decode($0)) })
            try await h.reconnect(Self.blind)
            try await h.write(fe51, "00ff00009a0a01cc5d")  // a new connection needs the PIN again
            try await recorder.wait(for: "Value", .bytes(try Hex.decode("9a0a01a534")))
        }
    }

    @Test func eq3AnswersTheTimeWriteWithItsStatus() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.eq3)
            let command = try await h.characteristicPath(Self.eq3, "3fa4585a-ce4a-3bad-db4b-b8df8179ea09")
            let status = try await h.characteristicPath(Self.eq3, "d0e8434d-cd29-0996-af41-6c90f4e0eb2a")
            let recorder = try await h.subscribe(status)
            try await h.write(command, "03110208151f05")  // Heckie75's captured time write
            try await h.write(command, "412d")
            try await recorder.wait(for: "Value", .bytes(try Hex.decode("02010000042d")))
            #expect(try recorder.values("Value") == [.bytes(Hex.decode("02010000042a")), .bytes(Hex.decode("02010000042d"))])
            #expect(try await h.read(command) == "412d")  // reads back the last command
        }
    }
}
