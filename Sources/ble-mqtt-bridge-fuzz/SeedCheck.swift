import DBusKit

#if canImport(Glibc)
import Glibc
#endif

/// `ble-mqtt-bridge-fuzz --check-seeds TARGET FILE...` (scripts/fuzz runs it before fuzzing each
/// target): every seed once through the target, and through its gate where it has one. A seed the
/// gate refuses never reaches the code under test (the dbus target's seed with serial 0, which
/// libdbus refused, fuzzed libdbus's header checks only), so it is named and the status is 1.
enum SeedCheck {
    /// Why the first stage of a target, outside the code under test, refuses an input; nil when
    /// it passes. Targets whose input goes straight to our own parser have none: a seed they
    /// reject (a YAML nesting too deep, invalid JSON) tests that rejection.
    static let gates: [String: @Sendable ([UInt8]) -> String?] = [
        "dbus": { bytes in
            DBusFuzzing.decodeMessage(bytes) == nil
                ? "libdbus refuses to demarshal it (dbus_message_demarshal), so it never reaches DBusKit's decoder"
                : nil
        }
    ]

    /// Checks the files; returns the exit status (0: all passed, 1: one was refused or unreadable).
    static func run(target: String, paths: [String]) -> Int32 {
        var status: Int32 = 0
        var passed = 0
        for path in paths {
            guard let bytes = read(path) else {
                print("REFUSED \(path): cannot read it")
                status = 1
                continue
            }
            FuzzTargets.run(target, bytes)
            if let why = gates[target]?(bytes) {
                print("REFUSED \(path): \(why)")
                status = 1
            } else {
                passed += 1
            }
        }
        if paths.isEmpty {
            print("\(target): no seeds")
            status = 1
        } else {
            print("\(target): \(passed) of \(paths.count) seeds pass\(gates[target] == nil ? "" : " the gate")")
        }
        return status
    }

    /// The bytes of a file, nil when it cannot be opened.
    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }
}
