@testable import BridgeCore

/// Frames for the families told by name and bytes (Govee, ThermoPro, Inkbird, SensorPush): built
/// as BlueZ hands them (manufacturer data by company id, the id's two bytes not in the value),
/// and decoded through the dispatcher, so that a test also sees which family claims the frame.
enum ByteFrames {
    static let address = BluetoothAddress("A4:C1:38:00:00:01")!

    static func bytes(_ hex: String) -> [UInt8] {
        (try? Hex.decode(hex.filter { $0 != " " })) ?? []
    }

    /// A frame: `md` maps company ids to the value in hex; `uuids` are service UUIDs as text.
    static func frame(name: String?, _ md: [UInt16: String], uuids: [String] = []) -> AdvertisementFrame {
        var data: [UInt16: [UInt8]] = [:]
        for (id, hex) in md { data[id] = bytes(hex) }
        return AdvertisementFrame(
            address: address, manufacturerData: data, name: name, serviceUUIDs: uuids.compactMap { BluetoothUUID($0) })
    }

    /// The frame as one AD structure's data (id little endian, then the value), as captured by
    /// tools that print the whole structure (Theengs Decoder's tests).
    static func whole(name: String?, _ hex: String, uuids: [String] = []) -> AdvertisementFrame {
        let b = bytes(hex)
        guard b.count >= 2 else { return frame(name: name, [:], uuids: uuids) }
        return AdvertisementFrame(
            address: address, manufacturerData: [UInt16(b[0]) | UInt16(b[1]) << 8: Array(b[2...])], name: name,
            serviceUUIDs: uuids.compactMap { BluetoothUUID($0) })
    }

    static func decode(_ frame: AdvertisementFrame) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        AdvertisementDecoder.decode(frame, bindkey: nil)
    }

    /// The decoded values as JSON text, or `nil`, `"failure"` as text.
    static func values(_ frame: AdvertisementFrame) -> String {
        switch decode(frame) {
        case nil: return "nil"
        case .failure: return "failure"
        case .success(let d)?: return JSONValue.object(d.values).jsonString
        }
    }

    /// Every truncation and every single-bit flip of every value of `frame`: none may trap; the
    /// results are returned for checks (the decoder that claimed each, or nil).
    static func mutations(of frame: AdvertisementFrame) -> [String?] {
        var out: [String?] = []
        for (id, value) in frame.manufacturerData {
            for n in 0..<value.count {
                var f = frame
                f.manufacturerData[id] = Array(value[0..<n])
                out.append(claimant(f))
            }
            for i in 0..<value.count {
                for bit in 0..<8 {
                    var f = frame
                    var v = value
                    v[i] ^= UInt8(1 << bit)
                    f.manufacturerData[id] = v
                    out.append(claimant(f))
                }
            }
        }
        return out
    }

    static func claimant(_ frame: AdvertisementFrame) -> String? {
        switch decode(frame) {
        case nil: return nil
        case .failure(let e)?:
            if case .malformed(let family, _) = e { return family }
            return "error"
        case .success(let d)?: return d.decoder
        }
    }
}
