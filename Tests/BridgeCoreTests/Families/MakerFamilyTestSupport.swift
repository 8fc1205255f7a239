@testable import BridgeCore

/// Frames for the families told by a service UUID or a real company id (SwitchBot, Ruuvi,
/// BlueMaestro, Mopeka, Victron): built as BlueZ hands them (manufacturer data by company id,
/// the id's two bytes not in the value) and decoded through the dispatcher, so that a test also
/// sees which family claims the frame.
enum MakerFrames {
    static let address = BluetoothAddress("C0:21:9A:E8:BC:49")!

    static func bytes(_ hex: String) -> [UInt8] {
        (try? Hex.decode(hex.filter { $0 != " " })) ?? []
    }

    /// A frame: `sd` maps 16-bit service UUIDs to hex, `md` company ids to hex.
    static func frame(sd: [UInt16: String] = [:], md: [UInt16: String] = [:], uuids: [UInt16] = []) -> AdvertisementFrame {
        var serviceData: [BluetoothUUID: [UInt8]] = [:]
        for (uuid, hex) in sd { serviceData[BluetoothUUID(uuid16: uuid)] = bytes(hex) }
        var manufacturerData: [UInt16: [UInt8]] = [:]
        for (id, hex) in md { manufacturerData[id] = bytes(hex) }
        return AdvertisementFrame(
            address: address, serviceData: serviceData, manufacturerData: manufacturerData,
            serviceUUIDs: uuids.map { BluetoothUUID(uuid16: $0) })
    }

    static func decode(_ frame: AdvertisementFrame, key: String? = nil) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        AdvertisementDecoder.decode(frame, bindkey: key.map(bytes))
    }

    /// The decoded values as JSON, or a short word for what happened instead.
    static func values(_ frame: AdvertisementFrame, key: String? = nil) -> String {
        switch decode(frame, key: key) {
        case nil: return "nil"
        case .failure(let error)?: return "failure: \(error.code)"
        case .success(let decoded)?: return JSONValue.object(decoded.values).jsonString
        }
    }

    /// A number among `decoded`'s values.
    static func number(_ decoded: DecodedAdvertisement, _ name: String) -> Double? {
        decoded.values[name]?.doubleValue
    }

    /// Whether every value of `expected` is in `decoded`, within 1e-9, and no other value is.
    static func matches(_ decoded: DecodedAdvertisement, _ expected: [String: Double]) -> Bool {
        guard Set(decoded.values.keys) == Set(expected.keys) else { return false }
        for (name, value) in expected {
            guard let ours = number(decoded, name), abs(ours - value) < 1e-9 else { return false }
        }
        return true
    }

    /// Every truncation and every single-bit flip of each service / manufacturer data value of
    /// `frame`, decoded through the dispatcher (with `key`): the decoders that claim them. None
    /// may trap; every number decoded must be finite.
    static func claimants(ofMutationsOf frame: AdvertisementFrame, key: String? = nil) -> Set<String> {
        var claimants = Set<String>()
        func run(_ mutated: AdvertisementFrame) {
            switch decode(mutated, key: key) {
            case .success(let decoded)?:
                claimants.insert(decoded.decoder)
                for member in decoded.values {
                    if case .number(let x) = member.value, !x.isFinite { claimants.insert("non-finite \(member.key)") }
                }
            case .failure?: claimants.insert("failure")
            case nil: claimants.insert("nil")
            }
        }
        for (uuid, data) in frame.serviceData {
            for n in 0..<data.count {
                var copy = frame
                copy.serviceData[uuid] = Array(data[0..<n])
                run(copy)
            }
            for bit in 0..<(data.count * 8) {
                var copy = frame
                var flipped = data
                flipped[bit / 8] ^= UInt8(1 << (bit % 8))
                copy.serviceData[uuid] = flipped
                run(copy)
            }
        }
        for (id, data) in frame.manufacturerData {
            for n in 0..<data.count {
                var copy = frame
                copy.manufacturerData[id] = Array(data[0..<n])
                run(copy)
            }
            for bit in 0..<(data.count * 8) {
                var copy = frame
                var flipped = data
                flipped[bit / 8] ^= UInt8(1 << (bit % 8))
                copy.manufacturerData[id] = flipped
                run(copy)
            }
        }
        return claimants
    }
}
