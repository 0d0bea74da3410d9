#include "emulator/arm/virtual_networks.h"

#include <arpa/inet.h>

#include <cstdint>
#include <optional>

#include "common/crypto/random_id.h"
#include "common/text/percent_encoding.h"
#include "emulator/arm/cloud_error.h"
#include "emulator/arm/resource_ids.h"
#include "emulator/arm/resource_view.h"
#include "emulator/arm/text.h"

namespace bai::arm {
namespace {

constexpr const char* kNetworks =
    "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks";
const std::string kNetwork = std::string(kNetworks) + "/{virtualNetworkName}";

std::string network_id(const Params& p) {
    return group_id(p) + "/providers/Microsoft.Network/virtualNetworks/" + p["virtualNetworkName"];
}

// The Network provider's refusals: 400 with its codes, the message naming the field.
[[noreturn]] void refuse(const std::string& code, const std::string& message, const std::string& target) {
    throw bad_request(code, message, target);
}

// An IPv4 prefix "a.b.c.d/n" as (network, length); nullopt when it is not one. IPv6 prefixes are
// accepted as written (is_ipv6_prefix) and take no part in the range checks.
std::optional<std::pair<std::uint32_t, int>> ipv4_prefix(const std::string& text) {
    const size_t slash = text.find('/');
    if (slash == std::string::npos || slash + 1 >= text.size() || text.size() - slash > 3) return std::nullopt;
    in_addr address{};
    if (inet_pton(AF_INET, text.substr(0, slash).c_str(), &address) != 1) return std::nullopt;
    int length = 0;
    for (size_t i = slash + 1; i < text.size(); ++i) {
        if (text[i] < '0' || text[i] > '9') return std::nullopt;
        length = length * 10 + (text[i] - '0');
    }
    if (length > 32) return std::nullopt;
    const std::uint32_t mask = length == 0 ? 0 : ~std::uint32_t{0} << (32 - length);
    return std::make_pair(ntohl(address.s_addr) & mask, length);
}

bool is_ipv6_prefix(const std::string& text) {
    const size_t slash = text.find('/');
    if (slash == std::string::npos) return false;
    in6_addr address{};
    if (inet_pton(AF_INET6, text.substr(0, slash).c_str(), &address) != 1) return false;
    const std::string length = text.substr(slash + 1);
    return !length.empty() && length.size() <= 3 && length.find_first_not_of("0123456789") == std::string::npos &&
           std::stoi(length) <= 128;
}

bool contains(std::pair<std::uint32_t, int> outer, std::pair<std::uint32_t, int> inner) {
    if (inner.second < outer.second) return false;
    const std::uint32_t mask = outer.second == 0 ? 0 : ~std::uint32_t{0} << (32 - outer.second);
    return (inner.first & mask) == outer.first;
}

bool overlap(std::pair<std::uint32_t, int> a, std::pair<std::uint32_t, int> b) { return contains(a, b) || contains(b, a); }

std::string prefix_string(const nlohmann::json& value, const std::string& path) {
    if (!value.is_string()) refuse("InvalidRequestFormat", path + " must be a string address prefix such as 10.0.0.0/16", path);
    const std::string text = value.get<std::string>();
    if (!ipv4_prefix(text) && !is_ipv6_prefix(text)) {
        refuse("InvalidAddressPrefixFormat", "Address prefix " + text + " of " + path + " is not a valid CIDR prefix.", path);
    }
    return text;
}

const nlohmann::json* object_at(const nlohmann::json& parent, const char* key, const std::string& path) {
    if (!parent.contains(key) || parent[key].is_null()) return nullptr;
    if (!parent[key].is_object()) refuse("InvalidRequestFormat", path + " must be an object", path);
    return &parent[key];
}

const nlohmann::json* array_at(const nlohmann::json& parent, const char* key, const std::string& path) {
    if (!parent.contains(key) || parent[key].is_null()) return nullptr;
    if (!parent[key].is_array()) refuse("InvalidRequestFormat", path + " must be an array", path);
    return &parent[key];
}

// The network a PUT describes, checked as the Network provider checks it: a location; address
// prefixes that are CIDR prefixes; subnets with unique names, each inside the address space and
// none overlapping another. Returns the stored properties (provisioning state set by the caller).
nlohmann::json network_properties(const nlohmann::json& body, const std::string& id, const std::string& etag) {
    const nlohmann::json empty = nlohmann::json::object();
    const nlohmann::json* props = object_at(body, "properties", "properties");
    if (!props) props = &empty;
    nlohmann::json out{{"addressSpace", {{"addressPrefixes", nlohmann::json::array()}}},
                       {"dhcpOptions", {{"dnsServers", nlohmann::json::array()}}},
                       {"subnets", nlohmann::json::array()},
                       {"virtualNetworkPeerings", nlohmann::json::array()},
                       {"enableDdosProtection", false},
                       {"enableVmProtection", false}};
    std::vector<std::pair<std::uint32_t, int>> space;
    if (const nlohmann::json* s = object_at(*props, "addressSpace", "properties.addressSpace")) {
        if (const nlohmann::json* prefixes = array_at(*s, "addressPrefixes", "properties.addressSpace.addressPrefixes")) {
            for (size_t i = 0; i < prefixes->size(); ++i) {
                const std::string path = "properties.addressSpace.addressPrefixes[" + std::to_string(i) + "]";
                std::string text = prefix_string((*prefixes)[i], path);
                if (auto v4 = ipv4_prefix(text)) space.push_back(*v4);
                out["addressSpace"]["addressPrefixes"].push_back(text);
            }
        }
    }
    if (const nlohmann::json* dhcp = object_at(*props, "dhcpOptions", "properties.dhcpOptions")) {
        if (const nlohmann::json* servers = array_at(*dhcp, "dnsServers", "properties.dhcpOptions.dnsServers")) {
            for (size_t i = 0; i < servers->size(); ++i) {
                const nlohmann::json& server = (*servers)[i];
                in_addr a{};
                if (!server.is_string() || inet_pton(AF_INET, server.get<std::string>().c_str(), &a) != 1) {
                    refuse("InvalidRequestFormat", "properties.dhcpOptions.dnsServers[" + std::to_string(i) + "] must be an IPv4 address",
                           "properties.dhcpOptions.dnsServers[" + std::to_string(i) + "]");
                }
                out["dhcpOptions"]["dnsServers"].push_back(server);
            }
        }
    }
    for (const char* flag : {"enableDdosProtection", "enableVmProtection"}) {
        if (!props->contains(flag) || (*props)[flag].is_null()) continue;
        if (!(*props)[flag].is_boolean()) refuse("InvalidRequestFormat", std::string("properties.") + flag + " must be a boolean", std::string("properties.") + flag);
        out[flag] = (*props)[flag];
    }
    std::vector<std::pair<std::pair<std::uint32_t, int>, std::string>> taken;
    if (const nlohmann::json* subnets = array_at(*props, "subnets", "properties.subnets")) {
        for (size_t i = 0; i < subnets->size(); ++i) {
            const std::string path = "properties.subnets[" + std::to_string(i) + "]";
            const nlohmann::json& subnet = (*subnets)[i];
            if (!subnet.is_object()) refuse("InvalidRequestFormat", path + " must be an object", path);
            if (!subnet.contains("name") || !subnet["name"].is_string() || subnet["name"].get<std::string>().empty() ||
                subnet["name"].get<std::string>().size() > 80) {
                refuse("InvalidRequestFormat", path + ".name is required: 1 to 80 characters", path + ".name");
            }
            const std::string name = subnet["name"];
            for (const nlohmann::json& earlier : out["subnets"]) {
                if (iequals(earlier["name"].get<std::string>(), name)) {
                    refuse("InvalidRequestFormat", "Subnet name " + name + " appears twice in properties.subnets.", path + ".name");
                }
            }
            const nlohmann::json* sp = object_at(subnet, "properties", path + ".properties");
            if (!sp || !sp->contains("addressPrefix")) {
                refuse("NetcfgInvalidSubnet", "Subnet " + name + " has no address prefix (" + path + ".properties.addressPrefix).",
                       path + ".properties.addressPrefix");
            }
            const std::string text = prefix_string((*sp)["addressPrefix"], path + ".properties.addressPrefix");
            if (auto v4 = ipv4_prefix(text)) {
                bool inside = false;
                for (auto s : space) inside = inside || contains(s, *v4);
                if (!inside) {
                    refuse("NetcfgSubnetRangeOutsideVnet",
                           "Subnet '" + name + "' is not valid because its IP address range " + text +
                               " is outside the IP address range of the virtual network.",
                           path + ".properties.addressPrefix");
                }
                for (const auto& [other, other_name] : taken) {
                    if (overlap(other, *v4)) {
                        refuse("NetcfgSubnetRangesOverlap",
                               "Subnet '" + name + "' is not valid because its IP address range overlaps with that of subnet '" +
                                   other_name + "'.",
                               path + ".properties.addressPrefix");
                    }
                }
                taken.emplace_back(*v4, name);
            }
            out["subnets"].push_back({{"name", name},
                                      {"id", id + "/subnets/" + name},
                                      {"etag", etag},
                                      {"properties",
                                       {{"addressPrefix", text},
                                        {"delegations", nlohmann::json::array()},
                                        {"privateEndpointNetworkPolicies", "Enabled"},
                                        {"privateLinkServiceNetworkPolicies", "Enabled"}}},
                                      {"type", "Microsoft.Network/virtualNetworks/subnets"}});
        }
    }
    return out;
}

std::string new_etag() { return "W/\"" + crypto::uuid4() + "\""; }

// Every provisioningState of the network, its own and its subnets', and a new etag for all.
void set_state(nlohmann::json& network, const char* state) {
    const std::string etag = new_etag();
    network["etag"] = etag;
    network["properties"]["provisioningState"] = state;
    for (nlohmann::json& subnet : network["properties"]["subnets"]) {
        subnet["etag"] = etag;
        subnet["properties"]["provisioningState"] = state;
    }
}

void begin_operation(ArmContext& ctx, const ArmRequest& req, const Params& p, const std::string& kind,
                     const std::string& id, const std::string& location, httplib::Response& res, bool location_header) {
    Operation op;
    op.kind = kind;
    op.resource_id = id;
    op.provider = "Microsoft.Network";
    op.subscription = p["subscriptionId"];
    op.location = location;
    op.api_version = req.api_version();
    op = ctx.operations.begin(op);
    const std::string base = req.base_url + "/subscriptions/" + op.subscription + "/providers/Microsoft.Network/locations/" +
                             text::percent_encode(location);
    res.set_header("Azure-AsyncOperation", base + "/operations/" + op.id + "?api-version=" + op.api_version);
    if (location_header) res.set_header("Location", base + "/operationResults/" + op.id + "?api-version=" + op.api_version);
    // The Network provider asked back after 10 s; the emulator's operations end in --lro-delay.
    OperationTracker::ask_back(res);
}

void put_network(ArmContext& ctx, const ArmRequest& req, const Params& p, httplib::Response& res) {
    StoredResource group = require_group(ctx, p);
    const std::string id = network_id(p);
    CheckedNetwork checked = check_network_body(req.json_body().value_or(nlohmann::json::object()), id);
    const std::string location = checked.location;
    const nlohmann::json& tags = checked.tags;
    nlohmann::json& properties = checked.properties;
    std::optional<StoredResource> done;
    bool created = false;
    ctx.store.atomically([&] {
        if (auto existing = ctx.store.get(id)) {
            if (lower(existing->body["location"].get<std::string>()) != lower(location)) {
                refuse("InvalidResourceLocation",
                       "The resource '" + p["virtualNetworkName"] + "' already exists in location '" +
                           existing->body["location"].get<std::string>() + "' in resource group '" + p["resourceGroupName"] +
                           "'. A resource with the same name cannot be created in location '" + location + "'.",
                       "location");
            }
            if (existing->body["properties"].value("provisioningState", "") == "Deleting") {
                throw CloudError(409, "AnotherOperationInProgress",
                                 "Another operation on this or dependent resource is in progress: the virtual network " +
                                     p["virtualNetworkName"] + " is being deleted.");
            }
            properties["resourceGuid"] = existing->body["properties"]["resourceGuid"];
            done = ctx.store.update(id, [&](nlohmann::json& n) {
                n["tags"] = tags;
                n["properties"] = properties;
                set_state(n, "Updating");
                return true;
            });
        } else {
            properties["resourceGuid"] = crypto::uuid4();
            nlohmann::json network{{"name", p["virtualNetworkName"]},
                                   {"id", id},
                                   {"type", "Microsoft.Network/virtualNetworks"},
                                   {"location", location},
                                   {"tags", tags},
                                   {"properties", properties}};
            set_state(network, "Updating");
            ctx.store.create(id, group.body["id"].get<std::string>(), kind::kVirtualNetwork, network);
            done = ctx.store.get(id);
            created = true;
        }
        begin_operation(ctx, req, p, "create", id, location, res, false);
    });
    send_resource(res, *done, redacted(done->body), created ? 201 : 200);
}

StoredResource require_network(const ArmContext& ctx, const Params& p) {
    check_group(ctx, p);
    std::optional<StoredResource> found = ctx.store.get(network_id(p));
    if (!found || found->type != kind::kVirtualNetwork) {
        throw CloudError(404, "ResourceNotFound",
                         "The Resource 'Microsoft.Network/virtualNetworks/" + p["virtualNetworkName"] +
                             "' under resource group '" + p["resourceGroupName"] + "' was not found.");
    }
    return *found;
}

void list_networks(ArmContext& ctx, const ArmRequest& req, const std::string& scope, httplib::Response& res) {
    Page page = ctx.store.under(scope, kind::kVirtualNetwork, skip_token(req), 1000);
    nlohmann::json items = nlohmann::json::array();
    for (const StoredResource& n : page.items) items.push_back(redacted(n.body));
    send_page(res, req, items, page.next_after);
}

}  // namespace

CheckedNetwork check_network_body(const nlohmann::json& body, const std::string& id) {
    if (!body.is_object()) refuse("InvalidRequestFormat", "The request body must be a JSON object.", "");
    if (!body.contains("location") || !body["location"].is_string() || body["location"].get<std::string>().empty()) {
        refuse("LocationRequired", "The location property is required for this definition.", "location");
    }
    nlohmann::json tags = body.value("tags", nlohmann::json::object());
    if (tags.is_null()) tags = nlohmann::json::object();
    if (!tags.is_object()) refuse("InvalidRequestFormat", "tags must be an object", "tags");
    return {body["location"].get<std::string>(), tags, network_properties(body, id, new_etag())};
}

void complete_network_operation(ArmContext& ctx, const Operation& op) {
    if (op.kind == "delete") {
        ctx.store.remove_tree(op.resource_id);
        return;
    }
    ctx.store.update(op.resource_id, [](nlohmann::json& n) {
        if (n["properties"].value("provisioningState", "") != "Updating") return false;
        set_state(n, "Succeeded");
        return true;
    });
}

void add_virtual_network_routes(Router& router, ArmContext& ctx) {
    const std::string ns = "Microsoft.Network/virtualNetworks/";
    router.add("PUT", kNetwork, Versions::any_dated, ns + "write",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) { put_network(ctx, req, p, res); });
    router.add("GET", kNetwork, Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   StoredResource n = require_network(ctx, p);
                   send_resource(res, n, redacted(n.body));
               });
    router.add("DELETE", kNetwork, Versions::any_dated, ns + "delete",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   check_group(ctx, p);
                   std::optional<StoredResource> n = ctx.store.get(network_id(p));
                   if (!n || n->type != kind::kVirtualNetwork) {
                       res.status = 204;
                       return;
                   }
                   ctx.store.atomically([&] {
                       ctx.store.update(n->body["id"].get<std::string>(), [](nlohmann::json& doc) {
                           set_state(doc, "Deleting");
                           return true;
                       });
                       begin_operation(ctx, req, p, "delete", n->body["id"], n->body["location"], res, true);
                   });
                   res.status = 202;
               });
    router.add("GET", kNetworks, Versions::any_dated, ns + "read",
               [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   check_group(ctx, p);
                   list_networks(ctx, req, group_id(p), res);
               });
    router.add("GET", "/subscriptions/{subscriptionId}/providers/Microsoft.Network/virtualNetworks", Versions::any_dated,
               ns + "read", [&ctx](const ArmRequest& req, const Params& p, httplib::Response& res) {
                   list_networks(ctx, req, subscription_id(p), res);
               });
    router.add("GET", kNetwork + "/subnets", Versions::any_dated, ns + "subnets/read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   send_json(res, 200, {{"value", require_network(ctx, p).body["properties"]["subnets"]}});
               });
    router.add("GET", kNetwork + "/subnets/{subnetName}", Versions::any_dated, ns + "subnets/read",
               [&ctx](const ArmRequest&, const Params& p, httplib::Response& res) {
                   const StoredResource network = require_network(ctx, p);
                   for (const nlohmann::json& subnet : network.body["properties"]["subnets"]) {
                       if (iequals(subnet["name"].get<std::string>(), p["subnetName"])) return send_json(res, 200, subnet);
                   }
                   throw CloudError(404, "NotFound",
                                    "Resource " + network_id(p) + "/subnets/" + p["subnetName"] + " not found.");
               });
    // {"status": "InProgress"|"Succeeded"}: all the Network provider's operation documents say.
    for (const char* kind : {"operations", "operationResults"}) {
        router.add("GET", std::string("/subscriptions/{subscriptionId}/providers/Microsoft.Network/locations/{location}/") + kind +
                              "/{operationId}",
                   Versions::any_dated, "Microsoft.Network/locations/operations/read",
                   [&ctx, kind](const ArmRequest&, const Params& p, httplib::Response& res) {
                       std::optional<Operation> op = ctx.operations.get(p["operationId"]);
                       if (!op || op->provider != "Microsoft.Network" || !iequals(op->subscription, p["subscriptionId"])) {
                           throw CloudError(404, "NotFound", "Operation " + p["operationId"] + " not found.");
                       }
                       if (op->status == "InProgress") OperationTracker::ask_back(res);
                       if (std::string(kind) == "operationResults") {
                           // The Location of a delete: 202 until it ends, then 204.
                           res.status = op->status == "InProgress" ? 202 : 204;
                           return;
                       }
                       nlohmann::json doc{{"status", op->status}};
                       if (op->status == "Failed") doc["error"] = op->error;
                       send_json(res, 200, doc);
                   });
    }
}

}  // namespace bai::arm
