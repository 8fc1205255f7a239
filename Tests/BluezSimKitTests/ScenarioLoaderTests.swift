import Testing

@testable import BluezSimKit

/// bluez-sim's scenarios, read with YAMLKit (libyaml).
@Suite struct ScenarioLoaderTests {
    static let simDirectory: String = {
        let file = #filePath
        let root = file.split(separator: "/").dropLast(3).joined(separator: "/")
        return "/" + root + "/scripts/sim"
    }()

    @Test(arguments: ["demo", "commands", "bench", "soak", "realbluez", "policies", "families", "profiles"])
    func theRepositoryScenariosLoad(name: String) throws {
        let scenario = try ScenarioLoader.load(path: "\(Self.simDirectory)/\(name).yaml")
        #expect(!scenario.devices.isEmpty, "\(name): no devices")
    }

    @Test func valuesAndTimings() throws {
        let scenario = try ScenarioLoader.parse("""
            settings: { connect_delay: 100ms }
            devices:
              - address: "c8:12:34:56:78:9a"
                name: Strap
                services:
                  - uuid: "180D"
                    characteristics:
                      - { uuid: "2a38", flags: [read], value: "01 02" }
                      - { uuid: "2a39", flags: [write], value: [3, 0x04] }
            """)
        #expect(scenario.settings.connectDelay == .milliseconds(100))
        let device = try #require(scenario.devices.first)
        #expect(device.name == "Strap")
        let service = try #require(device.services.first)
        #expect(service.uuid == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(service.characteristics.map(\.value) == [[1, 2], [3, 4]])
    }

    @Test func acquireNotifyKey() throws {
        let scenario = try ScenarioLoader.parse("""
            devices:
              - address: "c8:12:34:56:78:9a"
                services:
                  - uuid: "180D"
                    characteristics:
                      - { uuid: "2a37", flags: [notify] }
                      - { uuid: "2a38", flags: [notify], acquire_notify: false }
            """)
        let characteristics = try #require(scenario.devices.first?.services.first?.characteristics)
        #expect(characteristics.map(\.acquireNotify) == [true, false])
        #expect(throws: ScenarioError.self) {
            try ScenarioLoader.parse("""
                devices:
                  - address: "c8:12:34:56:78:9a"
                    services: [{ uuid: "180D", characteristics: [{ uuid: "2a37", flags: [notify], acquire_notify: maybe }] }]
                """)
        }
    }

    @Test func errorsHaveTheirPosition() {
        func failure(_ yaml: String) -> String {
            do {
                _ = try ScenarioLoader.parse(yaml, file: "s.yaml")
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(failure("devices:\n  - address: \"C8:12:34:56:78:9A\"\n    colour: red\n").hasPrefix("s.yaml:3:5: unknown key colour"))
        #expect(failure("devices:\n  - address: \"C8:12:34:56:78:9A\"\n    services:\n      - uuid: xyz\n").hasPrefix("s.yaml:4:15: expected a UUID"))
        #expect(failure("devices: [\n").hasPrefix("s.yaml:2:1: "))
        #expect(failure("") == "s.yaml: empty scenario")
    }
}
