extension ShippedProfiles {
    /// Every shipped profile: its id and its YAML text, in id order (written by scripts/shipped-profiles).
    public static let all: [(id: String, yaml: String)] = [
        ("airthings_wave_plus", airthingsWavePlus),
        ("am43_blind", am43Blind),
        ("eq3_thermostat", eq3Thermostat),
        ("inkbird_ibbq", inkbirdIbbq),
        ("radoneye_rd200", radoneyeRd200),
        ("radoneye_rd200_v1", radoneyeRd200V1),
        ("switchbot_bot", switchbotBot),
        ("switchbot_curtain", switchbotCurtain),
        ("xiaomi_lywsd03mmc", xiaomiLywsd03mmc),
        ("xiaomi_miflora", xiaomiMiflora),
    ]
}
