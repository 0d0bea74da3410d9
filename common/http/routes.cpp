#include "common/http/routes.h"

#include <string_view>

namespace bai::http {

Routes& Routes::add(std::string method, const std::string& pattern, Handler handler) {
    routes_.push_back({std::move(method), std::regex(pattern), std::move(handler)});
    return *this;
}

void Routes::dispatch(httplib::Request& request, httplib::Response& response) const {
    const std::string_view method = request.method == "HEAD" ? std::string_view("GET") : request.method;
    for (const Route& route : routes_) {
        if (route.method != method) continue;
        if (!std::regex_match(request.path, request.matches, route.pattern)) continue;
        route.handler(request, response);
        return;
    }
    response.status = 404;
}

LeanListener::Handler serve_routes(const Routes& routes, size_t max_body,
                                   std::function<void(httplib::Request&)> rewrite) {
    return [&routes, max_body, rewrite](const httplib::Request& sent, httplib::Response& response,
                               const httplib::ContentReader* body) {
        auto refuse = [&] {
            response.status = 413;
            response.set_header("Connection", "close");  // the body is not read at all
            response.set_content("The request body is larger than " + std::to_string(max_body) + " bytes.",
                                 "text/plain");
        };
        if (body != nullptr && sent.has_header("Content-Length")) {
            // The listener has checked that it is a number.
            std::uint64_t length = std::stoull(sent.get_header_value("Content-Length"));
            if (length > max_body) return refuse();
        }
        httplib::Request request = sent;
        if (body != nullptr) {
            bool too_large = false;
            bool whole = (*body)([&](const char* data, size_t size) {
                too_large = request.body.size() + size > max_body;
                if (!too_large) request.body.append(data, size);
                return !too_large;
            });
            if (too_large) return refuse();
            if (!whole) {
                response.status = 400;
                response.set_content("The request body ended before its length.", "text/plain");
                return;
            }
        }
        std::string target = request.target;
        size_t question = target.find('?');
        request.path = httplib::detail::decode_url(target.substr(0, question), false);
        if (question != std::string::npos) httplib::detail::parse_query_text(target.substr(question + 1), request.params);
        if (rewrite) rewrite(request);
        routes.dispatch(request, response);
    };
}

}  // namespace bai::http
