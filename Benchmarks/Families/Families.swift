// Decoding one advertisement of each family (SPEC §7, §13) through the dispatcher, as the I/O
// thread does per new packet: AdvertisementDecoder.decode(frame, bindkey:) on a frame built once.
//
//   decode-<label>       one frame of a family: `frames` below, one per family and format (taken
//                        from the families' adapters, scripts/decoders/*.py); a frame that no
//                        decoder of this build decodes is left out and named at the start (so
//                        that this runs before every family has landed, and says which did not)
//   decode-unclaimed     an Apple (0x004c) manufacturer frame with a name: what every iPhone
//                        nearby sends; no family may claim it, so every family looks at it
//
// The SPEC §13 aim is ≤ 2 µs per frame. Every iteration decodes 1,000 frames (scalingFactor
// .kilo); the text output's figures are per frame (e.g. decode-pvvx: 3 mallocs, ~0.3 µs).
//
//   swift package --package-path Benchmarks benchmark --target Families
//   FAMILIES_QUICK=1 ...      few iterations (allocation counts do not vary)
//
// The machine is shared: run it a few times, not in a loop.
import Benchmark
import BridgeBase
import BridgeCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One frame: a label, the service data by UUID and manufacturer data by company id (hex, the
/// bytes after the company id), the name, the advertised UUIDs and the key.
struct SampleFrame: Sendable {
    var label: String
    var address = "A4:C1:38:12:34:56"
    var serviceData: [String: String] = [:]
    var manufacturerData: [UInt16: String] = [:]
    var name: String? = nil
    var serviceUUIDs: [String] = []
    var key: String? = nil

    var frame: AdvertisementFrame {
        var frame = AdvertisementFrame(address: BluetoothAddress(address)!, name: name)
        for (uuid, hex) in serviceData { frame.serviceData[BluetoothUUID(uuid)!] = try! Hex.decode(hex) }
        for (id, hex) in manufacturerData { frame.manufacturerData[id] = try! Hex.decode(hex) }
        frame.serviceUUIDs = serviceUUIDs.map { BluetoothUUID($0)! }
        return frame
    }

    var bindkey: [UInt8]? { key.map { try! Hex.decode($0) } }
}

/// One frame per family (two where a family has two kinds of frame): captures from the
/// references' test suites, as the families' adapters (scripts/decoders/*.py) carry them.
let frames: [SampleFrame] = [
    SampleFrame(label: "bthome", serviceData: ["fcd2": "40000c01640228090365140c8f0b"]),
    // bthome.io/encryption's example (AES-CCM): temperature and humidity, counter 00112233.
    SampleFrame(
        label: "bthome-encrypted", address: "54:48:E6:8F:80:A5", serviceData: ["fcd2": "41a47266c95f730011223378237214"],
        key: "231d39c1d7cc1ab1aee224cd096db932"),
    SampleFrame(label: "pvvx", serviceData: ["181a": "01001038c1a46608a011860b5b0705"]),
    // xiaomi-ble tests/test_parser.py: test_Xiaomi_LYWSDCGQ, test_Xiaomi_CGG1 (MiBeacon v5, AES-CCM).
    SampleFrame(
        label: "xiaomi-lywsdcgq", address: "58:2D:34:3B:2E:BF", serviceData: ["fe95": "5020aa01a3bf2e3b342d580d1004b40095020a10013b"]),
    SampleFrame(
        label: "xiaomi-cgg1-encrypted", address: "5A:58:2D:34:12:5F",
        serviceData: ["fe95": "5858480b685f12342d585a0b1841e2aa000e00a4964fb5"], key: "814aac74c4f17b6c1581e1ab87816b99"),
    // qingping-ble tests/test_parser.py (Qingping Motion & Light).
    SampleFrame(label: "qingping-cgpr1", serviceData: ["fdcd": "4812cdd560342d580804000d00000f01ee"], name: "Qingping Motion & Light"),
    // govee-ble tests/test_parser.py:161 and :846.
    SampleFrame(
        label: "govee-h5075", address: "A4:C1:38:DD:DB:F8", manufacturerData: [0xEC88: "00034db26400"], name: "GVH5075_DBF8",
        serviceUUIDs: ["ec88"]),
    SampleFrame(
        label: "govee-h5179", manufacturerData: [0x8801: "ec0001010a0aa40664"], name: "Govee_H5179_3CD5",
        serviceUUIDs: ["180a", "fef5", "ec88"]),
    // PySwitchbot tests/test_adv_parser.py::test_wosensor_passive_and_active.
    SampleFrame(
        label: "switchbot-meter", address: "C0:21:9A:E8:BC:05", serviceData: ["fd3d": "5400e4069835"],
        manufacturerData: [0x0969: "d7c17d5deb43de03069835"]),
    // Ruuvi's RAWv2 test vector (docs.ruuvi.com, data format 5).
    SampleFrame(label: "ruuvi-v5", manufacturerData: [0x0499: "0512fc5394c37c0004fffc040cac364200cdcbb8334c884f"]),
    // inkbird-ble tests/test_parser.py:136.
    SampleFrame(label: "inkbird-ibs-th", manufacturerData: [0x07FC: "c71200c83d5606"], name: "sps", serviceUUIDs: ["fff0"]),
    // thermopro-ble tests/test_parser.py:56.
    SampleFrame(label: "thermopro-tp357", manufacturerData: [0xF1C2: "001d022c"], name: "TP357 (2142)"),
    // sensorpush-ble tests/test_parser.py:837.
    SampleFrame(
        label: "sensorpush-htw", manufacturerData: [0x9A04: "c9a546"], name: "SensorPush HT.w 0CA1",
        serviceUUIDs: ["ef090000-11d6-42ba-93b8-9dd7ec090ab0"]),
    // bluemaestro-ble tests/test_parser.py::test_temp_disc_thd.
    SampleFrame(
        label: "bluemaestro-tempo-disc-thd", address: "D7:9B:8F:00:00:00",
        manufacturerData: [0x0133: "17640e10000200f201f200830100010d02ab00f201f2010d02ab00f201f200ff024e0000000000"]),
    // mopeka-iot-ble tests/test_parser.py PRO_SERVICE_LOW_QUALITY_INFO.
    SampleFrame(
        label: "mopeka-pro-plus", address: "C9:F3:32:E0:F5:09", manufacturerData: [0x0059: "0872460040e0f509f0d8"],
        serviceUUIDs: ["fee5"]),
    // victron-ble tests/test_battery_monitor.py::test_end_to_end_parse (AES-CTR).
    SampleFrame(
        label: "victron-battery-monitor", manufacturerData: [0x02E1: "100289a302b040af925d09a4d89aa0128bdef48c6298a9"],
        key: "aff4d0995b7d1e176c0c33ecb9e70dcd"),
]

/// What no family may claim: an iPhone's Continuity frame (Apple, 0x004c).
let unclaimed = SampleFrame(label: "unclaimed", manufacturerData: [0x004C: "1005031c2a9f4e"], name: "iPhone")

@inline(never)
func decode(_ frame: AdvertisementFrame, _ key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
    AdvertisementDecoder.decode(frame, bindkey: key)
}

let benchmarks: @Sendable () -> Void = {
    let quick = getenv("FAMILIES_QUICK") != nil
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(quick ? 1 : 3),
        maxIterations: quick ? 20 : 100_000
    )
    var skipped: [String] = []
    for sample in frames {
        let frame = sample.frame
        let key = sample.bindkey
        guard case .success(let decoded)? = decode(frame, key) else {
            skipped.append(sample.label)
            continue
        }
        Benchmark("decode-\(sample.label)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(decode(frame, key))
            }
        }
        _ = decoded
    }
    if !skipped.isEmpty {
        print("Families: not decoded by this build, left out: \(skipped.joined(separator: ", "))")
    }
    let other = unclaimed.frame
    guard decode(other, nil) == nil else { fatalError("a decoder claims an Apple frame") }
    Benchmark("decode-unclaimed") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(decode(other, nil))
        }
    }
}
