/// What a thread other than the poll loop's asks of a ``MosquittoSession``: carried to the loop
/// thread by a ``CommandQueue``, in the order it was asked.
enum SessionCommand: Sendable {
    /// Hand a message to libmosquitto (already validated by the caller).
    case publish(MQTTMessage)
    /// Remember a filter and subscribe now if connected.
    case subscribe(filter: String, qos: Int32)
    /// End the TCP connection without DISCONNECT (test hook).
    case dropConnection
    /// Stop: wait at most `drainTimeout` for acknowledgements, send DISCONNECT, detach from the
    /// loop. `force` skips the drain and the wait for DISCONNECT to be written.
    case stop(force: Bool, drainTimeout: Duration)
}
