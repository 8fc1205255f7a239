import BridgeCore

/// `devices[].pairing` and `devices[].passkey` (SPEC §11).
extension ConfigDecoder {
    func decodePairing(_ fields: Fields, entry: Located, into device: inout BridgeConfig.Device) throws(ConfigError) {
        if let node = fields("pairing") {
            let text = try string(node)
            guard let pairing = BridgeConfig.Device.Pairing(rawValue: text) else {
                let all = BridgeConfig.Device.Pairing.allCases.map(\.rawValue).joined(separator: ", ")
                throw error(.invalidValue, "'\(node.path)' must be one of \(all), not '\(text)'", at: node.mark)
            }
            device.pairing = pairing
        }
        let passkeyNode = fields("passkey")
        switch (device.pairing, passkeyNode) {
        case (.passkey, nil):
            throw error(
                .missingKey, "'\(entry.path).pairing: passkey' needs '\(entry.path).passkey' (six digits)",
                at: fields("pairing")?.mark ?? entry.mark)
        case (.passkey, let node?):
            // Quoted or not, with its leading zeros: "012345" and 12345 are the same passkey.
            let text = try string(node)
            guard (1...6).contains(text.count), text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber),
                  let value = UInt32(text)
            else {
                throw error(.invalidValue, "'\(node.path)' must be six digits (000000 to 999999)", at: node.mark)
            }
            device.passkey = value
        case (_, let node?):
            throw error(
                .invalidValue, "'\(node.path)' is only used with 'pairing: passkey' (this device's is \(device.pairing.rawValue))",
                at: node.mark)
        case (_, nil):
            break
        }
    }
}
