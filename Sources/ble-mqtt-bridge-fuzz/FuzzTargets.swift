import BridgeCore
import ConfigLoader
import DBusKit

/// What each fuzz target feeds its input to: the parsers that take untrusted input.
enum FuzzTargets {
    /// The targets, by the name `FUZZ_TARGET` (or the replayer's first argument) selects.
    static let all: [String: @Sendable ([UInt8]) -> Void] = [
        "json": { bytes in _ = try? JSONParser.parse(bytes) },
        "write": { bytes in
            for format in ValueFormat.allCases { _ = WriteCommand.parse(bytes, format: format) }
        },
        "read": { bytes in _ = ReadCommand.parse(bytes) },
        "topic": { bytes in
            let mapper = TopicMapper(baseTopic: "ble")
            _ = mapper.parse(String(decoding: bytes, as: UTF8.self))
        },
        "config": { bytes in
            _ = try? BridgeConfig.parse(
                yaml: String(decoding: bytes, as: UTF8.self), fileName: "fuzz.yaml", environment: ["X": "1"], hostName: "h")
        },
        "value": { bytes in
            for format in ValueFormat.allCases { _ = ValuePayload.make(raw: bytes, format: format) }
        },
        "dbus": { bytes in _ = DBusFuzzing.decodeMessage(bytes) },
        "advertisement": { bytes in AdvertisementFuzzing.run(bytes) },
        // Frames of the advertisement families (SPEC §13), with and without a key: FamilyFuzzing.
        "families": { bytes in FamilyFuzzing.run(bytes) },
        // A Presentation Format descriptor (its first 7 bytes) and a value it decodes (the rest);
        // the whole input as a User Description.
        "descriptor": { bytes in
            _ = UserDescription.name(bytes)
            guard let format = PresentationFormat(descriptor: bytes.prefix(7)) else { return }
            let value = bytes.dropFirst(7)
            _ = format.decodeIfValid(value)
            _ = format.decode(value)
            _ = format.homeAssistantUnit
        },
        // A device profile file through the loader (SPEC §15): ProfileFuzzing.
        "profile": { bytes in ProfileFuzzing.load(bytes) },
        // Profile codecs from fuzzed text and the shipped profiles' over fuzzed payloads: ProfileDecodeFuzzing.
        "profile-decode": { bytes in ProfileDecodeFuzzing.run(bytes) },
        // A device entry added at run time (SPEC §14): the decoder and the supervisor, AddedDeviceFuzzing.
        "added-device": { bytes in AddedDeviceFuzzing.run(bytes) },
    ]

    static func run(_ name: String, _ bytes: [UInt8]) {
        guard let target = all[name] else {
            fatalError("unknown fuzz target '\(name)' (known: \(all.keys.sorted().joined(separator: ", ")))")
        }
        target(bytes)
    }
}

/// The `advertisement` target. Byte 0 selects: bits 0-1 the mode (0: service data fcd2, 1: 181a,
/// 2: the rest is BTHome plaintext objects, encrypted with the encoder and decoded again, which
/// must give what the plaintext frame gives, 3: an unknown UUID plus manufacturer data, which no
/// decoder may claim); bit 2 a bindkey (the 16 bytes after the address, fewer if the input ends).
/// Bytes 1-6 are the address; the rest is the payload.
enum AdvertisementFuzzing {
    static let defaultKey: [UInt8] = Array(0..<16)

    static func run(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        var rest = bytes.dropFirst()
        var address: UInt64 = 0
        for byte in rest.prefix(6) { address = address << 8 | UInt64(byte) }
        rest = rest.dropFirst(6)
        var bindkey: [UInt8]? = nil
        if selector & 0x04 != 0 {
            bindkey = Array(rest.prefix(16))
            rest = rest.dropFirst(16)
        }
        let payload = Array(rest)
        let device = BluetoothAddress(value: address)
        switch selector & 0x03 {
        case 0:
            check(AdvertisementFrame(address: device, serviceData: [BluetoothUUID(uuid16: 0xFCD2): payload]), bindkey: bindkey)
        case 1:
            check(AdvertisementFrame(address: device, serviceData: [BluetoothUUID(uuid16: 0x181A): payload]), bindkey: bindkey)
        case 2:
            roundTrip(payload, address: device, key: bindkey.flatMap { $0.count == 16 ? $0 : nil } ?? defaultKey, selector: selector)
        default:
            // Battery service data and Apple's company id: no decoder's (0x0499 is Ruuvi's since SPEC §13).
            let frame = AdvertisementFrame(
                address: device, serviceData: [BluetoothUUID(uuid16: 0x180F): payload], manufacturerData: [0x004C: payload])
            precondition(AdvertisementDecoder.decode(frame, bindkey: bindkey) == nil, "a decoder claimed an unknown frame")
        }
    }

    static func check(_ frame: AdvertisementFrame, bindkey: [UInt8]?) {
        guard let result = AdvertisementDecoder.decode(frame, bindkey: bindkey) else {
            preconditionFailure("a claimed UUID was not decoded")
        }
        if case .success(let decoded) = result {
            let text = JSONValue.object(decoded.values).jsonBytes
            precondition((try? JSONParser.parse(text)) == .object(decoded.values), "values do not round-trip through JSON")
            precondition(decoded.encrypted == (decoded.counter != nil), "counter without encryption")
        }
    }

    /// Encrypting any object bytes and decrypting them must give what the plaintext frame gives.
    static func roundTrip(_ plaintext: [UInt8], address: BluetoothAddress, key: [UInt8], selector: UInt8) {
        let counter = UInt32(truncatingIfNeeded: plaintext.count &* 2_654_435_761) ^ UInt32(selector)
        let trigger = selector & 0x08 != 0
        guard let sealed = BTHomeEncoder.encrypt(plaintext, key: key, counter: counter, address: address, triggerBased: trigger)
        else { preconditionFailure("encryption failed") }
        let uuid = BluetoothUUID(uuid16: 0xFCD2)
        let encrypted = AdvertisementDecoder.decode(AdvertisementFrame(address: address, serviceData: [uuid: sealed]), bindkey: key)
        let plain = AdvertisementDecoder.decode(
            AdvertisementFrame(address: address, serviceData: [uuid: [trigger ? 0x44 : 0x40] + plaintext]), bindkey: nil)
        switch (encrypted, plain) {
        case (.success(let a)?, .success(let b)?):
            precondition(a.values == b.values && a.packetID == b.packetID, "encrypted and plaintext frames differ")
            precondition(a.counter == counter && a.encrypted && a.triggerBased == trigger, "counter or flags lost")
        case (.failure(let a)?, .failure(let b)?):
            precondition(a == b, "encrypted and plaintext frames fail differently: \(a) / \(b)")
        default:
            preconditionFailure("encrypted and plaintext frames decode differently")
        }
        // A flipped bit anywhere after the device-information byte must break the MIC.
        if sealed.count > 1 {
            var tampered = sealed
            let index = 1 + Int(counter % UInt32(sealed.count - 1))
            tampered[index] ^= 0x01
            let result = AdvertisementDecoder.decode(AdvertisementFrame(address: address, serviceData: [uuid: tampered]), bindkey: key)
            precondition(result == .failure(.badMIC), "a tampered frame was not rejected")
        }
    }
}
