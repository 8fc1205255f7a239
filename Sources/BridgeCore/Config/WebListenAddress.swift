/// `web.listen` (SPEC §14) taken apart: a host (a name, an IPv4 address or a bracketed IPv6 address) and a port.
public struct WebListenAddress: Sendable, Hashable {
    /// The host without brackets (`127.0.0.1`, `::1`, `0.0.0.0`, `localhost`).
    public var host: String
    /// The TCP port, 1–65535.
    public var port: Int

    /// Parses `host:port` or `[v6]:port`; nil when it is not one.
    public init?(_ text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { return nil }
        }
        guard !host.isEmpty, host.allSatisfy({ !$0.isWhitespace && $0 != "/" }),
            let port = Int(portText), (1...65535).contains(port)
        else { return nil }
        self.host = String(host)
        self.port = port
    }

    /// Only this machine can reach it: `localhost`, `127.0.0.0/8`, `::1`.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
