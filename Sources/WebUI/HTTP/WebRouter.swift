import BridgeCore
import Hummingbird

/// The page server's routes (SPEC §14): the page and its assets, the JSON API, the live events and the login.
public enum WebRouter {
    /// The largest POST body taken.
    public static let maxBodySize = 64 * 1024

    /// The router for `core`, with `session` as the login cookie's value.
    public static func make(core: PageCore, session: String) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: SecurityHeadersMiddleware())
        router.add(middleware: RequestGuardMiddleware())
        router.add(middleware: AuthMiddleware(token: core.settings.authToken, session: session))

        router.get("/") { _, _ in asset("index.html") ?? Response(status: .notFound) }
        router.get("/assets/{name}") { _, context in
            guard let name = context.parameters.get("name"), name != "login.html", let response = asset(name) else {
                throw HTTPError(.notFound)
            }
            return response
        }
        router.get("/api/snapshot") { _, _ in
            json(status: 200, ByteBuffer(bytes: core.snapshotJSON()))
        }
        router.get("/api/events") { _, _ in try events(core.hub) }
        router.post("/api/request") { request, context in
            var request = request
            let body = try await parseBody(&request)
            let answer = await core.request(body)
            return json(status: answer.status, ByteBuffer(string: answer.body))
        }
        router.post("/api/command") { request, context in
            var request = request
            let body = try await parseBody(&request)
            let answer = await core.command(body)
            return json(status: answer.status, ByteBuffer(string: answer.body))
        }
        router.get("/login") { _, _ in
            guard core.settings.authToken != nil else {
                return Response(status: .seeOther, headers: [.location: "/"])
            }
            return LoginPage.response(failed: false)
        }
        router.post("/login") { request, _ in
            guard let token = core.settings.authToken else {
                return Response(status: .seeOther, headers: [.location: "/"])
            }
            var request = request
            let body = try await request.collectBody(upTo: 4096)
            let given = LoginPage.formValue(named: "token", in: String(buffer: body)) ?? ""
            guard AuthMiddleware<BasicRequestContext>.constantTimeEqual(given, token) else {
                return LoginPage.response(failed: true)
            }
            var headers = HTTPFields()
            headers[.location] = "/"
            headers[.setCookie] =
                "\(AuthMiddleware<BasicRequestContext>.cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict"
            return Response(status: .seeOther, headers: headers)
        }
        return router
    }

    /// A file of ``WebAssets``, with its content type; nil for an unknown name.
    static func asset(_ name: String) -> Response? {
        guard let text = WebAssets.all.first(where: { $0.name == name })?.text else { return nil }
        var headers = HTTPFields()
        headers[.contentType] = contentType(of: name)
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The media type for a file name.
    static func contentType(of name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".svg") { return "image/svg+xml" }
        return "application/octet-stream"
    }

    /// A JSON response that no cache keeps.
    static func json(status: Int, _ body: ByteBuffer) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: body))
    }

    /// The request's body as JSON; 400 when it is not.
    static func parseBody(_ request: inout Request) async throws -> JSONValue {
        let buffer = try await request.collectBody(upTo: maxBodySize)
        do {
            return try JSONParser.parse(Array(buffer: buffer))
        } catch {
            throw HTTPError(.badRequest, message: "the body is not JSON: \(error)")
        }
    }

    /// `GET /api/events`: a page's live stream. It opens with a comment, then every message of a page topic as a
    /// `data:` line; the frames waiting are written together. It ends when the client goes, when the page is too
    /// slow (its queue overflowed) or on shutdown.
    static func events(_ hub: EventHub) throws -> Response {
        guard let (id, queue) = hub.subscribe() else { throw HTTPError(.serviceUnavailable) }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-store"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { hub.unsubscribe(id) }
                try await writer.write(ByteBuffer(bytes: EventHub.openingFrame))
                while let frames = await queue.next() {
                    var buffer = ByteBuffer()
                    buffer.reserveCapacity(frames.reduce(0) { $0 + $1.count })
                    for frame in frames { buffer.writeBytes(frame) }
                    try await writer.write(buffer)
                }
                try await writer.finish(nil)
            })
    }
}
