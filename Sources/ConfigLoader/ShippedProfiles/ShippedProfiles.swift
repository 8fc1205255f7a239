/// The device profiles compiled into the bridge (SPEC §15 "Shipped profiles"): each the text of
/// `profiles/<id>.yaml` at the repository root, kept as a Swift raw string so that the bridge needs
/// no resource files (SwiftPM resources need Foundation's Bundle).
///
/// Adding a profile: write `profiles/<id>.yaml` and run `scripts/shipped-profiles`, which writes its
/// copy `ShippedProfiles+<Id>.swift` (a raw string of the file's text) and the list ``all`` in
/// `ShippedProfiles+All.swift`.
///
/// `ShippedProfilesTests` compares every copy with its file byte for byte, and loads each one.
public enum ShippedProfiles {}
