import Foundation
import Yams

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension BridgeConfig {
    /// Reads and parses a configuration file.
    ///
    /// Relative paths in `state_file` and `mqtt.tls` are resolved against the
    /// directory of `path`, so a config file and its certificates can move together.
    /// - Parameters:
    ///   - path: the file; it also names the file in errors.
    ///   - environment: the variables for `${VAR}` expansion.
    ///   - hostName: used for the default client id `ble-mqtt-bridge-<hostname>`.
    /// - Throws: ``ConfigError``; its description is `file:line:column: message`.
    public static func load(
        path: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        hostName: String = BridgeConfig.currentHostName()
    ) throws(ConfigError) -> BridgeConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason: String
            if !FileManager.default.fileExists(atPath: path) {
                reason = "no such file"
            } else if !FileManager.default.isReadableFile(atPath: path) {
                reason = "permission denied"
            } else {
                reason = "cannot read the file"
            }
            throw ConfigError(code: .unreadableFile, file: path, line: 0, column: 0, message: reason)
        }
        let bytes = [UInt8](data)
        guard UTF8Validation.isValid(bytes) else {
            throw ConfigError(code: .unreadableFile, file: path, line: 0, column: 0, message: "the file is not valid UTF-8")
        }
        var config = try parse(
            yaml: String(decoding: bytes, as: UTF8.self), fileName: path, environment: environment, hostName: hostName)
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            func resolve(_ file: String?) -> String? {
                guard let file, !file.hasPrefix("/") else { return file }
                return (directory as NSString).appendingPathComponent(file)
            }
            config.stateFile = resolve(config.stateFile)
            if var tls = config.mqtt.tls {
                tls.caFile = resolve(tls.caFile)
                tls.certFile = resolve(tls.certFile)
                tls.keyFile = resolve(tls.keyFile)
                config.mqtt.tls = tls
            }
        }
        return config
    }

    /// Parses a configuration from YAML text.
    ///
    /// Paths are kept as written.
    /// - Parameters:
    ///   - yaml: the YAML text.
    ///   - fileName: the name used in errors.
    ///   - environment: the variables for `${VAR}` expansion.
    ///   - hostName: used for the default client id `ble-mqtt-bridge-<hostname>`.
    /// - Throws: ``ConfigError``; its description is `file:line:column: message`.
    public static func parse(
        yaml: String,
        fileName: String = "bridge.yaml",
        environment: [String: String] = ProcessInfo.processInfo.environment,
        hostName: String = BridgeConfig.currentHostName()
    ) throws(ConfigError) -> BridgeConfig {
        var decoder = ConfigDecoder(fileName: fileName, environment: environment, hostName: hostName)
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml, .default, .default, .utf8)
        } catch let error as YamlError {
            throw decoder.yamlError(error, yaml: yaml)
        } catch {
            throw ConfigError(code: .yamlSyntax, file: fileName, line: 1, column: 1, message: "invalid YAML: \(error)")
        }
        return try decoder.decode(root: root)
    }

    /// This machine's host name (`gethostname`), or `"localhost"` when unavailable.
    public static func currentHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }
}
