import BridgeBase

/// `org.freedesktop.DBus.Introspectable`: the XML of an object's interfaces, their methods,
/// properties and signals, and its child nodes.
extension DBusObjectServer {
    func introspect(path: String) -> String {
        let (obj, children, isManager) = state.withLock { s -> (Object?, [String], Bool) in
            var names = Set<String>()
            for p in s.objects.keys where Self.isBelow(p, path) {
                let rest = path == "/" ? p.dropFirst() : p.dropFirst(path.count + 1)
                if let first = rest.split(separator: "/" as Character).first { names.insert(String(first)) }
            }
            return (s.objects[path], names.sorted(), s.managers.contains(path))
        }
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>
              <interface name="org.freedesktop.DBus.Introspectable">
                <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
              </interface>

            """
        if obj != nil {
            xml += """
                  <interface name="org.freedesktop.DBus.Properties">
                    <method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
                    <method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
                    <method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>
                    <signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>
                  </interface>

                """
        }
        if isManager {
            xml += """
                  <interface name="org.freedesktop.DBus.ObjectManager">
                    <method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>
                    <signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>
                    <signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>
                  </interface>

                """
        }
        if let obj {
            for name in obj.order {
                guard let i = obj.interfaces[name] else { continue }
                xml += "  <interface name=\"\(name)\">\n"
                for (m, spec) in i.export.methods.sorted(by: { $0.key < $1.key }) {
                    xml += "    <method name=\"\(m)\">"
                    for t in Self.splitSignature(spec.inSignature) { xml += "<arg type=\"\(t)\" direction=\"in\"/>" }
                    for t in Self.splitSignature(spec.outSignature) { xml += "<arg type=\"\(t)\" direction=\"out\"/>" }
                    xml += "</method>\n"
                }
                for (sig, spec) in i.export.signals.sorted(by: { $0.key < $1.key }) {
                    xml += "    <signal name=\"\(sig)\">"
                    for t in Self.splitSignature(spec) { xml += "<arg type=\"\(t)\"/>" }
                    xml += "</signal>\n"
                }
                for (p, v) in i.properties.sorted(by: { $0.key < $1.key }) {
                    let access = i.export.setProperty == nil ? "read" : "readwrite"
                    xml += "    <property name=\"\(p)\" type=\"\(Self.escape(v.signature))\" access=\"\(access)\"/>\n"
                }
                xml += "  </interface>\n"
            }
        }
        for c in children { xml += "  <node name=\"\(c)\"/>\n" }
        xml += "</node>\n"
        return xml
    }

    static func escape(_ s: String) -> String {
        s.replacingText("&", with: "&amp;").replacingText("<", with: "&lt;").replacingText(">", with: "&gt;").replacingText("\"", with: "&quot;")
    }

    /// Splits a signature into single complete types.
    static func splitSignature(_ sig: String) -> [String] {
        var out = [String]()
        let chars = Array(sig)
        var i = 0
        func single(_ start: Int) -> Int {
            var j = start
            switch chars[j] {
            case "a":
                return single(j + 1)
            case "(", "{":
                let open = chars[j], close: Character = open == "(" ? ")" : "}"
                var depth = 0
                while j < chars.count {
                    if chars[j] == open { depth += 1 } else if chars[j] == close {
                        depth -= 1
                        if depth == 0 { return j + 1 }
                    }
                    j += 1
                }
                return j
            default:
                return j + 1
            }
        }
        while i < chars.count {
            let end = min(single(i), chars.count)
            out.append(String(chars[i..<end]))
            i = end
        }
        return out
    }
}
