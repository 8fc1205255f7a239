import Hummingbird

/// `GET /login`: the small form that trades the token for a session cookie (`Assets-src/login.html`; its
/// `<!--error-->` marker becomes the error line after a wrong token).
enum LoginPage {
    /// The marker in login.html.
    static let marker = "<!--error-->"
    /// What replaces it after a wrong token.
    static let errorLine = #"<p class="error" data-testid="login-error">Wrong token.</p>"#

    /// The form (status 200), or after a wrong token the form with the error line (status 401).
    static func response(failed: Bool) -> Response {
        let template = WebAssets.all.first { $0.name == "login.html" }?.text ?? marker
        var html = template
        if failed, let range = template.firstRange(of: marker) {
            html = String(template[..<range.lowerBound]) + errorLine + String(template[range.upperBound...])
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(
            status: failed ? .unauthorized : .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The value of field `name` in an `application/x-www-form-urlencoded` body, percent-decoded.
    static func formValue(named name: String, in body: String) -> String? {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, percentDecode(parts[0]) == name else { continue }
            return percentDecode(parts[1])
        }
        return nil
    }

    /// `+` as a space, `%XX` as its byte; invalid escapes are kept as they are.
    static func percentDecode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == 0x2B {
                bytes.append(0x20)
            } else if byte == 0x25, utf8.count >= 2, let high = hexValue(utf8[utf8.startIndex]),
                let low = hexValue(utf8[utf8.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
