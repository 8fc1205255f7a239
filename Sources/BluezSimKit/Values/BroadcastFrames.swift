import BridgeBase

/// The service data a broadcasting peripheral sends in its `packet`-th advertisement: readings
/// that walk slowly around the scenario's centres, in the frame format of its kind.
enum BroadcastFrames {
    /// The service UUID (full form) and the bytes.
    static func frame(_ spec: BroadcastSpec, packet: UInt32, address: String) -> (uuid: String, bytes: [UInt8]) {
        // A deterministic walk: ±0.5 °C and ±2 % over 64 packets.
        let phase = Double(Int(packet % 64) - 32) / 32
        let temperature = spec.temperature + 0.5 * phase
        let humidity = spec.humidity + 2 * phase
        let mac = BluetoothAddress(address)?.bytes ?? [0, 0, 0, 0, 0, 0]
        switch spec.kind {
        case .pvvx:
            let t = UInt16(bitPattern: Int16(clamping: Int((temperature * 100).rounded())))
            let h = UInt16(clamping: Int((humidity * 100).rounded()))
            let mv = UInt16(2000 + spec.battery * 10)
            return (
                uuid16("181a"),
                Array(mac.reversed()) + le(t) + le(h) + le(mv) + [UInt8(spec.battery), UInt8(truncatingIfNeeded: packet), 0x04]
            )
        case .atc1441:
            let t = UInt16(bitPattern: Int16(clamping: Int((temperature * 10).rounded())))
            let mv = UInt16(2000 + spec.battery * 10)
            return (
                uuid16("181a"),
                mac + [UInt8(t >> 8), UInt8(t & 0xFF), UInt8(clamping: Int(humidity.rounded())), UInt8(spec.battery),
                       UInt8(mv >> 8), UInt8(mv & 0xFF), UInt8(truncatingIfNeeded: packet)]
            )
        case .bthomeV2:
            return (uuid16("fcd2"), bthome(spec, packet: packet, address: address, temperature: temperature, humidity: humidity))
        }
    }

    static func uuid16(_ short: String) -> String { "0000\(short)-0000-1000-8000-00805f9b34fb" }

    static func le(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
}

extension BroadcastFrames {
    /// BTHome v2 (the simulator's own encoder, ``BTHomeV2Frame``): packet id, battery, temperature, humidity, and
    /// a button press on every `button_every`-th packet; encrypted (counter = packet) when the spec has a bindkey.
    static func bthome(_ spec: BroadcastSpec, packet: UInt32, address text: String, temperature: Double, humidity: Double) -> [UInt8] {
        // Shelly BLU devices send a packet id, encrypted or not.
        var objects: [BTHomeV2Frame.Object] = [.packetID(UInt8(truncatingIfNeeded: packet)), .battery(percent: spec.battery)]
        if let t = BTHomeV2Frame.Object.temperature(celsius: temperature) { objects.append(t) }
        if let h = BTHomeV2Frame.Object.humidity(percent: humidity) { objects.append(h) }
        if spec.buttonEvery > 0, packet % UInt32(spec.buttonEvery) == 0 { objects.append(.buttonPress()) }
        let frame = BTHomeV2Frame(objects: objects)
        guard let key = spec.bindkey, let address = BluetoothAddress(text) else { return frame.plain }
        return frame.encrypted(key: key, mac: address.bytes, counter: packet) ?? frame.plain
    }
}
