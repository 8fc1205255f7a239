extension BridgeConfig {
    /// The `mqtt` section.
    public struct MQTT: Sendable, Hashable {
        /// `url` (required): `mqtt://host:port` or `mqtts://host:port`.
        public var url: BrokerURL
        /// `base_topic`, default `"ble"`. May have several levels (`home/ble`).
        public var baseTopic: String
        /// `client_id`, default `ble-mqtt-bridge-<hostname>`.
        public var clientID: String
        /// `username`.
        public var username: String?
        /// `password`.
        public var password: String?
        /// `tls`: certificate files, used only with an `mqtts://` URL (the scheme alone turns TLS on).
        /// Relative paths are resolved against the configuration file's directory by
        /// `BridgeConfig.load(path:environment:hostName:)` (ConfigLoader).
        public var tls: TLSSettings?
        /// `protocol`: `"5"` (default) or `"3.1.1"`.
        public var protocolVersion: ProtocolVersion
        /// `keepalive`, default 60 s.
        public var keepAlive: Duration

        /// Creates the section.
        public init(
            url: BrokerURL,
            baseTopic: String = "ble",
            clientID: String,
            username: String? = nil,
            password: String? = nil,
            tls: TLSSettings? = nil,
            protocolVersion: ProtocolVersion = .v5,
            keepAlive: Duration = .seconds(60)
        ) {
            self.url = url
            self.baseTopic = baseTopic
            self.clientID = clientID
            self.username = username
            self.password = password
            self.tls = tls
            self.protocolVersion = protocolVersion
            self.keepAlive = keepAlive
        }
    }

    /// The MQTT protocol version (`mqtt.protocol`).
    public enum ProtocolVersion: String, Sendable, Hashable, CaseIterable {
        /// MQTT 5.
        case v5 = "5"
        /// MQTT 3.1.1.
        case v311 = "3.1.1"
    }
}
