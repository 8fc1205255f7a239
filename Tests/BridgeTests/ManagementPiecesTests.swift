import BlueZ
import BridgeBase
import BridgeCore
import Foundation
import Logging
import Testing

@testable import Bridge

/// The executor's pieces of SPEC §14: `devices_file` and the scan collector.
@Suite struct ManagementPiecesTests {
    @Test("devices_file: written atomically, owner-only, read back; a missing or corrupt file gives nothing")
    func devicesFile() throws {
        let dir = NSTemporaryDirectory() + "devices-file-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = DevicesFile(path: dir + "/state/devices.json", logger: Logger(label: "test"))
        #expect(file.load().isEmpty)
        let entries: [JSONValue] = [["name": "porch", "match": ["address": "C0:FF:EE:00:00:01"]]]
        file.save(entries)
        #expect(file.load() == entries)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try "{\"devices\": 3".write(toFile: file.path, atomically: true, encoding: .utf8)
        #expect(file.load().isEmpty)
    }

    @Test("the scan collector notes advertisers only while a scan runs, each once (the latest), since a time")
    func scanCollector() {
        let clock = FakeClock()
        let collector = ScanCollector(clock: clock)
        func ad(_ last: UInt8, rssi: Int) -> BlueZAdvertisement {
            let address = BluetoothAddress("C0:FF:EE:00:00:0\(last)")!
            return BlueZAdvertisement(
                path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_0\(last)", address: address, rssi: rssi, serviceData: [:],
                manufacturerData: [:], dataChanged: true)
        }
        collector.note(ad(1, rssi: -50))
        collector.begin()
        #expect(collector.heard(since: clock.now).isEmpty)
        let start = clock.now
        collector.note(ad(1, rssi: -60))
        collector.note(ad(1, rssi: -61))
        clock.advance(by: .seconds(2))
        let later = clock.now
        collector.note(ad(2, rssi: -70))
        #expect(collector.heard(since: start).map(\.advertisement.rssi) == [-61, -70])
        #expect(collector.heard(since: later).map(\.advertisement.rssi) == [-70])
        collector.end()
        collector.note(ad(3, rssi: -80))
        #expect(collector.heard(since: start).isEmpty)
    }
}
