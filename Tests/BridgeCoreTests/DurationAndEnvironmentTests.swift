import ConfigLoader
import Testing

@testable import BridgeCore

@Suite struct DurationSyntaxTests {
    @Test(arguments: [
        ("500ms", Duration.milliseconds(500)),
        ("10s", .seconds(10)),
        ("5m", .seconds(300)),
        ("1h", .seconds(3600)),
        ("1m30s", .seconds(90)),
        ("1h2m3s4ms", .milliseconds(3_723_004)),
        ("1.5s", .milliseconds(1500)),
        ("0.25h", .seconds(900)),
        ("0s", .zero),
        ("250us", .microseconds(250)),
        ("250µs", .microseconds(250)),
        ("7ns", .nanoseconds(7)),
    ])
    func parses(text: String, expected: Duration) throws {
        #expect(try DurationSyntax.parse(text) == expected)
    }

    @Test(arguments: [
        ("10", "a duration needs a unit: write 10s (or 10ms, 10m, 10h)"),
        ("", "empty duration (expected e.g. 500ms, 10s, 5m, 1h)"),
        ("s", "invalid duration 's' (expected e.g. 500ms, 10s, 5m, 1h)"),
        ("10x", "unknown unit 'x' in duration '10x' (use ms, s, m or h)"),
        ("1m30", "missing unit after '1m30' in duration '1m30'"),
        ("1.s", "invalid duration '1.s' (expected e.g. 500ms, 1.5s, 10s, 5m, 1h)"),
        ("-5s", "invalid duration '-5s' (expected e.g. 500ms, 10s, 5m, 1h)"),
        ("99999999999999h", "duration '99999999999999h' is too large"),
    ])
    func rejects(text: String, message: String) {
        #expect(throws: DurationSyntax.Error(message: message)) { try DurationSyntax.parse(text) }
    }

    @Test func formats() throws {
        #expect(DurationSyntax.format(.zero) == "0s")
        #expect(DurationSyntax.format(.milliseconds(500)) == "500ms")
        #expect(DurationSyntax.format(.seconds(90)) == "1m30s")
        #expect(DurationSyntax.format(.seconds(3600)) == "1h")
        #expect(DurationSyntax.format(.milliseconds(1500)) == "1s500ms")
        #expect(DurationSyntax.format(.seconds(-2)) == "-2s")
        for duration: Duration in [.nanoseconds(1), .microseconds(1001), .seconds(86_400), .milliseconds(3_723_004)] {
            #expect(try DurationSyntax.parse(DurationSyntax.format(duration)) == duration)
        }
    }

    @Test func conversions() {
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.milliseconds(1500).inMilliseconds == 1500)
        #expect(Duration.seconds(Int64.max).inMilliseconds == .max)
    }
}

@Suite struct EnvironmentExpansionTests {
    let environment = ["A": "alpha", "EMPTY": "", "N": "42"]

    func expand(_ text: String) throws -> String {
        try EnvironmentExpansion.expand(text, environment: environment)
    }

    @Test func expands() throws {
        #expect(try expand("plain") == "plain")
        #expect(try expand("${A}") == "alpha")
        #expect(try expand("x-${A}-${N}") == "x-alpha-42")
        #expect(try expand("${MISSING:-fallback}") == "fallback")
        #expect(try expand("${EMPTY:-fallback}") == "fallback")
        #expect(try expand("${EMPTY-fallback}") == "")
        #expect(try expand("${MISSING-fallback}") == "fallback")
        #expect(try expand("${A:-fallback}") == "alpha")
        #expect(try expand("${MISSING:-}") == "")
        #expect(try expand("${MISSING:-a b:c}") == "a b:c")
        #expect(try expand("$A $ ${EMPTY}$") == "$A $ $")
        #expect(try expand("$${A}") == "${A}")
        #expect(try expand("é${A}😀") == "éalpha😀")
    }

    @Test func reportsProblemsWithOffsets() {
        #expect(throws: EnvironmentExpansion.Error(
            offset: 3, message: "environment variable 'MISSING' is not set (use ${MISSING:-default} for a default)",
            isUndefinedVariable: true)) { try expand("ab-${MISSING}") }
        #expect(throws: EnvironmentExpansion.Error(
            offset: 1, message: "unterminated '${' (expected '}')", isUndefinedVariable: false)) { try expand("a${A") }
        #expect(throws: EnvironmentExpansion.Error.self) { try expand("${}") }
        #expect(throws: EnvironmentExpansion.Error.self) { try expand("${1A}") }
        #expect(throws: EnvironmentExpansion.Error.self) { try expand("${A:x}") }
    }
}

@Suite struct NamePatternTests {
    @Test func globMatching() {
        #expect(NamePattern("Polar H10*").matches("Polar H10 A1B2C3D4"))
        #expect(NamePattern("Polar H10*").matches("Polar H10"))
        #expect(!NamePattern("Polar H10*").matches("polar H10"))
        #expect(NamePattern("*sensor*").matches("my sensor 1"))
        #expect(NamePattern("a*b*c").matches("aXXbYYc"))
        #expect(!NamePattern("a*b*c").matches("aXXbYY"))
        #expect(NamePattern("T?ermo").matches("Thermo"))
        #expect(NamePattern("exact").matches("exact"))
        #expect(!NamePattern("exact").matches("exactly"))
        #expect(NamePattern("*").matches(""))
        #expect(NamePattern("exact").isLiteral)
        #expect(!NamePattern("ex*").isLiteral)
        // Pathological patterns stay fast (no exponential backtracking).
        #expect(!NamePattern(String(repeating: "*a", count: 30) + "b").matches(String(repeating: "a", count: 200)))
    }
}

@Suite struct BrokerURLTests {
    @Test func parses() throws {
        #expect(try BrokerURL(parsing: "mqtt://localhost") == BrokerURL(scheme: .mqtt, host: "localhost", port: 1883))
        #expect(try BrokerURL(parsing: "MQTTS://broker:8884/") == BrokerURL(scheme: .mqtts, host: "broker", port: 8884))
        #expect(try BrokerURL(parsing: "mqtt://[fe80::1]:1884").host == "fe80::1")
        #expect(try BrokerURL(parsing: "mqtt://[::1]").description == "mqtt://[::1]:1883")
        #expect(try BrokerURL(parsing: "mqtts://10.0.0.1").usesTLS)
        let withUser = try BrokerURL(parsing: "ssl://u:p:q@h")
        #expect(withUser.usesTLS && withUser.username == "u" && withUser.password == "p:q")
    }

    @Test func theConfigurationTakesNoCredentialsInTheURL() {
        #expect(throws: ConfigError.self) {
            try BridgeConfig.parse(yaml: "mqtt: { url: \"mqtt://u:p@h\" }", fileName: "b.yaml", environment: [:], hostName: "h")
        }
        do {
            _ = try BridgeConfig.parse(yaml: "mqtt: { url: \"mqtt://u:p@h\" }", fileName: "b.yaml", environment: [:], hostName: "h")
        } catch {
            #expect("\(error)" == "b.yaml:1:14: put credentials in mqtt.username and mqtt.password, not in the URL")
        }
    }

    @Test(arguments: ["ws://h", "mqtt://", "mqtt://h:0", "mqtt://h:x", "mqtt://@h", "mqtt://h/path", "mqtt://h h", "mqtt://[::1"])
    func rejects(text: String) {
        #expect(throws: BrokerURL.ParseError.self) { try BrokerURL(parsing: text) }
    }
}
