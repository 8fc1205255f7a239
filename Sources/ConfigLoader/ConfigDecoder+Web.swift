import BridgeCore

/// The `web` section (SPEC §14): the page's listen address and token.
extension ConfigDecoder {
    /// `web`: `listen` as `host:port` (`[v6]:port`), `auth_token`; a non-loopback `listen` without `auth_token` is an
    /// error (the page would let anyone on the network write to devices).
    func decodeWeb(_ value: Located) throws(ConfigError) -> BridgeConfig.Web {
        let fields = try mapping(value, known: ConfigKeys.web)
        var web = BridgeConfig.Web()
        if let node = fields("auth_token") {
            let token = try string(node)
            if !token.isEmpty { web.authToken = token }
        }
        if let node = fields("listen") {
            let text = try string(node)
            guard let address = WebListenAddress(text) else {
                throw error(
                    .invalidValue,
                    "invalid address '\(text)' for 'web.listen': expected host:port, e.g. 127.0.0.1:8099 or [::1]:8099",
                    at: node.mark)
            }
            if !address.isLoopback, web.authToken == nil {
                throw error(
                    .missingKey,
                    "'web.listen' \(text) is not a loopback address: set 'web.auth_token' (e.g. auth_token: ${WEB_TOKEN})",
                    at: node.mark)
            }
            web.listen = text
        }
        return web
    }
}
