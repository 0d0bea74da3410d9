#include "common/http/proxied_host.h"

#include <utility>

namespace bai::http {
namespace {

thread_local std::string current;

}  // namespace

const std::string& proxied_host() { return current; }

ProxiedHostScope::ProxiedHostScope(std::string host) : previous_(std::exchange(current, std::move(host))) {}

ProxiedHostScope::~ProxiedHostScope() { current = std::move(previous_); }

}  // namespace bai::http
