import Foundation
import Hummingbird
import PortcullisTesting
import Synchronization

/// A compliance-callback receiver for the tests: collects SETs, answers 202.
final class CallbackReceiver: Sendable {
    private let received = Mutex<[String]>([])
    var tokens: [String] { received.withLock { $0 } }

    func application() -> some ApplicationProtocol {
        let router = Router()
        router.post(RouterPath(Fixtures.callbackPath)) { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 64 * 1024)
            self.received.withLock { $0.append(String(buffer: body)) }
            return Response(status: .accepted)
        }
        return Application(router: router)
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
