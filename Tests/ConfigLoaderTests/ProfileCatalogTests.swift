import Foundation
import Testing

@testable import BridgeCore
@testable import ConfigLoader

/// `profiles_dir` (SPEC §15): the shipped profiles and the directory's files, a shipped id
/// replaced, duplicates and broken files refused with every error, the directory found relative to
/// the configuration; and the shipped Swift copies equal to `profiles/*.yaml`.
@Suite struct ProfileCatalogTests {
    /// A fresh temporary directory with `files` (name → text) in `profiles/`, and a bridge.yaml.
    static func directory(_ files: [String: String], config: String? = nil) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("profiles-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/profiles", withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: root + "/profiles/" + name, atomically: true, encoding: .utf8) }
        if let config { try config.write(toFile: root + "/bridge.yaml", atomically: true, encoding: .utf8) }
        return root
    }

    static let userMiflora = "id: xiaomi_miflora\nconnection: always\n"

    @Test func userProfilesReplaceAndAdd() throws {
        let root = try Self.directory(["b.yaml": Self.userMiflora, "a.yaml": ProfileLoaderTests.bot, "notes.txt": "not yaml"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let catalog = try ProfileCatalog.load(directory: root + "/profiles", required: true)
        #expect(catalog.profiles["bot"]?.source == .file(root + "/profiles/a.yaml"))
        #expect(catalog.profiles["xiaomi_miflora"]?.connection == .always)
        #expect(catalog.profiles["xiaomi_miflora"]?.source == .file(root + "/profiles/b.yaml"))
        #expect(catalog.warnings.map(\.description) == ["\(root)/profiles/b.yaml:1:5: profile 'xiaomi_miflora' replaces the shipped one"])
    }

    @Test func duplicateIDsAndBrokenFilesAreAllReported() throws {
        let root = try Self.directory([
            "a.yaml": ProfileLoaderTests.bot, "b.yaml": "# the same id\nid: bot\n", "c.yaml": "id: c\nconnection: sometimes\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let dir = root + "/profiles"
        #expect(throws: ConfigError.self) { try ProfileCatalog.load(directory: dir, required: true) }
        do {
            _ = try ProfileCatalog.load(directory: dir, required: true)
        } catch {
            #expect(error.all.map(\.description) == [
                "\(dir)/b.yaml:2:5: profile id 'bot' is already defined in \(dir)/a.yaml",
                "\(dir)/c.yaml:2:13: 'connection' must be poll or always, not 'sometimes'",
            ])
            #expect(error.code == .duplicateName)
        }
    }

    @Test func missingDirectories() throws {
        let shipped = try ProfileCatalog.load(directory: "/nonexistent/profiles", required: false)
        #expect(shipped.profiles.keys.sorted() == ShippedProfiles.all.map(\.id).sorted())
        #expect(throws: ConfigError.self) { try ProfileCatalog.load(directory: "/nonexistent/profiles", required: true) }
        do {
            _ = try ProfileCatalog.load(directory: "/nonexistent/profiles", required: true)
        } catch {
            #expect(error.description == "/nonexistent/profiles: no such directory (profiles_dir)")
            #expect(error.code == .unreadableFile)
        }
    }

    /// A relative `profiles_dir` is the config file's directory's; check-config's summary says what loaded.
    @Test func relativeDirectoryThroughTheConfigFile() throws {
        let devices = "devices:\n  - { match: { address: \"E1:2B:3C:4D:5E:6F\" }, profile: bot }\n"
        let root = try Self.directory(
            ["bot.yaml": ProfileLoaderTests.bot, "miflora.yaml": Self.userMiflora],
            config: "mqtt:\n  url: mqtt://localhost\nprofiles_dir: profiles\n" + devices)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let config = try BridgeConfig.load(path: root + "/bridge.yaml", environment: [:], hostName: "h")
        #expect(config.profilesDir == root + "/profiles")
        #expect(config.devices.first?.profile?.id == "bot")
        #expect(config.warnings.count == 1)
        #expect(
            ProfileCatalog.summary(of: config)
                == "profiles: \(ShippedProfiles.all.count) shipped, 2 from \(root)/profiles (xiaomi_miflora replaced)")
    }

    /// The broken profile's error comes out of the bridge's own load with its position, even
    /// when no device uses it.
    @Test func anUnusedBrokenProfileFailsTheLoad() throws {
        let root = try Self.directory(
            ["x.yaml": "id: x\ndecode:\n  d: { struct: \"<hz\", fields: {} }\n"],
            config: "mqtt:\n  url: mqtt://localhost\nprofiles_dir: profiles\n")
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(throws: ConfigError.self) { try BridgeConfig.load(path: root + "/bridge.yaml", environment: [:], hostName: "h") }
        do {
            _ = try BridgeConfig.load(path: root + "/bridge.yaml", environment: [:], hostName: "h")
        } catch {
            #expect(error.description.hasPrefix("\(root)/profiles/x.yaml:3:19: decode.d.struct: unknown format code 'z'"))
        }
    }

    // MARK: - Shipped profiles

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardizedFileURL.path

    /// Each Swift copy is its `profiles/<id>.yaml` byte for byte, and every file has a copy.
    @Test func swiftCopiesMatchFiles() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.repositoryRoot + "/profiles")
            .filter { $0.hasSuffix(".yaml") }.sorted()
        #expect(files == ShippedProfiles.all.map { $0.id + ".yaml" }.sorted())
        for (id, yaml) in ShippedProfiles.all {
            let data = try Data(contentsOf: URL(fileURLWithPath: Self.repositoryRoot + "/profiles/\(id).yaml"))
            #expect(Array(yaml.utf8) == Array(data), "ShippedProfiles+\(id) differs from profiles/\(id).yaml")
        }
    }

    /// Every shipped profile loads, under its own id, marked shipped.
    @Test func everyShippedProfileLoads() throws {
        let catalog = try ProfileCatalog.shipped()
        #expect(catalog.profiles.count == ShippedProfiles.all.count)
        for (id, _) in ShippedProfiles.all {
            #expect(catalog.profiles[id]?.id == id)
            #expect(catalog.profiles[id]?.source == .shipped)
        }
    }

    /// The README's worked example of a user profile loads, and decodes the frame its comment describes.
    @Test func readmeExampleLoads() throws {
        let readme = try String(contentsOfFile: Self.repositoryRoot + "/README.md", encoding: .utf8)
        let start = try #require(readme.range(of: "# /etc/ble-mqtt-bridge/profiles/acme_kettle.yaml\n"))
        let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let yaml = String(readme[start.upperBound..<end.lowerBound])
        let profile = try ProfileCatalog.parseProfile(yaml: yaml, fileName: "acme_kettle.yaml")
        #expect(profile.id == "acme_kettle")
        #expect(profile.command("boil")?.parameterNames == ["temperature"])
        // a5 01, 92.5 °C, target 100, heating
        let values = try #require(profile.decodes["state"]).decode([0xa5, 0x01, 0x9d, 0x03, 100, 0x01])
        #expect(values == ["temperature": .number(92.5), "target_temperature": .integer(100), "heating": .bool(true)])
    }
}
