// How a node is reached from outside, as the service shows it: its inbound endpoints (the pool's
// inbound NAT pools, then SSH on a Linux virtual machine node, RDP on a Windows one, or the
// cloud service's RDP forwarder), its remote login settings and its RDP file. The emulator's
// public address is the loopback one; a node's public ports are its number past each NAT pool's
// first (SSH and RDP from 50000), as the service numbers them. Nothing listens there: they are
// what the service would show.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace bai::batch {

// `pool` is the pool's document, `number` the node's in the pool (0 for its first).
nlohmann::json node_endpoints(const nlohmann::json& pool, int number);
// {"remoteLoginIPAddress", "remoteLoginPort"} of the node's SSH or RDP endpoint; nullopt on a
// cloudServiceConfiguration pool, which the service reaches through an RDP file only.
std::optional<nlohmann::json> remote_login_settings(const nlohmann::json& pool, int number);
// The RDP file of a Windows node; nullopt on a Linux one.
std::optional<std::string> rdp_file(const nlohmann::json& pool, int number);

}  // namespace bai::batch
