import BridgeBase
import BridgeCore
import YAMLKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The device profiles a configuration can use (SPEC §15): the shipped ones and every `*.yaml` of
/// `profiles_dir`, by id. A user profile with a shipped id replaces the shipped one (a warning says
/// so); two user files with one id are an error. Every file is checked, used or not, and every
/// file's error is reported (``ConfigError/further``).
public struct ProfileCatalog: Sendable {
    /// The profiles by id.
    public var profiles: [String: DeviceProfile]
    /// Notices: a user profile that replaces a shipped one.
    public var warnings: [ConfigError] = []

    /// Creates a catalog of `profiles`.
    public init(profiles: [String: DeviceProfile], warnings: [ConfigError] = []) {
        self.profiles = profiles
        self.warnings = warnings
    }

    /// The file name shipped profiles are parsed with (in their errors): `<shipped>/<id>.yaml`.
    public static func shippedFileName(_ id: String) -> String { "<shipped>/\(id).yaml" }

    /// The shipped profiles, parsed once.
    static let shippedResult: Result<[String: DeviceProfile], ConfigError> = {
        var profiles: [String: DeviceProfile] = [:]
        var errors: [ConfigError] = []
        for (id, yaml) in ShippedProfiles.all {
            do throws(ConfigError) {
                var profile = try ProfileCatalog.parse(yaml: yaml, fileName: ProfileCatalog.shippedFileName(id)).profile
                profile.source = .shipped
                profiles[profile.id] = profile
            } catch {
                errors.append(contentsOf: error.all)
            }
        }
        if var first = errors.first {
            first.further = Array(errors.dropFirst())
            return .failure(first)
        }
        return .success(profiles)
    }()

    /// The shipped profiles alone (no file is read).
    /// - Throws: ``ConfigError`` when a shipped profile does not load (a bug `ShippedProfilesTests` catches).
    public static func shipped() throws(ConfigError) -> ProfileCatalog {
        ProfileCatalog(profiles: try shippedResult.get())
    }

    /// The shipped profiles and those of `directory`'s `*.yaml` files (in name order).
    /// - Parameters:
    ///   - directory: `profiles_dir`, already resolved against the configuration's directory.
    ///   - required: whether a missing directory is an error (`profiles_dir` given) or means no
    ///     user profiles (the default directory).
    /// - Throws: ``ConfigError``: the first error, the others in ``ConfigError/further``.
    public static func load(directory: String, required: Bool) throws(ConfigError) -> ProfileCatalog {
        var catalog = try shipped()
        let files: [String]
        switch listYAMLFiles(directory) {
        case .success(let names): files = names
        case .failure(let reason):
            if !required, reason == .missing { return catalog }
            throw ConfigError(
                code: .unreadableFile, file: directory, line: 0, column: 0,
                message: reason == .missing ? "no such directory (profiles_dir)" : "cannot read the directory (profiles_dir)")
        }
        var errors: [ConfigError] = []
        var userFiles: [String: String] = [:]
        for name in files {
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            do throws(ConfigError) {
                let (profile, idMark) = try loadFile(path)
                if let first = userFiles[profile.id] {
                    throw ConfigError(
                        code: .duplicateName, file: path, line: idMark.line, column: idMark.column,
                        message: "profile id '\(profile.id)' is already defined in \(first)")
                }
                userFiles[profile.id] = path
                if catalog.profiles[profile.id]?.source == .shipped {
                    catalog.warnings.append(
                        ConfigError(
                            code: .duplicateName, file: path, line: idMark.line, column: idMark.column,
                            message: "profile '\(profile.id)' replaces the shipped one"))
                }
                catalog.profiles[profile.id] = profile
            } catch {
                errors.append(contentsOf: error.all)
            }
        }
        if var first = errors.first {
            first.further = Array(errors.dropFirst())
            throw first
        }
        return catalog
    }

    /// One profile file.
    static func loadFile(_ path: String) throws(ConfigError) -> (profile: DeviceProfile, idMark: ConfigDecoder.Position) {
        guard let bytes = try? BridgeBase.readFile(path).get() else {
            throw ConfigError(code: .unreadableFile, file: path, line: 0, column: 0, message: "cannot read the file")
        }
        guard UTF8Validation.isValid(bytes) else {
            throw ConfigError(code: .unreadableFile, file: path, line: 0, column: 0, message: "the file is not valid UTF-8")
        }
        return try parse(yaml: String(decoding: bytes, as: UTF8.self), fileName: path)
    }

    /// One profile from YAML text, named `fileName` in its errors (and in its ``DeviceProfile/source``).
    /// `${X}` stays as written: profiles take their secrets through `profile_options`.
    static func parse(yaml: String, fileName: String) throws(ConfigError) -> (profile: DeviceProfile, idMark: ConfigDecoder.Position) {
        var decoder = ConfigDecoder(fileName: fileName, environment: [:], hostName: "")
        decoder.expandsVariables = false
        let root: YAMLNode?
        do {
            root = try YAMLParser.compose(yaml)
        } catch {
            throw decoder.yamlError(error, yaml: yaml)
        }
        guard let root else { throw decoder.error(.missingKey, "missing required key 'id' (the file is empty)", at: nil) }
        let located = ConfigDecoder.Located(node: root, path: "")
        let profile = try decoder.decodeProfile(located)
        var idMark = ConfigDecoder.Position(line: 1, column: 1)
        if let fields = try? decoder.mapping(located, known: ConfigKeys.profile), let mark = fields("id")?.mark { idMark = mark }
        return (profile, idMark)
    }

    /// Parses one profile from YAML text (a user profile file's content), for tools and tests.
    /// - Throws: ``ConfigError`` at `fileName:line:column`.
    public static func parseProfile(yaml: String, fileName: String) throws(ConfigError) -> DeviceProfile {
        try parse(yaml: yaml, fileName: fileName).profile
    }

    /// The line `check-config` prints: `profiles: 9 shipped, 2 from /etc/ble-mqtt-bridge/profiles
    /// (switchbot_bot replaced)`.
    public static func summary(of config: BridgeConfig) -> String {
        let shippedIDs = Set(ShippedProfiles.all.map(\.id))
        let user = config.profiles.values.filter { $0.source != .shipped }
        let replaced = user.map(\.id).filter(shippedIDs.contains).sorted()
        var line = "profiles: \(shippedIDs.count) shipped, \(user.count) from \(config.profilesDir)"
        if !replaced.isEmpty { line += " (\(replaced.joined(separator: ", ")) replaced)" }
        return line
    }

    enum ListFailure: Error { case missing, unreadable }

    /// The names of the `*.yaml` files of `directory` (not hidden ones), sorted.
    static func listYAMLFiles(_ directory: String) -> Result<[String], ListFailure> {
        guard let dir = opendir(directory) else { return .failure(errno == ENOENT ? .missing : .unreadable) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".yaml"), !name.hasPrefix(".") { names.append(name) }
        }
        return .success(names.sorted())
    }
}
