/// The value names the bridge knows (SPEC §7 and §13): the names its advertisement decoders
/// publish and Home Assistant has a kind for. A profile's decode fields must use one of them (or a
/// name the profile declares in `values:`), so that the same quantity has the same name whatever
/// device measures it.
public enum ValueNames {
    /// Every known name (without `_N` suffixes).
    public static let all: Set<String> = {
        var names = Set(HomeAssistantSensorKind.table.keys)
        names.formUnion(HomeAssistantEntities.binaryDeviceClasses)
        names.formUnion(HomeAssistantEntities.binaryDeviceClassNames.keys)
        names.formUnion(HomeAssistantEntities.eventTypes.keys)
        names.formUnion(BTHomeObject.all.map(\.name))
        return names
    }()

    /// Whether `name` is a known value name, or one with a numeric `_N` suffix
    /// (`temperature_probe_1`, `temperature_2`).
    public static func isKnown(_ name: String) -> Bool {
        all.contains(name) || all.contains(HomeAssistantEntities.baseName(name))
    }
}
