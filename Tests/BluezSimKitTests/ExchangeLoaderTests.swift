import Testing

@testable import BluezSimKit

/// The scenario key `exchanges`: byte patterns, checksums, rule order and state, and the load errors
/// with their position.
@Suite struct ExchangeLoaderTests {
    static let device = """
        devices:
          - address: "c8:12:34:56:78:9a"
            services:
              - uuid: "fe50"
                characteristics:
                  - { uuid: "fe51", flags: [write, notify] }
                  - { uuid: "fe52", flags: [read] }

        """

    func failure(_ exchanges: String) -> String {
        do {
            _ = try ScenarioLoader.parse(Self.device + exchanges, file: "s.yaml")
            return "loaded"
        } catch {
            return error.description
        }
    }

    @Test func patternsMatchTheWholeValueWithWildcards() throws {
        let p = try #require(BytePattern("57 11 ........ 00"))
        #expect(p.bytes.count == 7)
        #expect(p.matches([0x57, 0x11, 0x9b, 0xe3, 0xe0, 0xa3, 0x00]))
        #expect(!p.matches([0x57, 0x11, 0x9b, 0xe3, 0xe0, 0xa3, 0x01]))
        #expect(!p.matches([0x57, 0x11, 0x9b, 0xe3, 0xe0, 0xa3]))            // shorter
        #expect(!p.matches([0x57, 0x11, 0x9b, 0xe3, 0xe0, 0xa3, 0x00, 0x00]))  // longer: no prefix match
        #expect(p.description == "5711........00")
        #expect(BytePattern("5") == nil)
        #expect(BytePattern("5g") == nil)
        #expect(BytePattern(".5") == nil)
        #expect(BytePattern("+1") == nil)
        #expect(BytePattern("")?.matches([]) == true)
    }

    @Test func xorChecksumCoversTheBytesFromItsStart() {
        let fromFrame = FrameChecksum(kind: .xor8, from: 4)
        #expect(fromFrame.isValid([0x00, 0xff, 0x00, 0x00, 0x9a, 0x0d, 0x01, 0x64, 0xf2]))   // captured close
        #expect(!fromFrame.isValid([0x00, 0xff, 0x00, 0x00, 0x9a, 0x0d, 0x01, 0x64, 0xf3]))
        #expect(!fromFrame.isValid([0x00, 0xff, 0x00, 0x00]))
        #expect(FrameChecksum(kind: .xor8).isValid([0x9a, 0x0d, 0x01, 0x5a, 0xcc]))
    }

    @Test func rulesLoadInOrderWithStateAndEffects() throws {
        let scenario = try ScenarioLoader.parse(Self.device + """
                exchanges:
                  reset_on_connect: true
                  initial_state: locked
                  rules:
                    - when: { write: { characteristic: "fe51", value: "01.." }, state: locked }
                      then:
                        - notify: { characteristic: "fe51", value: "5a" }
                        - set: { characteristic: "fe52", value: "0102" }
                        - state: open
                    - when: { write: { characteristic: "fe51", value: "9a0d01....", checksum: xor8 } }
                      then: [{ error: 0x80 }]
                    - when: { write: { characteristic: "fe51" } }
            """)
        let ex = try #require(scenario.devices.first?.exchanges)
        #expect(ex.resetOnConnect)
        #expect(ex.initialState == "locked")
        #expect(ex.rules.count == 3)
        let fe51 = "0000fe51-0000-1000-8000-00805f9b34fb"
        #expect(ex.rule(characteristic: fe51, value: [0x01, 0x07], state: "locked")?.effects.count == 3)
        // Not in state `locked`: the catch-all third rule.
        #expect(ex.rule(characteristic: fe51, value: [0x01, 0x07], state: "open")?.effects.isEmpty == true)
        #expect(ex.rule(characteristic: fe51, value: [0x9a, 0x0d, 0x01, 0x5a, 0xcc], state: "open")?.error != nil)
        #expect(ex.rule(characteristic: fe51, value: [0x9a, 0x0d, 0x01, 0x5a, 0xcd], state: "open")?.error == nil)
        #expect(ex.rule(characteristic: "0000fe52-0000-1000-8000-00805f9b34fb", value: [], state: "open") == nil)
        #expect(ex.touchedCharacteristics == [fe51, "0000fe52-0000-1000-8000-00805f9b34fb"])
        // The list form: no reset, the default initial state.
        let list = try ScenarioLoader.parse(Self.device + """
                exchanges:
                  - when: { write: { characteristic: "fe51", value: "01" } }
                    then: [{ notify: { characteristic: "fe51", value: "02" } }]
            """)
        let plain = try #require(list.devices.first?.exchanges)
        #expect(!plain.resetOnConnect)
        #expect(plain.initialState == "initial")
    }

    @Test func badRulesAreRefusedWithTheirPosition() {
        #expect(failure("""
                exchanges:
                  - when: { write: { characteristic: "fe59" } }
            """).hasPrefix("s.yaml:9:42: no characteristic 0000fe59-0000-1000-8000-00805f9b34fb in this device's services"))
        #expect(failure("""
                exchanges:
                  - when: { write: { characteristic: "fe51", value: "5711..0" } }
            """).hasPrefix("s.yaml:9:57: expected a hex pattern"))
        #expect(failure("""
                exchanges:
                  - when: { write: { characteristic: "fe51" } }
                    then: [{ reply: { characteristic: "fe51", value: "01" } }]
            """).hasPrefix("s.yaml:10:18: unknown key reply in effect"))
        #expect(failure("""
                exchanges:
                  - when: { write: { characteristic: "fe51" } }
                    then: [{ notify: { characteristic: "fe52", value: "01" } }]
            """).hasPrefix("s.yaml:10:44: characteristic 0000fe52-0000-1000-8000-00805f9b34fb neither notifies nor indicates"))
        #expect(failure("""
                exchanges:
                  - when: { write: { characteristic: "fe52" } }
            """).hasPrefix("s.yaml:9:42: characteristic 0000fe52-0000-1000-8000-00805f9b34fb cannot be written"))
        #expect(failure("""
                exchanges:
                  - when: { write: { characteristic: "fe51" } }
                    then: [{ set: { characteristic: "fe52", value: "zz" } }]
            """).hasPrefix("s.yaml:10:56: expected hex bytes"))
        #expect(failure("""
                exchanges:
                  - when: { write: { characteristic: "fe51", checksum: crc16 } }
            """).hasPrefix("s.yaml:9:60: unknown checksum crc16"))
        #expect(failure("""
                exchanges:
                  - when: { write: { characteristic: "fe51" } }
                    then: [{ error: "no such" }]
            """).hasPrefix("s.yaml:10:25: expected an error name"))
        #expect(failure("""
                exchanges:
                  - when: { write: { characteristic: "fe51" } }
                    then: [{ state: "a b" }]
            """).hasPrefix("s.yaml:10:25: a state name"))
        #expect(failure("""
                exchanges:
                  - then: []
            """).hasPrefix("s.yaml:9:9: an exchange rule needs when"))
        #expect(failure("""
                exchanges: { reset_on_connect: true }
            """).hasPrefix("s.yaml:8:16: exchanges needs rules"))
    }

    @Test func aCharacteristicInTwoServicesIsAmbiguous() {
        let yaml = """
            devices:
              - address: "c8:12:34:56:78:9a"
                services:
                  - { uuid: "fe50", characteristics: [{ uuid: "fe51", flags: [write] }] }
                  - { uuid: "fe60", characteristics: [{ uuid: "fe51", flags: [write] }] }
                exchanges:
                  - when: { write: { characteristic: "fe51" } }
            """
        #expect(throws: ScenarioError.self) { try ScenarioLoader.parse(yaml) }
    }
}
