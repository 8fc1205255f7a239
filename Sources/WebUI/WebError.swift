/// Why the page server cannot start or cannot serve a request.
public struct WebError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// `web.listen` is not `host:port`.
        case invalidListen = "invalid_listen"
        /// A non-loopback `web.listen` without `web.auth_token`.
        case tokenRequired = "token_required"
        /// A request body the API cannot take.
        case invalidPayload = "invalid_payload"
        /// No bridge to send a request to.
        case noBridge = "no_bridge"
        /// The broker is not connected: nothing could be published.
        case notConnected = "not_connected"
        /// No answer in time.
        case timeout
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for a person.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
