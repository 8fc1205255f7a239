import BridgeCore
import YAMLKit

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
        environment: [String: String] = BridgeConfig.processEnvironment(),
        hostName: String = BridgeConfig.currentHostName()
    ) throws(ConfigError) -> BridgeConfig {
        guard let bytes = readFile(path) else {
            let reason: String
            var status = stat()
            if stat(path, &status) != 0 {
                reason = "no such file"
            } else if access(path, R_OK) != 0 {
                reason = "permission denied"
            } else {
                reason = "cannot read the file"
            }
            throw ConfigError(code: .unreadableFile, file: path, line: 0, column: 0, message: reason)
        }
        guard UTF8Validation.isValid(bytes) else {
            throw ConfigError(code: .unreadableFile, file: path, line: 0, column: 0, message: "the file is not valid UTF-8")
        }
        let directory = directory(of: path)
        func resolve(_ file: String?) -> String? {
            guard let file, !directory.isEmpty, !file.hasPrefix("/"), !file.isEmpty else { return file }
            return directory.hasSuffix("/") ? directory + file : directory + "/" + file
        }
        var config = try parse(
            yaml: String(decoding: bytes, as: UTF8.self), fileName: path, environment: environment, hostName: hostName
        ) { dir throws(ConfigError) in
            // The default written out (bridge.yaml's example) is as optional as the default left out.
            let given = dir.flatMap { $0 == BridgeConfig.defaultProfilesDir ? nil : $0 }
            return try ProfileCatalog.load(directory: resolve(dir) ?? BridgeConfig.defaultProfilesDir, required: given != nil)
        }
        if !directory.isEmpty {
            config.profilesDir = resolve(config.profilesDir) ?? config.profilesDir
            config.stateFile = resolve(config.stateFile)
            config.devicesFile = resolve(config.devicesFile)
            config.health.metricsFile = resolve(config.health.metricsFile)
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
    /// Paths are kept as written. No file is read: `profiles_dir` is not loaded, devices refer to
    /// `profiles` (nil: the shipped profiles).
    /// - Parameters:
    ///   - yaml: the YAML text.
    ///   - fileName: the name used in errors.
    ///   - environment: the variables for `${VAR}` expansion.
    ///   - hostName: used for the default client id `ble-mqtt-bridge-<hostname>`.
    ///   - profiles: the profile catalog devices may name; nil for the shipped profiles.
    /// - Throws: ``ConfigError``; its description is `file:line:column: message`.
    public static func parse(
        yaml: String,
        fileName: String = "bridge.yaml",
        environment: [String: String] = BridgeConfig.processEnvironment(),
        hostName: String = BridgeConfig.currentHostName(),
        profiles: [String: DeviceProfile]? = nil
    ) throws(ConfigError) -> BridgeConfig {
        try parse(yaml: yaml, fileName: fileName, environment: environment, hostName: hostName) { _ throws(ConfigError) in
            if let profiles { return ProfileCatalog(profiles: profiles) }
            return try ProfileCatalog.shipped()
        }
    }

    /// Parses with `catalog` giving the profiles for `profiles_dir` (nil when not given).
    static func parse(
        yaml: String, fileName: String, environment: [String: String], hostName: String,
        catalog: @escaping (_ directory: String?) throws(ConfigError) -> ProfileCatalog
    ) throws(ConfigError) -> BridgeConfig {
        var decoder = ConfigDecoder(fileName: fileName, environment: environment, hostName: hostName)
        decoder.catalog = catalog
        let root: YAMLNode?
        do {
            root = try YAMLParser.compose(yaml)
        } catch {
            throw decoder.yamlError(error, yaml: yaml)
        }
        return try decoder.decode(root: root)
    }

    /// The whole content of the file at `path`, or `nil` when it cannot be opened or read.
    static func readFile(_ path: String) -> [UInt8]? {
        try? BridgeBase.readFile(path).get()
    }

    /// The directory part of `path` (`/etc` for `/etc/bridge.yaml`, `/` for `/bridge.yaml`,
    /// `""` for `bridge.yaml`), with repeated slashes collapsed.
    static func directory(of path: String) -> String {
        let components = path.split(separator: "/")
        let root = path.hasPrefix("/") ? "/" : ""
        guard components.count > 1 else { return root }
        return root + components.dropLast().joined(separator: "/")
    }
}
