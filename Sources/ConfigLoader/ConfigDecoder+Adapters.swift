import BridgeCore

/// `bluetooth.adapter` and `bluetooth.adapters` (SPEC §10).
extension ConfigDecoder {
    /// An adapter name, or a path such as `/org/bluez/hci1` reduced to its name.
    func adapterName(_ node: Located) throws(ConfigError) -> String {
        let original = try string(node)
        var name = original
        let prefix = "/org/bluez/"
        if name.hasPrefix(prefix) { name.removeFirst(prefix.count) }
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ BrokerURL.isHostScalar($0) && $0 != "." && $0 != "-" })
        else {
            throw error(
                .invalidValue,
                "invalid adapter '\(original)' (expected a name like hci0 or a path like /org/bluez/hci0)",
                at: node.mark)
        }
        return name
    }

    /// `adapters`: a non-empty list of distinct adapter names, or `all`.
    func adapterSelection(_ node: Located) throws(ConfigError) -> BridgeConfig.Bluetooth.AdapterSelection {
        if case .scalar = node.node {
            let text = try string(node)
            guard text == "all" else {
                throw error(
                    .wrongType, "'\(node.path)' must be a list of adapters (such as [hci0, hci1]) or all, not '\(text)'",
                    at: node.mark)
            }
            return .all
        }
        let items = try list(node)
        guard !items.isEmpty else {
            throw error(.invalidValue, "'\(node.path)' must name at least one adapter (or be all)", at: node.mark)
        }
        var names: [String] = []
        for item in items {
            let name = try adapterName(item)
            guard name != "all" else {
                throw error(.invalidValue, "'all' is not an adapter: write '\(node.path): all' without a list", at: item.mark)
            }
            guard !names.contains(name) else {
                throw error(.duplicateName, "adapter '\(name)' is listed twice in '\(node.path)'", at: item.mark)
            }
            names.append(name)
        }
        return .named(names)
    }
}
