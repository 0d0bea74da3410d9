// What the portal's page may change, each the same as an API call or a scenario fault: terminate
// or delete a job, resize or delete a cluster (ARM requests answered in this process, through
// the ARM routes), pre-empt a low-priority node or fail any node (the engine's pre-emption and
// node failure, as the scenario faults). POST
// /portal/api/actions with {"action": ..., "id": ..., "nodes": N | "node": ID}; only with the
// X-Portal-Token the page got from /portal/api/session (a page of another site can neither read
// it nor send the header without a CORS preflight, which the emulator never allows), and never
// with an Origin header naming another site.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/http/routes.h"

namespace bai::portal {

struct PortalActions {
    const http::Routes& arm;  // dispatched to in-process, as the ARM listener would
    std::function<std::optional<nlohmann::json>(const std::string& node)> preempt;
    std::function<std::optional<nlohmann::json>(const std::string& node)> fail;
    std::string token;  // this run's (random)
};

void add_action_routes(http::Routes& routes, const PortalActions& actions);

}  // namespace bai::portal
