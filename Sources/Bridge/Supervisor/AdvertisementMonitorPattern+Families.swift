import BlueZ
import BridgeCore
import RuntimeCore

extension AdvertisementMonitorPattern {
    /// What the passive monitor listens for (SPEC §7, §13): a frame that matches none of these
    /// is not heard while the monitor replaces the scan.
    ///
    /// - service data: BTHome `fcd2`, pvvx / ATC1441 `181a`, Xiaomi `fe95`, Qingping `fdcd`,
    ///   SwitchBot `fd3d` and `0d00`;
    /// - manufacturer data by company id: SwitchBot, Ruuvi, BlueMaestro, Mopeka, Victron, and
    ///   Govee's `0xec88` / `0x8801` / `0x0001`, and the H5055's advertised UUID `5550`;
    /// - the complete or shortened local name of the families whose frames carry no company id of
    ///   their own (Govee, Inkbird, ThermoPro, SensorPush): heard only when the device puts its
    ///   name in the advertisement itself, not only in its scan response (a passive scan asks
    ///   for none); the patterns are case-sensitive prefixes (SensorPush's one-letter name `s` is
    ///   left out: it would match nearly everything).
    static let decoders: [AdvertisementMonitorPattern] = {
        let services: [UInt16] = [0xFCD2, 0x181A, 0xFE95, 0xFDCD, 0xFD3D, 0x0D00]
        let companies: [UInt16] = [0x0969, 0x0499, 0x0133, 0x0059, 0x02E1, 0xEC88, 0x8801, 0x0001]
        let names = ["GVH", "GV5", "Govee", "sps", "tps", "iBBQ", "xBBQ", "ITH", "TP3", "SensorPush"]
        typealias P = AdvertisementMonitorPattern
        // Govee's H5055 is told by the 16-bit service UUID 5550 it advertises (complete or incomplete list).
        let h5055 = [P(adType: 0x03, content: [0x50, 0x55]), P(adType: 0x02, content: [0x50, 0x55])]
        return services.map { P.serviceData16($0) } + companies.map { P.manufacturerData($0) } + h5055
            + names.flatMap { [P.localName($0, complete: true), P.localName($0, complete: false)] }
    }()

    /// Manufacturer data (AD type 0xff) of a company id (little endian), whatever follows.
    static func manufacturerData(_ company: UInt16) -> AdvertisementMonitorPattern {
        AdvertisementMonitorPattern(adType: 0xFF, content: [UInt8(company & 0xFF), UInt8(company >> 8)])
    }

    /// A local name (AD type 0x09 complete, 0x08 shortened) that begins with `prefix`.
    static func localName(_ prefix: String, complete: Bool) -> AdvertisementMonitorPattern {
        AdvertisementMonitorPattern(adType: complete ? 0x09 : 0x08, content: Array(prefix.utf8))
    }
}
