import BridgeCore
import YAMLKit

/// A profile's `steps:` (connection steps, and each command's): one action per item, an optional
/// `if:`/`unless:`, and the references checked (decodes, options, an earlier `subscribe` for a
/// `wait_notify`).
extension ConfigDecoder {
    /// The steps of `value`, a list. `scope.subscribed` gains every `subscribe`'s characteristic;
    /// `parameters` says whether templates may take command parameters (`{position|u8}`).
    func decodeProfileSteps(_ value: Located, scope: inout ProfileScope, parameters: Bool) throws(ConfigError) -> [ProfileStep] {
        var steps: [ProfileStep] = []
        for item in try list(value) { steps.append(try decodeProfileStep(item, scope: &scope, parameters: parameters)) }
        return steps
    }

    func decodeProfileStep(_ item: Located, scope: inout ProfileScope, parameters: Bool) throws(ConfigError) -> ProfileStep {
        let fields = try mapping(item, known: ConfigKeys.profileStep)
        let actions = ConfigKeys.profileStepActions.filter { fields.entries[$0] != nil }
        guard actions.count == 1, let kind = actions.first, let node = fields.entries[kind] else {
            let message = actions.isEmpty
                ? "a step needs one of \(ConfigKeys.profileStepActions.joined(separator: ", ")) in '\(item.path)'"
                : "a step does one thing: '\(item.path)' has \(actions.joined(separator: " and "))"
            throw error(.invalidValue, message, at: item.mark)
        }
        var condition: ProfileStep.Condition?
        switch (fields("if"), fields("unless")) {
        case (let node?, nil): condition = .ifSet(try conditionOption(node, scope: scope))
        case (nil, let node?): condition = .unlessSet(try conditionOption(node, scope: scope))
        case (.some, let node?):
            throw error(.invalidValue, "a step takes 'if' or 'unless', not both", at: node.keyMark)
        case (nil, nil): break
        }
        let action: ProfileStep.Action
        switch kind {
        case "write":
            let f = try mapping(node, known: ConfigKeys.profileWrite)
            let characteristic = try requiredUUID(f, of: node)
            guard let valueNode = f("value") else {
                throw error(.missingKey, "missing required key 'value' in '\(node.path)'", at: node.mark)
            }
            let template = try decodeTemplate(valueNode, scope: scope, condition: condition, parameters: parameters)
            let response = try f("response").map { n throws(ConfigError) in try bool(n) }
            action = .write(characteristic: characteristic, value: template, response: response)
        case "read", "subscribe":
            let f = try mapping(node, known: ConfigKeys.profileRead)
            let characteristic = try requiredUUID(f, of: node)
            let decode = try f("decode").map { n throws(ConfigError) in try decodeReference(n, scope: scope) }
            if kind == "read" {
                action = .read(characteristic: characteristic, decode: decode)
            } else {
                action = .subscribe(characteristic: characteristic, decode: decode)
                scope.subscribed.insert(characteristic)
            }
        case "wait_notify":
            let f = try mapping(node, known: ConfigKeys.profileWaitNotify)
            let characteristic = try requiredUUID(f, of: node)
            try requireSubscribed(characteristic, f("characteristic")!, scope: scope)
            guard let timeoutNode = f("timeout") else {
                throw error(.missingKey, "missing required key 'timeout' in '\(node.path)' (e.g. timeout: 10s)", at: node.mark)
            }
            let timeout = try duration(timeoutNode)
            let decode = try f("decode").map { n throws(ConfigError) in try decodeReference(n, scope: scope) }
            action = .waitNotify(characteristic: characteristic, timeout: timeout, decode: decode)
        default:
            action = .sleep(try duration(node))
        }
        return ProfileStep(action, condition: condition, line: item.mark?.line ?? 0)
    }

    /// The required `characteristic` of a step.
    func requiredUUID(_ fields: Fields, of node: Located) throws(ConfigError) -> BluetoothUUID {
        guard let uuidNode = fields("characteristic") else {
            throw error(.missingKey, "missing required key 'characteristic' in '\(node.path)'", at: node.mark)
        }
        return try uuid(uuidNode)
    }

    /// A notification is waited for only on a characteristic a `subscribe` step subscribed
    /// earlier: the device notifies while the write that asks is still answered.
    func requireSubscribed(_ uuid: BluetoothUUID, _ node: Located, scope: ProfileScope) throws(ConfigError) {
        guard scope.subscribed.contains(uuid) else {
            throw error(
                .invalidValue,
                "'\(node.path)': characteristic \(uuid.shortForm) is not subscribed: add a 'subscribe' step for it before this one",
                at: node.mark)
        }
    }

    /// `decode: NAME`, a decode of the profile.
    func decodeReference(_ node: Located, scope: ProfileScope) throws(ConfigError) -> String {
        let name = try string(node)
        guard scope.decodes[name] != nil else {
            throw unknownName("decode", name, among: Array(scope.decodes.keys), at: node, hint: "; declare it under 'decode:'")
        }
        return name
    }

    /// `if: options.NAME` / `unless: options.NAME`: NAME a declared option.
    func conditionOption(_ node: Located, scope: ProfileScope) throws(ConfigError) -> String {
        let text = try string(node)
        guard text.hasPrefix("options."), text.count > "options.".count else {
            throw error(.invalidValue, "'\(node.path)' must be options.NAME (an option the profile declares), not '\(text)'", at: node.mark)
        }
        let name = String(text.dropFirst("options.".count))
        guard scope.options[name] != nil else {
            throw unknownName("option", name, among: Array(scope.options.keys), at: node, hint: "; declare it under 'options:'")
        }
        return name
    }

    /// A write template: it compiles, its options are declared (an optional one only in a step
    /// that runs `if:` it is set), and only a command's templates take parameters.
    func decodeTemplate(
        _ node: Located, scope: ProfileScope, condition: ProfileStep.Condition?, parameters: Bool
    ) throws(ConfigError) -> ProfileTemplate {
        let text = try string(node)
        let template: ProfileTemplate
        do throws(ProfileCodecError) {
            template = try ProfileTemplate(text)
        } catch {
            throw codecError(error, in: node)
        }
        for placeholder in template.placeholders {
            let column = placeholder.column
            switch placeholder.source {
            case .option(let name):
                guard let option = scope.options[name] else {
                    let known = scope.options.keys.sorted()
                    let otherwise = known.isEmpty ? "; declare it under 'options:'" : " (declared: \(known.joined(separator: ", ")))"
                    let message = "option '\(name)' is not declared" + Self.suggestion(for: name, among: known, otherwise: otherwise)
                    throw codecError(ProfileCodecError(.badTemplate, message, column: column), in: node)
                }
                if option.optional, condition != .ifSet(name) {
                    throw codecError(
                        ProfileCodecError(
                            .badTemplate, "option '\(name)' is optional: give this step 'if: options.\(name)'", column: column),
                        in: node)
                }
            case .parameter(let name) where !parameters:
                throw codecError(
                    ProfileCodecError(
                        .badTemplate, "'\(name)' is a command parameter, and connection steps have none (options are {options.NAME})",
                        column: column),
                    in: node)
            default:
                break
            }
        }
        return template
    }
}
