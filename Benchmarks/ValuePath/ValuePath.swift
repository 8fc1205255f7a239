// The in-process path of one characteristic value through the bridge, without the sockets of the
// bus and the broker: what the D-Bus I/O thread does between libdbus handing over a message and
// libmosquitto being handed a payload.
//
//   dbus-signal-value          a PropertiesChanged signal of a characteristic's Value, as the wire
//                              bytes libdbus reads from the bus → libdbus's demarshal → the Value
//                              bytes read in place (BlueZClient.readValue, the StartNotify path)
//   payload-*                  the Value bytes → the MQTT JSON payload (ValuePayload.make) for a heart
//                              rate measurement, a battery level (uint8), a temperature (sint16 in
//                              0.01 °C) and raw hex (the 4-byte counter of scripts/bench-throughput)
//   dbus-signal-payload        both: signal bytes → payload (hex counter)
//   socket-packet-payload      the AcquireNotify path: one notification written to a SOCK_SEQPACKET
//                              socket pair, read back (one syscall each way) → payload (hex counter)
//   advertisement-rssi         an RSSI-only advertisement report (PropertiesChanged of Device1) →
//                              libdbus's demarshal → read in place (BlueZClient.readAdvertisementReport)
//   advertisement-payload      a pvvx advertisement report (RSSI and ServiceData) → read in place →
//                              the service data parsed → decoded (pvvx) → the SPEC §7 payload
//                              (AdvertisementPayload.make): what the I/O thread does per new packet
//                              besides the object tree and the router's bookkeeping
//
// libdbus's demarshal builds a message loader per call (about 40 of the mallocs of each signal
// benchmark); reading from the connection reuses one, so the live path makes fewer.
//
// Every iteration handles 1,000 values (scalingFactor .kilo): divide the per-iteration figures by
// 1,000 for one value (`--scale` does it in the text output). scripts/check-allocations runs these
// with VALUEPATH_QUICK=1 (few iterations: allocation counts do not vary) and checks
// mallocCountTotal against Benchmarks/Thresholds.
import BlueZ
import Benchmark
import BridgeBase
import BridgeCore
import DBusKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Heart Rate Measurement: flags 0x16 (uint8 bpm, contact detected, RR intervals), 72 bpm, RR 1024/1024 s.
let heartRate: [UInt8] = [0x16, 0x48, 0x00, 0x04]
/// Battery Level: 90 %.
let batteryLevel: [UInt8] = [0x5A]
/// Temperature: 2158 × 0.01 °C.
let temperature: [UInt8] = [0x6E, 0x08]
/// The 4-byte little-endian counter that scripts/bench-throughput's peripherals notify.
let counter: [UInt8] = [0x2A, 0x01, 0x00, 0x00]

/// The wire bytes of `PropertiesChanged("org.bluez.GattCharacteristic1", {"Value": <bytes>}, [])`,
/// as a peer sends it (DBusFuzzing.sampleMessage gives it serial 1: libdbus's loader refuses 0).
let counterSignal: [UInt8] = {
    let bytes = DBusFuzzing.sampleMessage(counter)
    precondition(bytes.count > 12 && !bytes[8..<12].allSatisfy { $0 == 0 }, "a sample message without a serial")
    return bytes
}()

/// The bridge's fast path for a characteristic value (BlueZClient+Peek): the `Value` entry of a
/// `GattCharacteristic1` PropertiesChanged, read in place.
@inline(never)
func valueBytes(ofSignal wire: [UInt8]) -> [UInt8]? {
    DBusMessageCodec.read(wire) { BlueZClient.readValue($0) } ?? nil
}

/// A pvvx thermometer's advertisement report as BlueZ 5.66 signals it with DuplicateData.
let pvvxAddress = BluetoothAddress("A4:C1:38:10:00:01")!
let pvvxFrame: [UInt8] = [0x01, 0x00, 0x10, 0x38, 0xC1, 0xA4, 0x66, 0x08, 0xA0, 0x11, 0x86, 0x0B, 91, 7, 0x05]
func reportSignal(_ changed: [String: DBusValue]) -> [UInt8] {
    let bytes = DBusFuzzing.signalBytes(
        path: "/org/bluez/hci0/dev_A4_C1_38_10_00_01", interface: "org.freedesktop.DBus.Properties",
        member: "PropertiesChanged",
        arguments: [.string("org.bluez.Device1"), .stringVariantDict(changed), .stringArray([])])
    precondition(!bytes.isEmpty, "the report signal does not marshal")
    return bytes
}
let rssiSignal = reportSignal(["RSSI": .int16(-61)])
let pvvxSignal = reportSignal([
    "RSSI": .int16(-61),
    "ServiceData": .dictionary(key: "s", value: "v", [
        DBusDictEntry(.string("0000181a-0000-1000-8000-00805f9b34fb"), .variant(.bytes(pvvxFrame))),
    ]),
])

/// A report read in place, as BlueZClient's peek does before it touches the object tree.
@inline(never)
func advertisementChange(ofSignal wire: [UInt8]) -> AdvertisementChange? {
    DBusMessageCodec.read(wire) { BlueZClient.readAdvertisementReport($0) } ?? nil
}

/// A pvvx report all the way to its payload (without the tree, the lock and the broker).
@inline(never)
func advertisementPayload(ofSignal wire: [UInt8]) -> [UInt8]? {
    guard let change = advertisementChange(ofSignal: wire) else { return nil }
    let serviceData = BlueZDevice.serviceData(change.serviceData)
    let frame = AdvertisementFrame(address: pvvxAddress, serviceData: serviceData)
    guard case .success(let decoded)? = AdvertisementDecoder.decode(frame, bindkey: nil) else { return nil }
    return AdvertisementPayload.make(
        rssi: change.rssi.map(Int.init), decoded: decoded, serviceData: serviceData, manufacturerData: [:])
}

/// Both ends of a SOCK_SEQPACKET socket pair: what BlueZ's AcquireNotify hands out (one
/// notification per packet) and the peripheral's side of it. Left open until the process exits.
struct NotifySocket: Sendable {
    var peripheral: Int32
    var bridge: Int32

    static func open() throws -> NotifySocket {
        var fds: [Int32] = [-1, -1]
        #if canImport(Glibc)
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = SOCK_SEQPACKET
        #endif
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw SocketError(errno: errno) }
        return NotifySocket(peripheral: fds[0], bridge: fds[1])
    }
}

struct SocketError: Error {
    var errno: Int32
}

let benchmarks: @Sendable () -> Void = {
    // Measure the path, not a failure: the sample must decode to the value it carries.
    guard valueBytes(ofSignal: counterSignal) == counter else {
        let decoded = DBusMessageCodec.demarshal(counterSignal)
        fatalError("the sample signal (\(counterSignal.count) bytes) does not decode to its Value: \(String(describing: decoded))")
    }
    guard advertisementChange(ofSignal: rssiSignal)?.rssi == -61,
        let payload = advertisementPayload(ofSignal: pvvxSignal),
        String(decoding: payload, as: UTF8.self).contains(#""decoder":"pvvx""#)
    else {
        fatalError("the sample advertisement reports do not read or decode")
    }
    let quick = getenv("VALUEPATH_QUICK") != nil
    Benchmark.defaultConfiguration = .init(
        metrics: [.mallocCountTotal, .wallClock, .throughput],
        scalingFactor: .kilo,
        maxDuration: .seconds(quick ? 1 : 3),
        maxIterations: quick ? 20 : 100_000,
        // Allocations are deterministic: any increase of the p90 over the committed threshold fails.
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: 0])]
    )

    Benchmark("dbus-signal-value") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(valueBytes(ofSignal: counterSignal))
        }
    }

    for (name, raw, format) in [
        ("payload-heart-rate", heartRate, ValueFormat.heartRateMeasurement),
        ("payload-battery-level", batteryLevel, .batteryLevel),
        ("payload-temperature", temperature, .temperature),
        ("payload-hex", counter, .hex),
    ] {
        Benchmark(name) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(ValuePayload.make(raw: raw, format: format))
            }
        }
    }

    Benchmark("dbus-signal-payload") { benchmark in
        for _ in benchmark.scaledIterations {
            guard let value = valueBytes(ofSignal: counterSignal) else { fatalError("the sample signal has no Value") }
            blackHole(ValuePayload.make(raw: value, format: .hex))
        }
    }

    Benchmark(
        "socket-packet-payload",
        closure: { benchmark, socket in
            // One packet buffer for the whole run, as a notification reader keeps one (BlueZ's MTU
            // is at most 517: a value is at most 512 bytes).
            withUnsafeTemporaryAllocation(byteCount: 512, alignment: 8) { buffer in
                for _ in benchmark.scaledIterations {
                    let sent = counter.withUnsafeBytes { send(socket.peripheral, $0.baseAddress, $0.count, 0) }
                    let count = recv(socket.bridge, buffer.baseAddress, buffer.count, 0)
                    guard sent == counter.count, count == counter.count else { fatalError("socket pair: \(errno)") }
                    blackHole(ValuePayload.make(raw: UnsafeRawBufferPointer(rebasing: buffer[0..<count]), format: .hex))
                }
            }
        },
        setup: { try NotifySocket.open() }
    )

    Benchmark("advertisement-rssi") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(advertisementChange(ofSignal: rssiSignal))
        }
    }

    Benchmark("advertisement-payload") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(advertisementPayload(ofSignal: pvvxSignal))
        }
    }
}
