/// A D-Bus match rule for signals.
///
/// The bus delivers signals that match; locally, ``DBusConnection`` routes each one to the
/// subscriptions whose path, path namespace, interface, member and arg0 fit. (The sender is
/// checked by the bus only: locally it is a unique name, not the well-known one.)
public struct DBusMatchRule: Sendable, Hashable {
    /// The sender, e.g. `org.bluez`.
    public var sender: String?
    /// An exact object path.
    public var path: String?
    /// A path and everything below it.
    public var pathNamespace: String?
    /// The interface.
    public var interface: String?
    /// The signal name.
    public var member: String?
    /// The first argument, when it is a string.
    public var arg0: String?

    /// Creates a rule; `nil` fields match anything.
    public init(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil,
        interface: String? = nil, member: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule in the bus's syntax: `type='signal',sender='org.bluez',...`.
    public var ruleString: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append("\(key)='\(value.replacingQuotes())'")
        }
        add("sender", sender)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// Whether a signal with these header fields matches (sender not checked).
    func matches(path p: String, interface i: String, member m: String, arg0 a: () -> String?) -> Bool {
        if let path, path != p { return false }
        if let interface, interface != i { return false }
        if let member, member != m { return false }
        if let ns = pathNamespace, ns != "/" {
            guard p == ns || (p.hasPrefix(ns) && p.utf8.dropFirst(ns.utf8.count).first == UInt8(ascii: "/"))
            else { return false }
        }
        if let arg0, arg0 != a() { return false }
        return true
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        // Match rules quote with '; a literal ' is written as '\''.
        var out = ""
        for c in self {
            if c == "'" { out += "'\\''" } else { out.append(c) }
        }
        return out
    }
}

/// A signal received from the bus.
public struct DBusSignal: Sendable {
    /// The sender's unique name.
    public var sender: String
    /// The emitting object.
    public var path: String
    /// The interface.
    public var interface: String
    /// The signal name.
    public var member: String
    /// The arguments.
    public var arguments: [DBusValue]

    /// Creates a signal value.
    public init(sender: String, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}
