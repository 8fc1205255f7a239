import BridgeCore

/// What the server publishes for one `POST /api/request` or `POST /api/command`, and where the answer comes.
public struct PageOutbound: Sendable, Hashable {
    /// The request or command topic.
    public var topic: String
    /// The payload, with the server's `transaction`.
    public var payload: JSONObject
    /// The topic the answer comes on.
    public var answerTopic: String
    /// How long to wait for it.
    public var timeout: Duration

    /// Creates an outbound message.
    public init(topic: String, payload: JSONObject, answerTopic: String, timeout: Duration) {
        self.topic = topic
        self.payload = payload
        self.answerTopic = answerTopic
        self.timeout = timeout
    }

    /// `POST /api/request` `{"command": "scan", "bridge": null | "<id>", "payload": {...}}`: the bridge's request
    /// topic (`{base}/bridge/request/{command}`, with the cluster `{base}/bridges/{id}/request/{command}`, the
    /// id defaulting to the first online bridge). Timeout: 10 s, `scan` its seconds (1–60, default 10) + 10 s.
    public static func request(
        _ body: JSONValue, transaction: String, settings: WebSettings, onlineBridges: [String]
    ) throws(WebError) -> PageOutbound {
        guard let object = body.objectValue else { throw WebError(.invalidPayload, "the body must be a JSON object") }
        guard let command = object["command"]?.stringValue, isCommandPath(command) else {
            throw WebError(.invalidPayload, "'command' must be a request name such as scan or device/add")
        }
        let own: String
        if settings.cluster {
            let id: String
            switch object["bridge"] {
            case nil, .null?:
                guard let first = onlineBridges.first else { throw WebError(.noBridge, "no bridge is online") }
                id = first
            case .string(let given)?:
                guard BridgeID.isValid(given) else { throw WebError(.invalidPayload, "invalid bridge id '\(given)'") }
                id = given
            default:
                throw WebError(.invalidPayload, "'bridge' must be a bridge id or null")
            }
            own = "\(settings.baseTopic)/bridges/\(id)/"
        } else {
            own = "\(settings.baseTopic)/bridge/"
        }
        var payload: JSONObject
        switch object["payload"] {
        case nil, .null?: payload = [:]
        case .object(let given)?: payload = given
        default: throw WebError(.invalidPayload, "'payload' must be a JSON object")
        }
        var timeout = settings.requestTimeout
        if command == "scan" {
            let seconds = payload["seconds"]?.doubleValue ?? 10
            timeout = .seconds(min(60, max(1, seconds.isFinite ? seconds : 10))) + settings.requestTimeout
        }
        payload["transaction"] = .string(transaction)
        return PageOutbound(
            topic: own + "request/" + command, payload: payload, answerTopic: own + "response/" + command,
            timeout: timeout)
    }

    /// `POST /api/command`: `{"device", "service", "characteristic", "op": "set" | "get", "payload"}` or a profile's
    /// named command `{"device", "command", "payload"}` (`{base}/{device}/command/{name}/set`). A payload that is a
    /// JSON object is sent as it is (plus the transaction); any other JSON value is sent as `{"value": ...}`.
    public static func command(_ body: JSONValue, transaction: String, settings: WebSettings) throws(WebError)
        -> PageOutbound
    {
        guard let object = body.objectValue else { throw WebError(.invalidPayload, "the body must be a JSON object") }
        let device = try segment(object, "device")
        let service: String
        let characteristic: String
        let operation: String
        if object["command"] != nil {
            service = TopicMapper.commandSegment
            characteristic = try segment(object, "command")
            operation = "set"
        } else {
            service = try segment(object, "service")
            characteristic = try segment(object, "characteristic")
            guard let op = object["op"]?.stringValue, op == "set" || op == "get" else {
                throw WebError(.invalidPayload, "'op' must be \"set\" or \"get\"")
            }
            operation = op
        }
        var payload: JSONObject
        switch (operation, object["payload"]) {
        case ("get", _): payload = [:]
        case (_, .object(let given)?): payload = given
        case (_, nil), (_, .null?):
            guard service == TopicMapper.commandSegment else {
                throw WebError(.invalidPayload, "a write needs a 'payload'")
            }
            payload = [:]
        case (_, let value?): payload = ["value": value]
        }
        payload["transaction"] = .string(transaction)
        let value = "\(settings.baseTopic)/\(device)/\(service)/\(characteristic)"
        return PageOutbound(
            topic: value + "/" + operation, payload: payload, answerTopic: value + "/result",
            timeout: settings.commandTimeout)
    }

    /// A topic segment from `object[key]`.
    static func segment(_ object: JSONObject, _ key: String) throws(WebError) -> String {
        guard let text = object[key]?.stringValue else { throw WebError(.invalidPayload, "'\(key)' must be a string") }
        if let problem = TopicMapper.segmentProblem(text) { throw WebError(.invalidPayload, "'\(key)': \(problem)") }
        return text
    }

    /// `scan`, `device/add`: one or two levels of `[a-z0-9_-]`.
    static func isCommandPath(_ text: String) -> Bool {
        let levels = text.utf8.split(separator: 0x2F, omittingEmptySubsequences: false)
        guard (1...2).contains(levels.count) else { return false }
        return levels.allSatisfy { level in
            !level.isEmpty && level.count <= 64
                && level.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D }
        }
    }
}
