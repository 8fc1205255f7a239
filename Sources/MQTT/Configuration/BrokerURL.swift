/// The parts of an `mqtt://` or `mqtts://` broker URL (see ``MQTTConfiguration/init(url:clientID:)``).
struct BrokerURL: Equatable, Sendable {
    var host: String
    var port: Int
    var tls: Bool
    var username: String?
    var password: String?

    /// Parses `scheme://[user[:password]@]host[:port][/]`.
    init(parsing url: String) throws(MQTTError) {
        func invalid(_ why: String) -> MQTTError {
            MQTTError(code: .invalidURL, message: "invalid MQTT URL '\(url)': \(why)")
        }
        var rest = Substring(url)
        guard let separator = rest.firstRange(of: "://") else {
            throw invalid("expected mqtt://host[:port] or mqtts://host[:port]")
        }
        switch rest[..<separator.lowerBound].lowercased() {
        case "mqtt", "tcp": tls = false
        case "mqtts", "ssl": tls = true
        default: throw invalid("unsupported scheme, expected mqtt or mqtts")
        }
        rest = rest[separator.upperBound...]
        if rest.hasSuffix("/") {
            rest = rest.dropLast()
        }
        if rest.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            throw invalid("a path, query or fragment is not allowed")
        }
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                username = String(userInfo[..<colon])
                password = String(userInfo[userInfo.index(after: colon)...])
            } else {
                username = String(userInfo)
            }
            if username?.isEmpty ?? true {
                throw invalid("empty user name")
            }
        }
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw invalid("unterminated IPv6 address")
            }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else {
            let colons = rest.filter { $0 == ":" }.count
            if colons > 1 {
                throw invalid("IPv6 addresses must be written in brackets")
            }
            if let colon = rest.firstIndex(of: ":") {
                host = String(rest[..<colon])
                portText = rest[rest.index(after: colon)...]
            } else {
                host = String(rest)
            }
        }
        if host.isEmpty {
            throw invalid("missing host")
        }
        if host.contains(where: { $0.isWhitespace }) {
            throw invalid("the host contains white space")
        }
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(portText), (1...65535).contains(value)
            else {
                throw invalid("the port must be a number from 1 to 65535")
            }
            port = value
        } else {
            port = tls ? 8883 : 1883
        }
    }
}
