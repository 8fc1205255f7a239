import BridgeCore

/// The `bridge` and `cluster` sections (SPEC §10).
extension ConfigDecoder {
    /// `bridge`: the id, checked against ``BridgeID/isValid(_:)``.
    func decodeBridge(_ value: Located) throws(ConfigError) -> String? {
        let fields = try mapping(value, known: ConfigKeys.bridge)
        guard let node = fields("id") else { return nil }
        let text = try string(node)
        guard BridgeID.isValid(text) else {
            var message =
                "invalid bridge id '\(text)' for '\(node.path)': expected 1 to \(BridgeID.maxLength) characters from a-z, 0-9, '_' and '-'"
            let suggestion = BridgeID.derived(fromHostName: text)
            if !text.isEmpty, suggestion != "localhost" || text.lowercased() == "localhost" {
                message += " (did you mean '\(suggestion)'?)"
            }
            throw error(.invalidValue, message, at: node.mark)
        }
        return text
    }

    /// `cluster`.
    mutating func decodeCluster(_ value: Located) throws(ConfigError) -> BridgeConfig.Cluster {
        let fields = try mapping(value, known: ConfigKeys.cluster)
        var cluster = BridgeConfig.Cluster()
        if let node = fields("enabled") { cluster.enabled = try bool(node) }
        if let node = fields("switch_margin") { cluster.switchRule.margin = try integer(node, in: 1...100) }
        if let node = fields("switch_after") { cluster.switchRule.after = try duration(node, minimum: .seconds(1)) }
        return cluster
    }
}
