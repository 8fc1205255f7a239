import BridgeBase
/// How an ``MQTTClient`` reaches and talks to its broker.
public struct MQTTConfiguration: Sendable {
    /// The MQTT protocol version spoken on the connection.
    public enum ProtocolVersion: Sendable, Hashable {
        /// MQTT 3.1.1. Message properties (response topic, correlation data) are ignored.
        case v311
        /// MQTT 5.0 (the default).
        case v5
    }

    /// The broker's host name or IP address (an IPv6 address without brackets).
    public var host: String
    /// The broker's TCP port.
    public var port: Int
    /// The MQTT client identifier. Empty lets libmosquitto generate a random one.
    public var clientID: String
    /// The user name sent in CONNECT, if any.
    public var username: String?
    /// The password sent in CONNECT, if any (only used together with ``username``).
    public var password: String?
    /// TLS settings; `nil` for a plain TCP connection. Without a ``TLSSettings/caFile`` the
    /// operating system's CA certificates are trusted.
    public var tls: TLSSettings?
    /// The protocol version; MQTT 5 by default.
    public var protocolVersion: ProtocolVersion = .v5
    /// The keep-alive interval sent in CONNECT (whole seconds, at least 5).
    public var keepAlive: Duration = .seconds(30)
    /// The last will: published by the broker when the connection ends without a DISCONNECT.
    /// Its topic, payload, QoS and retain flag are used.
    public var will: MQTTMessage?
    /// The delay before the first reconnection attempt; it doubles after every failed attempt.
    public var reconnectDelay: Duration = .milliseconds(500)
    /// The upper bound of the reconnection delay.
    public var maxReconnectDelay: Duration = .seconds(30)
    /// The topic filter of the liveness probe, or `nil` for libmosquitto's keep-alive alone. With a filter, the
    /// client sends an UNSUBSCRIBE of it every quarter keep-alive (never subscribe to it) and treats the connection
    /// as lost once no probe sent in the last keep-alive was answered: within one keep-alive of the cut, before
    /// the broker publishes the will (1.5 × keep-alive), where libmosquitto alone notices only after about 2 ×.
    public var probeTopic: String?
    /// Forget, at a connection loss, what was not delivered: the QoS 1/2 messages the broker has not
    /// acknowledged (libmosquitto would send them again after reconnecting) and any publish made while the
    /// connection is down. For a client whose messages are stale once the broker has published its will (a
    /// cluster bridge: another bridge may own its devices by then).
    public var forgetUnsentOnLoss = false

    /// Creates a configuration. Everything but the host and the client identifier has a default:
    /// port 1883, no credentials, no TLS, MQTT 5, 30 s keep-alive, no will, reconnection after
    /// 500 ms doubling up to 30 s, no liveness probe, undelivered QoS 1/2 messages kept across a loss.
    public init(
        host: String,
        port: Int = 1883,
        clientID: String,
        username: String? = nil,
        password: String? = nil,
        tls: TLSSettings? = nil,
        protocolVersion: ProtocolVersion = .v5,
        keepAlive: Duration = .seconds(30),
        will: MQTTMessage? = nil,
        reconnectDelay: Duration = .milliseconds(500),
        maxReconnectDelay: Duration = .seconds(30),
        probeTopic: String? = nil,
        forgetUnsentOnLoss: Bool = false
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.username = username
        self.password = password
        self.tls = tls
        self.protocolVersion = protocolVersion
        self.keepAlive = keepAlive
        self.will = will
        self.reconnectDelay = reconnectDelay
        self.maxReconnectDelay = maxReconnectDelay
        self.probeTopic = probeTopic
        self.forgetUnsentOnLoss = forgetUnsentOnLoss
    }

    /// Creates a configuration from a broker URL: `mqtt://host[:port]` (default port 1883) or
    /// `mqtts://host[:port]` (TLS with the system CAs, default port 8883). IPv6 addresses go in
    /// brackets (`mqtt://[::1]:1883`); an optional `user[:password]@` sets the credentials; a
    /// trailing `/` is allowed, any other path is not.
    ///
    /// - Throws: ``MQTTError`` with code ``MQTTError/Code/invalidURL``.
    public init(url: String, clientID: String) throws(MQTTError) {
        let parsed: BrokerURL
        do {
            parsed = try BrokerURL(parsing: url)
        } catch {
            throw MQTTError(code: .invalidURL, message: "invalid MQTT URL '\(url)': \(error.message)")
        }
        self.init(
            host: parsed.host,
            port: parsed.port,
            clientID: clientID,
            username: parsed.username,
            password: parsed.password,
            tls: parsed.usesTLS ? TLSSettings() : nil
        )
    }

    /// The broker as a URL, `mqtt://host:port` or `mqtts://host:port` (used in log messages).
    public var brokerURL: String {
        let scheme = tls == nil ? "mqtt" : "mqtts"
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(hostPart):\(port)"
    }
}
