/// A client's registered advertisement monitors (`AdvertisementMonitorManager1.RegisterMonitor`):
/// the `or_patterns` of each monitor object under the registered root.
struct AdvertisementMonitorApp: Sendable {
    /// One `(start, AD type, content)` pattern.
    struct Pattern: Sendable, Hashable {
        var start: Int
        var adType: UInt8
        var content: [UInt8]
    }

    struct Monitor: Sendable {
        var path: String
        var patterns: [Pattern]
    }

    var sender: String
    var root: String
    var monitors: [Monitor]
    /// Devices each monitor reported with `DeviceFound`.
    var found: Set<String> = []

    /// The monitors whose patterns match what `device` advertises.
    func matching(_ device: PeripheralSpec, serviceData: [String: [UInt8]]) -> [Monitor] {
        let structures = Self.adStructures(device, serviceData: serviceData)
        return monitors.filter { m in
            m.patterns.contains { p in
                structures.contains { type, data in
                    type == p.adType && data.count >= p.start + p.content.count
                        && Array(data[p.start..<(p.start + p.content.count)]) == p.content
                }
            }
        }
    }

    /// The advertisement's AD structures as (type, data): service data of 16-bit UUIDs (0x16),
    /// manufacturer data (0xFF), the complete local name (0x09).
    static func adStructures(_ device: PeripheralSpec, serviceData: [String: [UInt8]]) -> [(UInt8, [UInt8])] {
        var out: [(UInt8, [UInt8])] = []
        for (uuid, bytes) in serviceData {
            // 0000xxxx-0000-1000-8000-00805f9b34fb
            guard uuid.count == 36, uuid.hasPrefix("0000"), uuid.hasSuffix("-0000-1000-8000-00805f9b34fb"),
                  let short = UInt16(uuid.dropFirst(4).prefix(4), radix: 16)
            else { continue }
            out.append((0x16, [UInt8(short & 0xFF), UInt8(short >> 8)] + bytes))
        }
        for (company, bytes) in device.manufacturerData {
            out.append((0xFF, [UInt8(company & 0xFF), UInt8(company >> 8)] + bytes))
        }
        if let name = device.name { out.append((0x09, Array(name.utf8))) }
        return out
    }
}
