// Routing by regular expression for the endpoints whose handlers take a whole request (ARM and
// Batch), in the shape of httplib's server: Get/Put/Post/Patch/Delete(pattern, handler), the
// pattern matched against the whole decoded path, its captures in request.matches, HEAD answered
// by the GET route. serve_routes() puts a route table behind a LeanListener.
#pragma once

#include <httplib.h>

#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "common/http/lean_listener.h"

namespace bai::http {

class Routes {
public:
    using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

    Routes& Get(const std::string& pattern, Handler handler) { return add("GET", pattern, std::move(handler)); }
    Routes& Put(const std::string& pattern, Handler handler) { return add("PUT", pattern, std::move(handler)); }
    Routes& Post(const std::string& pattern, Handler handler) { return add("POST", pattern, std::move(handler)); }
    Routes& Patch(const std::string& pattern, Handler handler) { return add("PATCH", pattern, std::move(handler)); }
    Routes& Delete(const std::string& pattern, Handler handler) { return add("DELETE", pattern, std::move(handler)); }

    // The first route (in the order added) whose method and pattern match answers; none: 404.
    void dispatch(httplib::Request& request, httplib::Response& response) const;

private:
    struct Route {
        std::string method;
        std::regex pattern;
        Handler handler;
    };
    Routes& add(std::string method, const std::string& pattern, Handler handler);
    std::vector<Route> routes_;
};

// A LeanListener handler over `routes`: the body, when there is one, is read into request.body
// (one over `max_body` bytes is refused with 413 before the rest of it is read, and the connection
// is closed), the path is percent-decoded and the query split into request.params, as httplib's
// server does. `rewrite`, when given, runs next, before the request is routed (it may change the
// path). `routes` must outlive the listener.
LeanListener::Handler serve_routes(const Routes& routes, size_t max_body,
                                   std::function<void(httplib::Request&)> rewrite = {});

}  // namespace bai::http
