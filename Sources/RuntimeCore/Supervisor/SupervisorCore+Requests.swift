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
    package static var requestCommands: [String] { ["health_check", "devices", "forget", "reconnect", "unpair"] }

    /// A request: parses its payload (anything but JSON counts as `null`), performs `forget` or
    /// `reconnect` of the device it names (a stored peripheral without a session can be
    /// forgotten as well), and answers.
    package mutating func request(_ command: String, payload: [UInt8], _ out: inout [Action]) {
        let request = (try? JSONParser.parse(payload)) ?? .null
        var response = Response(command: command, transaction: request["transaction"])
        switch command {
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
