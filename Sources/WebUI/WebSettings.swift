import BridgeCore

/// What the page server needs of bridge.yaml (SPEC §14): the base topic, the cluster switch, the listen
/// address, the token, and how long a command may take.
public struct WebSettings: Sendable {
    /// `mqtt.base_topic`.
    public var baseTopic: String
    /// `cluster.enabled`: the bridges' own topics are under `{base}/bridges/{id}/`.
    public var cluster: Bool
    /// Where the server listens.
    public var listen: WebListenAddress
    /// `web.auth_token`; `nil`: no authentication (loopback only).
    public var authToken: String?
    /// How long `POST /api/request` waits for an answer (`scan` adds its seconds).
    public var requestTimeout: Duration = .seconds(10)
    /// How long `POST /api/command` waits for the result: the bridge's `commands.timeout` plus a margin.
    public var commandTimeout: Duration = .seconds(12)
    /// The most topics the message store keeps.
    public var maxTopics = MessageStore.defaultCapacity
    /// The most frames one live page may have waiting before it is dropped.
    public var eventBuffer = EventQueue.defaultCapacity

    /// Creates settings.
    public init(baseTopic: String, cluster: Bool, listen: WebListenAddress, authToken: String?) {
        self.baseTopic = baseTopic
        self.cluster = cluster
        self.listen = listen
        self.authToken = authToken
    }

    /// The settings of a loaded configuration, `listen` (from `--listen`) overriding `web.listen`.
    ///
    /// - Throws: ``WebError`` `invalidListen` for an address that is not `host:port`, `tokenRequired` for a
    ///   non-loopback address without `web.auth_token` (anyone on the network could write to devices).
    public init(config: BridgeConfig, listen override: String? = nil) throws(WebError) {
        let text = override ?? config.web.listen
        guard let address = WebListenAddress(text) else {
            throw WebError(.invalidListen, "invalid listen address '\(text)': expected host:port, e.g. 127.0.0.1:8099")
        }
        let token = config.web.authToken.flatMap { $0.isEmpty ? nil : $0 }
        if !address.isLoopback, token == nil {
            throw WebError(
                .tokenRequired,
                "listen address \(text) is not a loopback address: set web.auth_token in the configuration "
                    + "(e.g. auth_token: ${WEB_TOKEN}) or listen on 127.0.0.1")
        }
        self.init(baseTopic: config.mqtt.baseTopic, cluster: config.cluster.enabled, listen: address, authToken: token)
        commandTimeout = config.commands.timeout + .seconds(2)
    }

    /// `http://host:port` (IPv6 in brackets), as the server announces itself.
    public var url: String {
        let host = listen.host.contains(":") ? "[\(listen.host)]" : listen.host
        return "http://\(host):\(listen.port)"
    }
}
