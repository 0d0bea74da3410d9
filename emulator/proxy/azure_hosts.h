// Which of the emulator's services answers for one of Azure's public host names, as the proxy
// front door routes a tunnel or a request: management.azure.com is ARM; the sign-in authority's
// names are the sign-in service; ACCOUNT[-secondary].blob|file.core.windows.net are Blob and File
// with the account taken from the name; ACCOUNT.REGION.batch.azure.com is Batch. Any other name is
// refused, with the reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bai::proxy {

// unserved_storage: a Storage service of the cloud that the emulator does not have (Queue, Table,
// Data Lake, static websites): its names are Azure's (the CA may sign them), so a client is
// answered inside the tunnel, where its SDK shows the answer, rather than at the CONNECT, which
// clients retry as a network failure.
enum class AzureService { none, arm, sign_in, blob, file, batch, unserved_storage };

struct AzureHost {
    AzureService service = AzureService::none;
    std::string host;     // lower-case, no port
    std::string account;  // blob, file (without -secondary), batch
    bool secondary = false;
    std::string refusal;  // why, for none
};

AzureHost classify_host(std::string_view host);

// "host:port" of a CONNECT ("[::1]:443" for an IPv6 address); nullopt when malformed (no port,
// a port that is not a number from 1 to 65535, an empty host, characters a host name cannot have).
struct Authority {
    std::string host;  // lower-case, without brackets
    int port = 0;
};
std::optional<Authority> parse_authority(std::string_view authority, int default_port = 0);

// The names the front door serves, for messages: "management.azure.com, login.microsoftonline.com, ...".
const char* served_names();

}  // namespace bai::proxy
