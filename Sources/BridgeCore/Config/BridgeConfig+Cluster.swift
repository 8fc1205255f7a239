extension BridgeConfig {
    /// The `cluster` section (SPEC §10): bridges on one broker and base topic sharing the devices.
    public struct Cluster: Sendable, Hashable {
        /// `enabled`, default `false`. While the runtime does not implement the cluster, `true` is refused by
        /// ``BridgeConfig/checkSupported()`` (the CLI's `run` and `check-config`).
        public var enabled: Bool
        /// `switch_margin` (dB, a whole positive number, default 10) and `switch_after` (default 30 s): another radio
        /// takes a device over only when this much stronger for this long.
        public var switchRule: SwitchRule

        /// Creates the section.
        public init(enabled: Bool = false, switchRule: SwitchRule = SwitchRule()) {
            self.enabled = enabled
            self.switchRule = switchRule
        }
    }

    /// Throws the settings this version parses and validates but cannot act on yet (``unsupported``), located like
    /// every other configuration error. The CLI calls it for `run` and `check-config`; a library user that
    /// builds a runtime from a ``BridgeConfig`` should too.
    public func checkSupported() throws(ConfigError) {
        guard var first = unsupported.first else { return }
        first.further = Array(unsupported.dropFirst())
        throw first
    }
}

extension ClusterSettings {
    /// The cluster settings of a configuration: `bridge.id`, `cluster.switch_margin` and `cluster.switch_after`;
    /// the timings the SPEC fixes (claim wait, startup quiet, release after) keep their defaults.
    public init(config: BridgeConfig) {
        self.init(bridgeID: config.bridgeID, switchRule: config.cluster.switchRule)
    }
}
