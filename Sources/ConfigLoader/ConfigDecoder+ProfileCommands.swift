import BridgeCore
import YAMLKit

/// A profile's `commands:`: each a topic segment, with its steps, the answer it expects and its
/// parameters' declared ranges.
extension ConfigDecoder {
    /// The commands in file order. `scope.subscribed` is what the connection steps subscribe: a
    /// command's `wait_notify` and `expect` may use those and its own earlier subscriptions.
    func decodeProfileCommands(_ value: Located, scope: ProfileScope) throws(ConfigError) -> [ProfileCommand] {
        var commands: [ProfileCommand] = []
        for entry in try namedEntries(value) {
            let name = try profileName(entry, "command")
            let fields = try mapping(entry.value, known: ConfigKeys.profileCommand)
            guard let stepsNode = fields("steps") else {
                throw error(.missingKey, "missing required key 'steps' in '\(entry.value.path)'", at: entry.value.mark)
            }
            var own = scope
            var command = ProfileCommand(name: name, steps: try decodeProfileSteps(stepsNode, scope: &own, parameters: true))
            if let node = fields("expect") { command.expect = try decodeProfileExpect(node, scope: own) }
            if let node = fields("parameters") {
                command.parameters = try decodeProfileParameters(node, used: command.parameterNames)
            }
            commands.append(command)
        }
        return commands
    }

    /// `expect: { notify: UUID, first_byte: {"01": ok, "07": password_required}, timeout: 5s }`.
    func decodeProfileExpect(_ value: Located, scope: ProfileScope) throws(ConfigError) -> ProfileExpect {
        let fields = try mapping(value, known: ConfigKeys.profileExpect)
        guard let notifyNode = fields("notify") else {
            throw error(.missingKey, "missing required key 'notify' in '\(value.path)'", at: value.keyMark)
        }
        let characteristic = try uuid(notifyNode)
        try requireSubscribed(characteristic, notifyNode, scope: scope)
        guard let answersNode = fields("first_byte") else {
            throw error(.missingKey, "missing required key 'first_byte' in '\(value.path)'", at: value.keyMark)
        }
        var answers: [(key: String, target: String)] = []
        for entry in try firstByteEntries(answersNode) {
            let answer = try string(entry.value)
            if let problem = TopicMapper.segmentProblem(answer) {
                throw error(.invalidValue, "invalid answer '\(answer)' for '\(entry.value.path)': \(problem)", at: entry.value.mark)
            }
            answers.append((entry.name, answer))
        }
        let table: ProfileFirstByte<String>
        do throws(ProfileCodecError) {
            table = try ProfileFirstByte(answers)
        } catch {
            throw codecError(error, in: answersNode)
        }
        var expect = ProfileExpect(characteristic: characteristic, answers: table)
        if let node = fields("timeout") { expect.timeout = try duration(node) }
        if let node = fields("offset") { expect.offset = try integer(node, in: 0...511) }
        return expect
    }

    /// `parameters: { position: { min: 0, max: 100, unit: "%", step: 1 } }`: each a parameter the
    /// command's templates use.
    func decodeProfileParameters(_ value: Located, used: [String]) throws(ConfigError) -> [String: ProfileParameter] {
        var parameters: [String: ProfileParameter] = [:]
        for entry in try namedEntries(value) {
            guard used.contains(entry.name) else {
                let otherwise = used.isEmpty ? " (they take none)" : " (they use: \(used.joined(separator: ", ")))"
                throw error(
                    .invalidValue,
                    "parameter '\(entry.name)' is not used by the command's templates"
                        + Self.suggestion(for: entry.name, among: used, otherwise: otherwise),
                    at: entry.key.mark)
            }
            let fields = try mapping(entry.value, known: ConfigKeys.profileParameter)
            var parameter = ProfileParameter()
            switch (fields("min"), fields("max")) {
            case (nil, nil): break
            case (let low?, let high?):
                let (a, b) = (try number(low), try number(high))
                guard a <= b else { throw error(.invalidValue, "'\(low.path)' must not be above '\(high.path)'", at: low.mark) }
                parameter.range = a...b
            case (let one?, nil), (nil, let one?):
                throw error(.invalidValue, "'\(one.path)' needs both 'min' and 'max'", at: one.mark)
            }
            if let node = fields("unit") { parameter.unit = try nonEmptyString(node) }
            if let node = fields("step") {
                let step = try number(node)
                guard step > 0 else { throw error(.invalidValue, "'\(node.path)' must be greater than zero", at: node.mark) }
                parameter.step = step
            }
            parameters[entry.name] = parameter
        }
        return parameters
    }
}
