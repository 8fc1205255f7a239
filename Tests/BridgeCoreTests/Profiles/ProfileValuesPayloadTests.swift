import BridgeCore
import Testing

/// `{base}/{device}/values` payloads, and the one kept for Home Assistant's resend.
@Suite struct ProfileValuesPayloadTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func make() {
        let payload = ProfileValuesPayload.make(profile: "am43_blind", values: ["battery": .integer(81)])
        #expect(Self.text(payload) == #"{"profile":"am43_blind","values":{"battery":81}}"#)
    }

    @Test func keptMergesTheValuesALaterStepLacks() {
        let battery = ProfileValuesPayload.make(profile: "am43_blind", values: ["battery": .integer(81)])
        let position = ProfileValuesPayload.make(profile: "am43_blind", values: ["position": .integer(100)])
        let kept = ProfileValuesPayload.kept(over: battery, position)
        #expect(Self.text(kept) == #"{"profile":"am43_blind","values":{"position":100,"battery":81}}"#)
        // a newer value wins over the kept one
        let newer = ProfileValuesPayload.make(profile: "am43_blind", values: ["battery": .integer(80)])
        #expect(Self.text(ProfileValuesPayload.kept(over: kept, newer)) == #"{"profile":"am43_blind","values":{"battery":80,"position":100}}"#)
    }

    @Test func keptIsTheNewPayloadOtherwise() {
        let flora = ProfileValuesPayload.make(profile: "xiaomi_miflora", values: ["battery": .integer(100)])
        let blind = ProfileValuesPayload.make(profile: "am43_blind", values: ["position": .integer(100)])
        #expect(ProfileValuesPayload.kept(over: flora, blind) == blind, "another profile's values are not merged")
        #expect(ProfileValuesPayload.kept(over: nil, blind) == blind)
        let raw = Array(#"{"raw":"01","value":1}"#.utf8)
        #expect(ProfileValuesPayload.kept(over: raw, Array(#"{"raw":"02","value":2}"#.utf8)) == Array(#"{"raw":"02","value":2}"#.utf8))
        #expect(ProfileValuesPayload.kept(over: blind, raw) == raw)
        #expect(ProfileValuesPayload.kept(over: blind, blind) == blind)
    }
}
