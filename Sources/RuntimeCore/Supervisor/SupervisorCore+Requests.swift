import BridgeCore

/// `{base}/bridge/request/{command}` (SPEC §6): what is answered and done is decided here; the executor only
/// assembles the figures health names (the value router's counts) and publishes.
extension SupervisorCore {
    /// The answer to a request, on `bridge/response/{command}` (and a v5 Response Topic).
    package struct Response: Sendable, Equatable {
        package var command: String
        /// What `data` holds (and, for health, the members at the top of the answer).
        package var body: Body = .empty
        /// `status: error` with this text; nil: `status: ok`.
        package var error: String?
        /// The request's `transaction`, echoed.
        package var transaction: JSONValue?
        /// The §14 requests' error code: the answer's `error` is then `{"code", "message"}` (older requests keep
        /// the text alone).
        package var errorCode: Code?
        /// The request's v5 Response Topic, answered there too.
        package var replyTo: ReplyAddress?

        /// The error codes of the §14 requests.
        package enum Code: String, Sendable, Equatable {
            case invalidPayload = "invalid_payload"
            case exists
            case notFound = "not_found"
            case readOnly = "read_only"
        }

        package enum Body: Sendable, Equatable {
            /// `data: {}`.
            case empty
            /// The health object at the top (assembled by the executor) and the summary in `data`;
            /// `healthy` is `bluez && adapter`.
            case health(bluez: Bool, adapter: Bool)
            /// `data.devices`: the `bridge/devices` list.
            case devices([JSONValue])
            /// `data.device` (and `data.address` when set).
            case device(name: String, address: String?)
            /// `data.devices`: the advertisers a `scan` heard.
            case scan([JSONValue])
        }

        /// A value with these fields.
        package init(command: String, body: Body = .empty, error: String? = nil, transaction: JSONValue? = nil) {
            self.command = command
            self.body = body
            self.error = error
            self.transaction = transaction
        }
    }

    /// The commands a request may name.
    package static var requestCommands: [String] {
        ["health_check", "devices", "forget", "reconnect", "unpair", "scan"] + deviceRequests
    }

    /// A request: parses its payload (anything but JSON counts as `null`), performs `forget` or
    /// `reconnect` of the device it names (a stored peripheral without a session can be
    /// forgotten as well), and answers.
    package mutating func request(
        _ command: String, payload: [UInt8], replyTo: ReplyAddress? = nil, now: Instant, tree: Tree, _ out: inout [Action]
    ) {
        let request = (try? JSONParser.parse(payload)) ?? .null
        var response = Response(command: command, transaction: request["transaction"])
        response.replyTo = replyTo
        switch command {
        case "scan":
            // Answered when its window is over.
            if scanRequest(request, &response, now: now, tree: tree, &out) { return }
        case _ where Self.deviceRequests.contains(command):
            deviceRequest(command, payload: payload, &response, now: now, tree: tree, &out)
        case "health_check":
            response.body = .health(bluez: bluezAvailable, adapter: anyAdapterReady)
        case "devices":
            response.body = .devices(devicesList)
        case "unpair":
            guard let target = request["device"]?.stringValue ?? request.stringValue else {
                response.error = "expected {\"device\": \"<name or address>\"}"
                break
            }
            guard let record = find(target) else {
                response.error = "no device '\(target)' is known to the bridge"
                break
            }
            response.body = .device(name: record.segment, address: record.address.description)
            unpair(record, &out)
        case "forget", "reconnect":
            guard let target = request["device"]?.stringValue ?? request.stringValue else {
                response.error = "expected {\"device\": \"<name or address>\"}"
                break
            }
            guard let record = find(target) else {
                if command == "forget", let address = BluetoothAddress(target), isStored(address.description) {
                    forgetStored(address.description)
                    out.append(.forgetStored(address: address.description))
                    response.body = .device(name: target, address: nil)
                } else {
                    response.error = "no device '\(target)' is known to the bridge"
                }
                break
            }
            response.body = .device(name: record.segment, address: record.address.description)
            if command == "forget" {
                forget(record.path, &out)
            } else {
                out.append(.log(.notice, "reconnecting \(record.address) on request"))
                out.append(.send(path: record.path, .reconnectRequested))
            }
        default:
            response.error = "unknown request '\(command)' (known: \(Self.requestCommands.joined(separator: ", ")))"
        }
        out.append(.respond(response))
    }
}
