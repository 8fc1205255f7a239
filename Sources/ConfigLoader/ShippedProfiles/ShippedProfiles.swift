/// The device profiles compiled into the bridge (SPEC §15 "Shipped profiles"): each the text of
/// `profiles/<id>.yaml` at the repository root, kept as a Swift raw string so that the bridge needs
/// no resource files (SwiftPM resources need Foundation's Bundle).
///
/// Adding a profile is a two-file change:
/// 1. write `profiles/<id>.yaml`;
/// 2. copy it into `ShippedProfiles+<Id>.swift` as
///    `extension ShippedProfiles { static let <id> = #"""` + the file's text + an empty line +
///    `"""#` `}` (the empty line keeps the file's last newline), and add `("<id>", <id>)` to
///    ``all`` below.
///
/// `ShippedProfilesTests` compares every copy with its file byte for byte, and loads each one.
public enum ShippedProfiles {
    /// Every shipped profile: its id and its YAML text, in id order.
    public static let all: [(id: String, yaml: String)] = [
        ("xiaomi_miflora", xiaomiMiflora),
    ]
}
