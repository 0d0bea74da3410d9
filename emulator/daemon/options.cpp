#include "emulator/daemon/options.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace bai::daemon {
namespace {

int parse_port(const std::string& flag, const std::string& value) {
    int port = -1;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), port);
    if (ec != std::errc() || end != value.data() + value.size() || port < 0 || port > 65535) {
        throw std::invalid_argument(flag + " takes a port from 0 to 65535 (0: any free port), got '" +
                                    value + "'");
    }
    return port;
}

// A DNS name or an IPv4 address as a URL's host: labels of letters, digits and '-' (not at their
// ends), dots between them. Nothing that could end the host in a URL.
bool is_host_name(const std::string& name) {
    if (name.empty() || name.size() > 253 || name == "0.0.0.0") return false;
    size_t label = 0;
    for (size_t i = 0; i <= name.size(); ++i) {
        if (i == name.size() || name[i] == '.') {
            if (label == 0 || label > 63 || name[i - 1] == '-' || name[i - label] == '-') return false;
            label = 0;
        } else if (std::isalnum(static_cast<unsigned char>(name[i])) || name[i] == '-') {
            ++label;
        } else {
            return false;
        }
    }
    return true;
}

// What docker (/.dockerenv) and podman (/run/.containerenv) leave at a container's root.
bool running_in_container() {
    std::error_code ec;
    return std::filesystem::exists("/.dockerenv", ec) || std::filesystem::exists("/run/.containerenv", ec);
}

}  // namespace

static int parse_milliseconds(const std::string& flag, const std::string& text) {
    size_t used = 0;
    int ms = -1;
    try {
        ms = std::stoi(text, &used);
    } catch (const std::exception&) {
    }
    if (used != text.size() || ms < 0 || ms > 600000) {
        throw std::invalid_argument(flag + " must be milliseconds from 0 to 600000, got '" + text + "'");
    }
    return ms;
}

Options parse_options(const std::vector<std::string>& args) {
    Options o;
    for (size_t i = 0; i < args.size(); ++i) {
        std::string flag = args[i];
        std::optional<std::string> inline_value;
        if (size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
            inline_value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
        }
        auto value = [&]() -> std::string {
            if (inline_value) return *inline_value;
            if (i + 1 >= args.size()) throw std::invalid_argument(flag + " needs a value");
            return args[++i];
        };
        if (flag == "--location") {
            o.location = value();
            if (o.location.empty()) throw std::invalid_argument("--location needs a directory");
        } else if (flag == "--host") {
            o.host = value();
            if (!is_loopback_host(o.host)) {
                throw std::invalid_argument("--host must be a loopback address (127.0.0.0/8, ::1 "
                                            "or localhost), got '" + o.host + "'");
            }
        } else if (flag == "--arm-port") {
            o.arm_port = parse_port(flag, value());
        } else if (flag == "--blob-port") {
            o.blob_port = parse_port(flag, value());
        } else if (flag == "--file-port") {
            o.file_port = parse_port(flag, value());
        } else if (flag == "--batch-port") {
            o.batch_port = parse_port(flag, value());
        } else if (flag == "--proxy-port") {
            o.proxy_port = parse_port(flag, value());
        } else if (flag == "--account") {
            o.accounts.push_back(storage::parse_account_flag(value()));
        } else if (flag == "--public-host") {
            o.public_host = value();
            if (!is_host_name(o.public_host)) {
                throw std::invalid_argument("--public-host takes a host name or an IPv4 address (letters, digits, "
                                            "'-' and '.', at most 253), got '" + o.public_host + "'");
            }
        } else if (flag == "--bind-all" && !inline_value) {
            if (!running_in_container()) {
                throw std::invalid_argument("--bind-all is for a container whose ports are published (no "
                                            "/.dockerenv or /run/.containerenv here): on a machine the "
                                            "emulator listens on loopback only");
            }
            o.bind_all = true;
        } else if (flag == "--strict-auth" && !inline_value) {
            o.strict_auth = true;
        } else if (flag == "--service-principal") {
            o.service_principals.push_back(identity::parse_service_principal(value()));
        } else if (flag == "--service-principal-cert") {
            o.service_principals.push_back(identity::parse_service_principal_certificate(value()));
        } else if (flag == "--batch-account") {
            o.batch_accounts.push_back(batch::parse_batch_account_flag(value()));
        } else if (flag == "--batch-application") {
            o.batch_applications.push_back(batch::parse_app_package_flag(value()));
        } else if (flag == "--debug") {
            o.debug_log = value();
        } else if (flag == "--lro-delay") {
            o.lro_delay_ms = parse_milliseconds(flag, value());
        } else if (flag == "--autoscale-idle") {
            o.autoscale_idle_ms = parse_milliseconds(flag, value());
        } else if (flag == "--gpus") {
            o.gpus = engine::parse_gpu_source(value());
        } else if (flag == "--strict-gpus" && !inline_value) {
            o.strict_gpus = true;
        } else if (flag == "--no-passthrough" && !inline_value) {
            o.share_passthrough = false;
        } else if (flag == "--share-mounts") {
            const std::string mode = value();
            if (mode != "fuse" && mode != "bind") {
                throw std::invalid_argument("--share-mounts must be fuse or bind, not '" + mode + "'");
            }
            o.bind_shares = mode == "bind";
        } else if (flag == "--compute") {
            const std::string mode = value();
            if (mode != "local" && mode != "slurm") {
                throw std::invalid_argument("--compute must be local or slurm, not '" + mode + "'");
            }
            o.slurm = mode == "slurm";
        } else if (flag == "--slurm-partition") {
            o.slurm_partition = value();
        } else if (flag == "--slurm-account") {
            o.slurm_account = value();
        } else if (flag == "--slurm-partition-lowpriority") {
            o.slurm_lowpriority_partition = value();
        } else if (flag == "--slurm-qos-lowpriority") {
            o.slurm_lowpriority_qos = value();
        } else if (flag == "--slurm-storage") {
            const std::string mode = value();
            if (mode != "shared" && mode != "rest") {
                throw std::invalid_argument("--slurm-storage must be shared or rest, not '" + mode + "'");
            }
            o.slurm_rest_storage = mode == "rest";
        } else if (flag == "--slurm-blob-endpoint" || flag == "--slurm-file-endpoint") {
            std::string url = value();
            while (url.ends_with("/")) url.pop_back();
            const size_t scheme = url.find("://");
            const std::string prefix = url.substr(0, scheme == std::string::npos ? 0 : scheme);
            if ((prefix != "http" && prefix != "https") || url.size() <= scheme + 3 ||
                url.find('/', scheme + 3) != std::string::npos) {
                throw std::invalid_argument(flag + " takes http(s)://HOST:PORT (the account is added), not '" + url + "'");
            }
            (flag == "--slurm-blob-endpoint" ? o.slurm_blob_endpoint : o.slurm_file_endpoint) = url;
        } else if (flag == "--slurm-size-map") {
            const std::string path = value();
            std::ifstream in(path);
            std::stringstream text;
            text << in.rdbuf();
            if (!in) throw std::invalid_argument("--slurm-size-map: cannot read " + path);
            try {
                o.slurm_sizes = engine::parse_size_map(text.str());
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument("--slurm-size-map " + path + ": " + e.what());
            }
        } else if (flag == "--container-runtime") {
            o.containers.choice = engine::parse_runtime_choice(value());
        } else if (flag == "--image") {
            auto [image, dir] = engine::parse_image_flag(value());
            o.containers.images[image] = dir;
        } else if (flag == "--strict-images" && !inline_value) {
            o.containers.strict_images = true;
        } else if (flag == "--durable" && !inline_value) {
            o.durable = true;
        } else if (flag == "--version" && !inline_value) {
            o.show_version = true;
        } else if ((flag == "--help" || flag == "-h") && !inline_value) {
            o.show_help = true;
        } else {
            throw std::invalid_argument("unknown argument '" + args[i] + "' (see --help)");
        }
    }
    if (o.slurm_rest_storage && !o.slurm) throw std::invalid_argument("--slurm-storage is for --compute slurm");
    if ((!o.slurm_blob_endpoint.empty() || !o.slurm_file_endpoint.empty()) && !o.slurm) {
        throw std::invalid_argument("--slurm-blob-endpoint and --slurm-file-endpoint are for --compute slurm");
    }
    // Azurite's variable, so that a setup written for Azurite finds its accounts here too;
    // --account of the same name wins.
    if (const char* azurite = std::getenv("AZURITE_ACCOUNTS"); azurite && *azurite) {
        std::vector<storage::Account> from_env = storage::parse_azurite_accounts(azurite);
        from_env.insert(from_env.end(), o.accounts.begin(), o.accounts.end());
        o.accounts = std::move(from_env);
    }
    return o;
}

std::string usage() {
    return "usage: batchai-emulator [--location DIR] [--host ADDR] [--bind-all] [--public-host NAME]\n"
           "                        [--arm-port P] [--blob-port P]\n"
           "                        [--file-port P] [--batch-port P] [--proxy-port P] [--account NAME:KEY]...\n"
           "                        [--batch-account NAME:KEY]... [--batch-application [ACCOUNT/]APP:VERSION=DIR]...\n"
           "                        [--service-principal ID:SECRET]...\n"
           "                        [--service-principal-cert ID:PEM]... [--strict-auth] [--debug FILE]\n"
           "                        [--durable]\n"
           "                        [--lro-delay MS] [--autoscale-idle MS] [--gpus auto|none|fake:N]\n"
           "                        [--strict-gpus] [--no-passthrough] [--share-mounts fuse|bind]\n"
           "                        [--compute local|slurm] [--slurm-partition P] [--slurm-account A]\n"
           "                        [--slurm-partition-lowpriority P] [--slurm-qos-lowpriority Q]\n"
           "                        [--slurm-size-map FILE] [--slurm-storage shared|rest]\n"
           "                        [--slurm-blob-endpoint URL] [--slurm-file-endpoint URL]\n"
           "                        [--container-runtime auto|docker|sandbox|host]\n"
           "                        [--image IMAGE=DIR]... [--strict-images] [--version] [--help]\n"
           "\n"
           "  --location DIR     data directory (default ./batchai-data)\n"
           "  --host ADDR        loopback address to listen on (default 127.0.0.1)\n"
           "  --bind-all         in a container whose ports are published: listen on every address\n"
           "                     of the container's network, the URLs still --host's (the image's)\n"
           "  --public-host NAME the name clients reach the endpoints by, where it is not --host (a\n"
           "                     CI service's alias): the URLs handed out name it, ARM's certificate\n"
           "                     covers it\n"
           "  --arm-port P       Batch AI / ARM endpoint, HTTPS (default 10443; 0: any free port)\n"
           "  --blob-port P      Blob service (default 10000; 0: any free port)\n"
           "  --file-port P      File service (default 10004; 0: any free port)\n"
           "  --batch-port P     the Azure Batch service (default 10447; 0: any free port)\n"
           "  --proxy-port P     the proxy front door: HTTPS_PROXY for programs that use Azure's own\n"
           "                     host names (default 10080; 0: any free port; `bai env` sets it up)\n"
           "  --account NAME:KEY an extra storage account with a base64 key (repeatable)\n"
           "                     (AZURITE_ACCOUNTS=NAME:KEY1[:KEY2];... adds accounts as Azurite does)\n"
           "  --batch-account NAME:KEY an extra Batch account with a base64 key (repeatable;\n"
           "                     devbatchaccount1 always exists, with the key in the README)\n"
           "  --batch-application [ACCOUNT/]APP:VERSION=DIR an application package of the Batch\n"
           "                     accounts (or of ACCOUNT), its files in DIR (repeatable; the first\n"
           "                     version of an application is its default)\n"
           "  --service-principal ID:SECRET a service principal that may sign in (az login\n"
           "                     --service-principal, azure-identity's ClientSecretCredential) besides the\n"
           "                     well-known one printed at start (repeatable)\n"
           "  --service-principal-cert ID:PEM a service principal that signs in with the certificate\n"
           "                     in PEM (az login -p CERT.pem, azure-identity's CertificateCredential);\n"
           "                     with --service-principal of the same ID it has both (repeatable)\n"
           "  --strict-auth      ARM and Batch take only unexpired tokens of the emulator's sign-in\n"
           "                     service for themselves (default: any bearer token, as the SDKs'\n"
           "                     recorded tests send)\n"
           "  --debug FILE       log one line per request: service, method, path, status, ms\n"
           "  --durable          fsync every acknowledged write (survives power loss; slower)\n"
           "  --lro-delay MS     how long ARM create/delete/terminate operations stay InProgress\n"
           "                     (default 500)\n"
           "  --autoscale-idle MS how long an auto-scale cluster stays idle before it shrinks to its\n"
           "                     minimum (default 10000)\n"
           "  --gpus SOURCE      GPUs for the nodes: auto (the machine's, through NVML; none when no\n"
           "                     driver answers), none, or fake:N (N fake GPUs, for machines without)\n"
           "  --strict-gpus      do not allocate a node that cannot have every GPU of its size (default:\n"
           "                     it runs with the GPUs left, and the cluster's errors say so)\n"
           "  --no-passthrough   share mounts serve every read and write themselves (default: files\n"
           "                     opened while no fault plan waits are the kernel's, FUSE passthrough,\n"
           "                     Linux 6.9+; a fault plan then meets only files opened after it)\n"
           "  --share-mounts M   how nodes mount file shares: fuse (default; the File API's index\n"
           "                     follows every change at once, fault plans, fileMode/directoryMode)\n"
           "                     or bind (a bind mount of the share's directory: the disk's speed\n"
           "                     for small files; the File API catches up with the disk when it\n"
           "                     reads a path; no fault plans; shares with modes stay FUSE)\n"
           "  --compute C        where the clusters' nodes run: local (default: this machine) or slurm\n"
           "                     (each node a Slurm allocation of its vmSize's cores, memory and GPUs, its\n"
           "                     processes steps in it; sbatch, srun, squeue, scancel on the PATH,\n"
           "                     SLURM_CONF as the emulator's; the data directory on a filesystem the\n"
           "                     hosts share; shares as links there; no containerSettings yet)\n"
           "  --slurm-partition P, --slurm-account A  where and as whom the nodes are allocated\n"
           "  --slurm-partition-lowpriority P, --slurm-qos-lowpriority Q  what low-priority\n"
           "                     clusters' nodes are allocated in, for Slurm to pre-empt them\n"
           "  --slurm-size-map FILE  what a vmSize asks of Slurm where the site's hosts differ from\n"
           "                     Azure's machines: {\"Standard_NC6\": {\"cores\": 8, \"memoryMiB\": 64000,\n"
           "                     \"gpus\": 1}}, each field optional (memoryMiB 0: the partition's default)\n"
           "  --slurm-storage S  how the hosts reach the file shares: shared (default: the data\n"
           "                     directory is on a filesystem they share; shares are links there) or\n"
           "                     rest (they need nothing of it: a node's directories and the programs\n"
           "                     that mount volumes are copied to its host, each share is mounted\n"
           "                     there by bai-sharefuse through the File endpoint)\n"
           "  --slurm-blob-endpoint URL, --slurm-file-endpoint URL  the Blob and File endpoints as\n"
           "                     the hosts reach them, http(s)://HOST:PORT: a proxy the site runs in\n"
           "                     front of this machine's loopback endpoints (default: as published)\n"
           "  --container-runtime R where jobs with containerSettings run: auto (docker when an engine\n"
           "                     answers, else a bubblewrap sandbox, else the host), docker, sandbox\n"
           "                     or host (default auto)\n"
           "  --image IMAGE=DIR  the root directory of a container image for the sandbox (repeatable;\n"
           "                     IMAGE without a tag serves every tag); unlisted images run on the\n"
           "                     host's root, read-only with a writable layer\n"
           "  --strict-images    fail a job whose image cannot be used instead of running it without\n";
}

}  // namespace bai::daemon
