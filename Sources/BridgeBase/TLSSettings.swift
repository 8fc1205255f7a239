/// The TLS files of a broker connection: `mqtt.tls` in `bridge.yaml` and the TLS of an MQTT
/// client configuration are this one value. Whether TLS is used at all is the URL's scheme
/// (`mqtts://`); these only name the files. Relative paths are resolved by whoever loads them
/// (the configuration loader, against the file's directory).
public struct TLSSettings: Sendable, Hashable {
    /// `ca_file`: PEM file with the CA certificate(s) that sign the broker's certificate; `nil`
    /// trusts the system's CA store.
    public var caFile: String?
    /// `cert_file`: PEM file with the client certificate, for brokers that require client
    /// authentication (together with ``keyFile``).
    public var certFile: String?
    /// `key_file`: PEM file with the client certificate's private key (unencrypted; together
    /// with ``certFile``).
    public var keyFile: String?

    /// Creates TLS settings; all files are optional.
    public init(caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
    }
}
