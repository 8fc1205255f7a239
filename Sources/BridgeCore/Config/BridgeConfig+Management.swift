extension BridgeConfig {
    /// The `web` section (SPEC §14): where the bridge's page (`ble-mqtt-bridge web`, its own process) listens,
    /// and the token it asks for off loopback.
    public struct Web: Sendable, Hashable {
        /// `listen`: `host:port` (IPv6 as `[::1]:8099`), default `127.0.0.1:8099`.
        public var listen: String
        /// `auth_token`: the bearer token (or the login form's); required when `listen` is not a loopback address.
        public var authToken: String?

        /// The default listen address: loopback only.
        public static let defaultListen = "127.0.0.1:8099"

        /// Creates the section.
        public init(listen: String = Web.defaultListen, authToken: String? = nil) {
            self.listen = listen
            self.authToken = authToken
        }
    }

    /// The file name of `devices_file` beside `state_file` when it is not given.
    public static let defaultDevicesFileName = "devices.json"

    /// Where the devices added at run time are kept (`devices_file`; default `devices.json` beside `state_file`);
    /// nil when neither is set (run-time devices then live on the broker only).
    public var devicesFilePath: String? {
        if let devicesFile { return devicesFile }
        guard let stateFile else { return nil }
        guard let slash = stateFile.lastIndex(of: "/") else { return Self.defaultDevicesFileName }
        return String(stateFile[...slash]) + Self.defaultDevicesFileName
    }
}
