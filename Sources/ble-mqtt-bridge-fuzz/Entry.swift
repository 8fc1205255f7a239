import DBusKit

#if canImport(Glibc)
import Glibc
#endif

#if FUZZING
// Built by scripts/fuzz with coverage instrumentation, AddressSanitizer and libFuzzer's driver
// (libclang_rt.fuzzer_no_main): main hands control to libFuzzer, which calls fuzzOneInput for
// every input; FUZZ_TARGET names the parser.
let fuzzTarget: String = getenv("FUZZ_TARGET").map { String(cString: $0) } ?? "json"

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// libFuzzer's entry for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    FuzzTargets.run(fuzzTarget, bytes)
    return 0
}

@main
struct FuzzDriver {
    static func main() {
        let args = CommandLine.arguments
        if args.count >= 2, args[1] == "--check-seeds" {
            guard args.count >= 3 else {
                print("usage: ble-mqtt-bridge-fuzz --check-seeds TARGET FILE...")
                exit(64)
            }
            exit(SeedCheck.run(target: args[2], paths: Array(args.dropFirst(3))))
        }
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) })
    }
}
#else
/// Without libFuzzer: replays corpus files through a target (`ble-mqtt-bridge-fuzz TARGET FILE...`),
/// which is how CI checks that no corpus entry crashes; `--check-seeds TARGET FILE...` also checks
/// that each passes the target's gate (``SeedCheck``).
@main
struct FuzzReplay {
    static func main() {
        let args = Array(CommandLine.arguments.dropFirst())
        if args.count == 2, args[0] == "--write-dbus-sample" {
            // A seed for the dbus target: a real PropertiesChanged signal as libdbus marshals it.
            let bytes = DBusFuzzing.sampleMessage([0x16, 0x48, 0x00])
            guard let file = fopen(args[1], "wb") else { exit(1) }
            _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            exit(0)
        }
        if args.count >= 2, args[0] == "--check-seeds" {
            exit(SeedCheck.run(target: args[1], paths: Array(args.dropFirst(2))))
        }
        guard let target = args.first else {
            print("usage: ble-mqtt-bridge-fuzz TARGET FILE... | --check-seeds TARGET FILE... (targets: \(FuzzTargets.all.keys.sorted().joined(separator: ", ")))")
            exit(64)
        }
        var count = 0
        for path in args.dropFirst() {
            guard let bytes = SeedCheck.read(path) else { continue }
            FuzzTargets.run(target, bytes)
            count += 1
        }
        print("\(target): \(count) inputs replayed")
    }
}
#endif
