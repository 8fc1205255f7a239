import BridgeCore
import YAMLKit

/// `profiles_dir`, and a device entry's `profile` and `profile_options` (SPEC §15).
extension ConfigDecoder {
    /// The service name §15's topics reserve: `{base}/{device}/command/{name}/set` runs a profile
    /// command, so no service may be published under that segment.
    static let reservedServiceName = "command"

    /// Reads `profiles_dir` and loads the catalog (``catalog``); a catalog that fails leaves the
    /// shipped profiles for the devices, and its errors are collected.
    mutating func decodeProfilesDir(_ node: Located?, into config: inout BridgeConfig, errors: inout [ConfigError]) {
        var directory: String?
        do {
            if let node {
                directory = try nonEmptyString(node)
                config.profilesDir = directory!
            }
        } catch {
            errors.append(error)
            return
        }
        do {
            let catalog = try self.catalog(directory)
            profiles = catalog.profiles
            warnings.append(contentsOf: catalog.warnings)
        } catch {
            errors.append(contentsOf: error.all)
            profiles = (try? ProfileCatalog.shipped().profiles) ?? [:]
        }
        config.profiles = profiles
    }

    /// The entry's `profile` bound with its `profile_options`, or nil without `profile`.
    func decodeDeviceProfile(_ fields: Fields) throws(ConfigError) -> DeviceProfileBinding? {
        guard let node = fields("profile") else {
            if let options = fields("profile_options") {
                throw error(.ignoredSetting, "'\(options.path)' needs 'profile'", at: options.keyMark)
            }
            return nil
        }
        let id = try string(node)
        guard let profile = profiles[id] else {
            let known = profiles.keys.sorted()
            let otherwise = known.isEmpty ? "" : " (known: \(known.joined(separator: ", ")))"
            throw error(.invalidValue, "unknown profile '\(id)'" + Self.suggestion(for: id, among: known, otherwise: otherwise), at: node.mark)
        }
        var options: [String: String] = [:]
        let optionsNode = fields("profile_options")
        if let optionsNode {
            for entry in try namedEntries(optionsNode) {
                guard let option = profile.options[entry.name] else {
                    let declared = profile.options.keys.sorted()
                    let otherwise = declared.isEmpty ? " (it declares none)" : " (it declares: \(declared.joined(separator: ", ")))"
                    throw error(
                        .unknownKey,
                        "profile '\(id)' has no option '\(entry.name)'"
                            + Self.suggestion(for: entry.name, among: declared, otherwise: otherwise),
                        at: entry.key.mark)
                }
                let value = Self.isNull(entry.value.node) ? "" : try string(entry.value)
                if value.isEmpty { continue }  // `${BOT_PASSWORD:-}`: not set
                if option.kind == .integer, Int64(value) == nil {
                    throw error(
                        .wrongType, "expected an integer for '\(entry.value.path)' (option of profile '\(id)'), found '\(value)'",
                        at: entry.value.mark)
                }
                options[entry.name] = value
            }
        }
        for name in profile.options.keys.sorted() where !profile.options[name]!.optional && options[name] == nil {
            throw error(
                .missingKey, "profile '\(id)' needs option '\(name)' in 'profile_options'",
                at: optionsNode?.mark ?? node.keyMark)
        }
        return DeviceProfileBinding(profile: profile, options: options)
    }
}
