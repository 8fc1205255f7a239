import Testing

@testable import BridgeBase

/// Byte-wise substring search (instead of _StringProcessing's).
@Suite struct TextSearchTests {
    @Test func search() {
        #expect("le-connection-abort-by-local".includes("abort-by"))
        #expect(!"Operation failed".includes("att error"))
        #expect("mqtt://host".range(ofText: "://").map { "mqtt://host"[..<$0.lowerBound] } == "mqtt")
        #expect("aab".range(ofText: "ab").map { "aab".distance(from: "aab".startIndex, to: $0.lowerBound) } == 1, "after a partial match")
        #expect("x".includes(""), "the empty text is everywhere")
        #expect(!"ab".includes("abc"))
        #expect("grüße".includes("üß"))
    }

    @Test func replace() {
        #expect("a<b>&c".replacingText("<", with: "&lt;").replacingText(">", with: "&gt;") == "a&lt;b&gt;&c")
        #expect("aaa".replacingText("aa", with: "b") == "ba")
        #expect("abc".replacingText("", with: "x") == "abc")
        #expect("a topic segment".replacingText("a topic segment", with: "a topic") == "a topic")
    }
}
