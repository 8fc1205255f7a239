/// Where a command's result goes besides its `…/result` topic: the MQTT v5 Response Topic and Correlation
/// Data of the command (SPEC §4), as plain values (the cores do not know MQTT).
package struct ReplyAddress: Sendable, Hashable {
    /// The Response Topic.
    package var topic: String
    /// The Correlation Data, echoed.
    package var correlationData: [UInt8]?

    /// A reply address.
    package init(topic: String, correlationData: [UInt8]?) {
        self.topic = topic
        self.correlationData = correlationData
    }
}
