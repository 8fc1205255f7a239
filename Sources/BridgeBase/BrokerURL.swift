/// An MQTT broker address: `mqtt://[user[:password]@]host[:port]` or `mqtts://…` (TLS; `tcp://`
/// and `ssl://` are accepted as their synonyms). The default ports are 1883 and 8883. IPv6 hosts
/// go in brackets: `mqtt://[::1]:1883`. The one parser of the bridge's configuration and of the
/// MQTT client.
public struct BrokerURL: Sendable, Hashable, CustomStringConvertible {
    /// The scheme.
    public enum Scheme: String, Sendable, Hashable {
        /// Plain TCP.
        case mqtt
        /// TLS.
        case mqtts
    }

    /// Why a URL was rejected.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// A human-readable message.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// The scheme.
    public var scheme: Scheme
    /// The host name or address, without brackets for IPv6.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// The user name of `user[:password]@`, if any.
    public var username: String?
    /// The password of `user:password@`, if any.
    public var password: String?

    /// Whether the connection uses TLS.
    public var usesTLS: Bool { scheme == .mqtts }

    /// Creates a URL from its parts.
    public init(scheme: Scheme, host: String, port: Int? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port ?? (scheme == .mqtts ? 8883 : 1883)
    }

    /// Parses `mqtt://host[:port][/]` or `mqtts://host[:port][/]`.
    public init(parsing text: String) throws(ParseError) {
        guard let schemeEnd = text.range(ofText: "://") else {
            throw ParseError(message: "invalid broker URL '\(text)' (expected mqtt://host:port or mqtts://host:port)")
        }
        let schemeText = text[..<schemeEnd.lowerBound].lowercased()
        let aliases = ["tcp": Scheme.mqtt, "ssl": .mqtts]
        guard let scheme = Scheme(rawValue: schemeText) ?? aliases[schemeText] else {
            throw ParseError(
                message: "unsupported URL scheme '\(schemeText)' in '\(text)' (use mqtt:// or mqtts:// for TLS)")
        }
        var rest = text[schemeEnd.upperBound...]
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
            throw ParseError(message: "the broker URL '\(text)' must not have a path, query or fragment")
        }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                username = String(userInfo[..<colon])
                password = String(userInfo[userInfo.index(after: colon)...])
            } else {
                username = String(userInfo)
            }
            guard username?.isEmpty == false else {
                throw ParseError(message: "empty user name in broker URL '\(text)'")
            }
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw ParseError(message: "invalid IPv6 address in broker URL '\(text)' (missing ']')")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ParseError(message: "invalid broker URL '\(text)'") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" }) else {
                throw ParseError(message: "invalid IPv6 address in broker URL '\(text)'")
            }
        } else {
            if let colon = rest.lastIndex(of: ":") {
                host = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            } else {
                host = rest
            }
            guard !host.isEmpty else { throw ParseError(message: "missing host in broker URL '\(text)'") }
            guard host.unicodeScalars.allSatisfy({ Self.isHostScalar($0) }) else {
                throw ParseError(message: "invalid host '\(host)' in broker URL '\(text)'")
            }
        }
        var port: Int? = nil
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw ParseError(message: "invalid port '\(portText)' in broker URL '\(text)' (expected 1-65535)")
            }
            port = value
        }
        self.init(scheme: scheme, host: String(host), port: port)
        self.username = username
        self.password = password
    }

    /// Whether a scalar may appear in a host name.
    public static func isHostScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", ".", "_": return true
        default: return false
        }
    }

    /// `scheme://host:port` (IPv6 hosts in brackets).
    public var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(scheme.rawValue)://\(hostPart):\(port)"
    }
}
