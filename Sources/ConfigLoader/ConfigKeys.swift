import BridgeCore
import YAMLKit

/// The keys of `bridge.yaml`, section by section: the one list the decoder checks keys against
/// (an unknown key is an error with a suggestion), kept as data so that a test can compare it
/// with the keys the example `bridge.yaml` shows.
enum ConfigKeys {
    static let topLevel = [
        "mqtt", "bluetooth", "state_file", "homeassistant", "commands", "reconnect", "health", "log_level", "devices",
        "bridge", "cluster", "trackers", "profiles_dir", "management", "devices_file", "web",
    ]
    static let web = ["listen", "auth_token"]
    static let mqtt = ["url", "base_topic", "client_id", "username", "password", "tls", "protocol", "keepalive"]
    static let tls = ["ca_file", "cert_file", "key_file"]
    static let bluetooth = [
        "adapter", "adapters", "services", "scan_watchdog", "max_connections", "advertisements", "acquire_notify",
        "agent",
    ]
    static let homeAssistant = ["discovery", "prefix", "support_url"]
    static let commands = ["timeout", "queue", "allow"]
    static let reconnect = ["initial_delay", "max_delay"]
    static let health = ["interval", "metrics_file"]
    static let bridge = ["id"]
    static let cluster = ["enabled", "switch_margin", "switch_after"]
    static let device = [
        "match", "name", "characteristics", "services", "connection", "poll_interval", "listen", "advertisement",
        "only_services", "pairing", "passkey", "profile", "profile_options",
    ]
    static let match = ["address", "name"]
    static let characteristic = ["uuid", "name", "format", "poll", "write_types", "press", "min", "max"]
    static let service = ["uuid", "name"]
    static let advertisement = ["bindkey", "timeout"]
    static let tracker = ["name", "match", "away_after"]
    static let trackerMatch = ["address", "ibeacon", "irk"]

    // A profile file's keys (SPEC §15), apart from ``sections`` (the bridge file's keys).
    static let profile = [
        "id", "manufacturer", "model", "recognize", "connection", "interval", "options", "values", "steps", "decode",
        "commands", "cover", "climate",
    ]
    static let profileRecognize = ["name", "service_data", "services"]
    static let profileOption = ["type", "optional"]
    static let profileValue = ["unit", "device_class"]
    /// A step: one action key and an optional condition.
    static let profileStep = ["write", "read", "subscribe", "wait_notify", "sleep", "if", "unless"]
    static let profileStepActions = ["write", "read", "subscribe", "wait_notify", "sleep"]
    static let profileWrite = ["characteristic", "value", "response"]
    static let profileRead = ["characteristic", "decode"]
    static let profileWaitNotify = ["characteristic", "timeout", "decode"]
    static let profileDecode = ["struct", "fields", "first_byte", "bits", "repeat"]
    static let profileCommand = ["steps", "expect", "parameters"]
    static let profileExpect = ["notify", "first_byte", "timeout", "offset"]
    /// A field given as a mapping with options (`{scale: "/10", absent_if: [-10]}`).
    static let profileField = ["scale", "map", "absent_if", "valid"]
    static let profileParameter = ["min", "max", "unit", "step"]
    static let profileCover = ["open", "close", "stop", "position", "position_value"]
    static let profileClimate = [
        "temperature_command", "temperature_value", "mode_command", "mode_value", "modes", "min_temp", "max_temp",
        "temp_step",
    ]

    /// Every section: its path (`[]` for "each item of the list") and its keys.
    static let sections: [(path: String, keys: [String])] = [
        ("", topLevel), ("mqtt", mqtt), ("mqtt.tls", tls), ("bluetooth", bluetooth), ("homeassistant", homeAssistant),
        ("commands", commands), ("reconnect", reconnect), ("health", health), ("devices[]", device),
        ("devices[].match", match), ("devices[].characteristics[]", characteristic), ("devices[].services[]", service),
        ("devices[].advertisement", advertisement),
        ("bridge", bridge), ("cluster", cluster), ("trackers[]", tracker), ("trackers[].match", trackerMatch),
        ("web", web),
    ]

    /// Mappings whose keys the user chooses (a profile's option names): their keys are not paths.
    static let freeForm: Set<String> = ["devices[].profile_options"]

    /// Every key as a path: `mqtt`, `mqtt.tls.ca_file`, `devices[].characteristics[].uuid`.
    static var allPaths: Set<String> {
        Set(sections.flatMap { section in section.keys.map { section.path.isEmpty ? $0 : "\(section.path).\($0)" } })
    }

    /// The key paths (as in ``allPaths``) a YAML document uses: every mapping key, with `[]` for
    /// the items of a list. Nothing is checked against the schema.
    static func paths(inYAML text: String) throws(YAMLError) -> Set<String> {
        var paths = Set<String>()
        if let root = try YAMLParser.compose(text) { collect(root, prefix: "", into: &paths) }
        return paths
    }

    private static func collect(_ node: YAMLNode, prefix: String, into paths: inout Set<String>) {
        switch node {
        case .scalar: break
        case .sequence(let sequence):
            for item in sequence.items { collect(item, prefix: prefix + "[]", into: &paths) }
        case .mapping(let mapping):
            for entry in mapping.entries {
                guard case .scalar(let key) = entry.key else { continue }
                let path = prefix.isEmpty ? key.text : "\(prefix).\(key.text)"
                paths.insert(path)
                if !freeForm.contains(path) { collect(entry.value, prefix: path, into: &paths) }
            }
        }
    }
}
