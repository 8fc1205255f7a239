/// A profile bound to one device entry: its `profile_options`, and the steps and commands those
/// options select (`if:`/`unless:` are decided here, once, at config load).
public struct DeviceProfileBinding: Sendable, Hashable {
    /// The profile.
    public var profile: DeviceProfile
    /// The entry's `profile_options`.
    public var options: [String: String]
    /// The connection steps that run with these options.
    public var steps: [ProfileStep]
    /// The commands, each with the steps that run with these options.
    public var commands: [ProfileCommand]

    /// Binds `profile` with `options`.
    public init(profile: DeviceProfile, options: [String: String] = [:]) {
        self.profile = profile
        self.options = options
        self.steps = profile.steps.filter { $0.condition?.holds(options) ?? true }
        self.commands = profile.commands.map { command in
            var selected = command
            selected.steps = command.steps.filter { $0.condition?.holds(options) ?? true }
            return selected
        }
    }

    /// The profile's id.
    public var id: String { profile.id }

    /// The bound command named `name`.
    public func command(_ name: String) -> ProfileCommand? {
        commands.first { $0.name == name }
    }

    /// The characteristics the bound steps and commands touch.
    public var characteristics: Set<BluetoothUUID> {
        var uuids = Set(steps.compactMap(\.characteristic))
        for command in commands {
            uuids.formUnion(command.steps.compactMap(\.characteristic))
            if let expect = command.expect { uuids.insert(expect.characteristic) }
        }
        return uuids
    }
}
