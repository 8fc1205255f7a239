import BridgeCore

#if canImport(Glibc)
import Glibc
#endif

/// `ble-mqtt-bridge web` (SPEC §14): runs the page's own executable, `ble-mqtt-bridge-web`, installed beside this one,
/// in place of this process (the bridge's binary links no HTTP server: its memory does not grow for the page).
struct WebPage {
    var arguments: [String]

    init(_ command: ParsedCommandLine) {
        arguments = ["--config", command.value("config") ?? BridgeCommandLine.configOption.defaultValue ?? "bridge.yaml"]
        if let listen = command.value("listen") { arguments += ["--listen", listen] }
        if let level = command.value("log-level") { arguments += ["--log-level", level] }
    }

    func run() throws {
        let path = Self.directoryOfThisExecutable() + "/" + BridgeCommandLine.webExecutable
        guard access(path, X_OK) == 0 else {
            printError("error: the page's executable \(path) is not there (install it beside ble-mqtt-bridge)")
            throw ExitStatus(1)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        printError("error: cannot run \(path): \(String(cString: strerror(errno)))")
        throw ExitStatus(1)
    }

    /// The directory of `/proc/self/exe` (`.` when it cannot be read).
    static func directoryOfThisExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return "." }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
