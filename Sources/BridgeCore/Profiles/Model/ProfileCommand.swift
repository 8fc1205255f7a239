/// A profile's named command (SPEC §15 `commands:`), run by `{base}/{device}/command/{name}/set`.
public struct ProfileCommand: Sendable, Hashable {
    /// The name, the topic's `{name}` segment.
    public var name: String
    /// What runs, in order, in the device's GATT queue.
    public var steps: [ProfileStep]
    /// The answer the device must give, when the command waits for one.
    public var expect: ProfileExpect?
    /// Declared ranges of parameters (a parameter a template uses but this does not declare has
    /// its conversion's range).
    public var parameters: [String: ProfileParameter]

    /// Creates a command.
    public init(
        name: String, steps: [ProfileStep], expect: ProfileExpect? = nil, parameters: [String: ProfileParameter] = [:]
    ) {
        self.name = name
        self.steps = steps
        self.expect = expect
        self.parameters = parameters
    }

    /// The parameters its write templates use, in order of first use, each once.
    public var parameterNames: [String] {
        var seen = Set<String>()
        var names: [String] = []
        for step in steps {
            guard case .write(_, let template, _) = step.action else { continue }
            for name in template.parameters where seen.insert(name).inserted { names.append(name) }
        }
        return names
    }
}

/// The answer a command waits for: the next notification of `characteristic`, its first byte
/// (or the byte at ``offset``) naming the result (`ok`, or an error code such as `wrong_password`).
public struct ProfileExpect: Sendable, Hashable {
    /// The notifying characteristic.
    public var characteristic: BluetoothUUID
    /// First byte → answer name; `ok` is success.
    public var answers: ProfileFirstByte<String>
    /// How long the device has to answer (the command's deadline still applies); nil: 5 s.
    public var timeout: Duration?
    /// Which byte of the answer `answers` reads (`offset: 3` for an AM43's ACK in `9a 0d 01 5a cc`).
    public var offset: Int

    /// The answer that means success.
    public static let ok = "ok"

    /// Creates an expectation.
    public init(
        characteristic: BluetoothUUID, answers: ProfileFirstByte<String>, timeout: Duration? = nil, offset: Int = 0
    ) {
        self.characteristic = characteristic
        self.answers = answers
        self.timeout = timeout
        self.offset = offset
    }

    /// The answer name `payload` gives: the entry of its byte at ``offset``.
    /// - Throws: ``ProfileCodecError/Code/unknownFirstByte`` (or `tooShort`) for an answer the
    ///   profile does not list.
    public func answer(for payload: [UInt8]) throws(ProfileCodecError) -> String {
        try answers.target(for: offset == 0 ? payload : Array(payload.dropFirst(offset)))
    }
}

/// A command parameter's declared range and unit (for validation and Home Assistant's number).
public struct ProfileParameter: Sendable, Hashable {
    /// The accepted values.
    public var range: ClosedRange<Double>?
    /// The unit shown by Home Assistant.
    public var unit: String?
    /// The step of a Home Assistant number.
    public var step: Double?

    /// Creates a declaration.
    public init(range: ClosedRange<Double>? = nil, unit: String? = nil, step: Double? = nil) {
        self.range = range
        self.unit = unit
        self.step = step
    }
}

/// `cover:`: the commands and value that make a Home Assistant cover.
public struct ProfileCover: Sendable, Hashable {
    /// The command that opens.
    public var open: String?
    /// The command that closes.
    public var close: String?
    /// The command that stops.
    public var stop: String?
    /// The command that takes `{"position": N}` (0 closed … 100 open).
    public var position: String?
    /// The decoded value that is the position.
    public var positionValue: String?

    /// Creates a cover.
    public init(
        open: String? = nil, close: String? = nil, stop: String? = nil, position: String? = nil,
        positionValue: String? = nil
    ) {
        self.open = open
        self.close = close
        self.stop = stop
        self.position = position
        self.positionValue = positionValue
    }
}

/// `climate:`: the commands and values that make a Home Assistant thermostat.
public struct ProfileClimate: Sendable, Hashable {
    /// The command that takes `{"temperature": T}`.
    public var temperatureCommand: String
    /// The decoded value that is the target temperature.
    public var temperatureValue: String?
    /// The command that takes `{"mode": M}`, if any.
    public var modeCommand: String?
    /// The decoded value that is the mode.
    public var modeValue: String?
    /// The modes the mode command takes.
    public var modes: [String]
    /// The lowest target temperature.
    public var minTemperature: Double
    /// The highest target temperature.
    public var maxTemperature: Double
    /// The target temperature's step.
    public var temperatureStep: Double

    /// Creates a thermostat.
    public init(
        temperatureCommand: String, temperatureValue: String? = nil, modeCommand: String? = nil,
        modeValue: String? = nil, modes: [String] = [], minTemperature: Double = 5, maxTemperature: Double = 30,
        temperatureStep: Double = 0.5
    ) {
        self.temperatureCommand = temperatureCommand
        self.temperatureValue = temperatureValue
        self.modeCommand = modeCommand
        self.modeValue = modeValue
        self.modes = modes
        self.minTemperature = minTemperature
        self.maxTemperature = maxTemperature
        self.temperatureStep = temperatureStep
    }
}
