#include "scenarios/replay/replay.h"

#include <stdlib.h>
#include <unistd.h>

#include <thread>

#include "common/text/ascii.h"
#include "common/text/percent_encoding.h"
#include "emulator/batch/batch_account.h"
#include "emulator/daemon/options.h"
#include "emulator/daemon/running_emulator.h"
#include "emulator/engine/local_engine.h"
#include "emulator/engine/writable_root.h"
#include "fake_storage/accounts/account_registry.h"
#include "fake_storage/http/request_faults.h"
#include "fuse_mounts/common/mount_faults.h"
#include "scenarios/replay/expectation.h"
#include "scenarios/replay/storage_signer.h"
#include "scenarios/replay/trace_log.h"
#include "scenarios/replay/workload_player.h"

namespace bai::scenarios {

namespace fs = std::filesystem;
using nlohmann::json;

time::TimePoint replay_epoch() { return *time::parse_iso8601("2018-05-01T00:00:00Z"); }

namespace {

constexpr const char* kSubscription = "00000000-0000-0000-0000-000000000000";

struct StepFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Response {
    int status = 0;
    httplib::Headers headers;
    std::string body;
};

// The states each job went through (from every write of its document), by job name.
class JobHistory {
public:
    void observe(std::string_view type, const json& body, TraceLog& trace) {
        if (type != "job" && type != "cluster") return;
        const std::string name = body.value("name", "");
        const json& p = body.contains("properties") ? body["properties"] : json::object();
        std::lock_guard guard(mutex_);
        if (type == "job") {
            std::string state = p.value("executionState", "");
            Job& job = jobs_[name];
            job.id = body.value("id", "");
            if (state.empty() || (!job.states.empty() && job.states.back() == state)) return;
            trace.add("job " + name, job.states.empty() ? "is " + state : job.states.back() + " -> " + state);
            job.states.push_back(state);
            return;
        }
        std::string allocation = p.value("allocationState", "");
        std::string shape = allocation + ", " + std::to_string(p.value("currentNodeCount", 0)) + " node(s)";
        std::string& last = clusters_[name];
        if (allocation.empty() || last == shape) return;
        trace.add("cluster " + name, "is " + shape);
        last = shape;
    }
    std::optional<std::string> id_of(const std::string& name) const {
        std::lock_guard guard(mutex_);
        auto it = jobs_.find(name);
        if (it == jobs_.end()) return std::nullopt;
        return it->second.id;
    }
    std::vector<std::string> states_of(const std::string& name) const {
        std::lock_guard guard(mutex_);
        auto it = jobs_.find(name);
        return it == jobs_.end() ? std::vector<std::string>{} : it->second.states;
    }

private:
    struct Job {
        std::string id;
        std::vector<std::string> states;
    };
    mutable std::mutex mutex_;
    std::map<std::string, Job> jobs_;
    std::map<std::string, std::string> clusters_;
};

// A request target as httplib's client puts it on the wire (its URL encoding, on by default):
// space, '+', quote, comma, semicolon, CR and LF and bytes over 0x7F percent-encoded, the rest as
// written (checked against httplib 0.11's encoder for every byte). The ARM requests a replay
// answers in-process get the same.
std::string encoded_as_sent(const std::string& target) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : target) {
        if (c == ' ' || c == '+' || c == '\r' || c == '\n' || c == '\'' || c == ',' || c == ';' || c >= 0x80) {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::string join(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
}

class Session {
public:
    Session(const Scenario& scenario, std::uint64_t seed, const ReplayOptions& options)
        : scenario_(scenario),
          seed_(seed),
          options_(options),
          clock_(replay_epoch(), seed),
          trace_(clock_, replay_epoch()),
          player_(scenario.workloads) {
        vars_["subscription"] = kSubscription;
        vars_["seed"] = std::to_string(seed);
        vars_["dev_account"] = std::string(storage::kDevAccountName);
        vars_["dev_key"] = std::string(storage::kDevAccountKey);
    }

    ~Session() { stop_emulator(); }

    void run() {
        trace_.add("replay", "scenario " + (scenario_.name.empty() ? scenario_.file : scenario_.name) + ", seed " +
                                 std::to_string(seed_));
        start_emulator(Where{scenario_.file, 0});
        for (const Step& step : scenario_.steps) {
            where_ = step.where;
            std::visit([&](const auto& body) { run_step(body); }, step.body);
        }
        settle();
        trace_.add("replay", "done");
    }

    TraceLog& trace() { return trace_; }
    time::TimePoint now() const { return clock_.now(); }
    void stop_emulator() {
        if (!emulator_) return;
        clients_.clear();  // its connections closed first: the stop waits for open ones
        emulator_->stop();
        emulator_.reset();
    }

private:
    [[noreturn]] void fail(const std::string& message) const { throw StepFailure(where_.text() + ": " + message); }

    // ---- the emulator ----

    void start_emulator(const Where&) {
        std::vector<std::string> args{"--gpus", "none"};
        args.insert(args.end(), scenario_.emulator_args.begin(), scenario_.emulator_args.end());
        for (const char* forced : {"--arm-port", "--blob-port", "--file-port", "--batch-port", "--proxy-port", "--lro-delay"}) args.insert(args.end(), {forced, "0"});
        args.insert(args.end(), {"--location", options_.data_dir.string()});
        daemon::Options options;
        try {
            options = daemon::parse_options(args);
        } catch (const std::invalid_argument& e) {
            throw StepFailure(scenario_.file + ": emulator: " + e.what());
        }
        // The virtual clock is this machine's engine's: a Slurm cluster's time is real.
        if (options.slurm) throw StepFailure(scenario_.file + ": emulator: --compute slurm: scenarios run on this machine's engine");
        // The replay's data directory is this process's alone: no file locks per statement
        // (most of a large replay's system calls).
        options.sole_user = true;
        accounts_ = options.accounts;
        daemon::EngineHooks hooks;
        hooks.clock = &clock_;
        hooks.workloads = &player_;
        hooks.trace = [this](const std::string& actor, const std::string& event) { trace_.add(actor, event); };
        hooks.observe = [this](std::string_view type, const json& body) { jobs_.observe(type, body, trace_); };
        hooks.blob_faults = &blob_faults_;
        hooks.file_faults = &file_faults_;
        emulator_ = daemon::RunningEmulator::start(options, hooks);
        emulator_->engine().mount_faults().set_fallback([this](mounts::VolumeKind kind) {
            auto fault = (kind == mounts::VolumeKind::share ? file_faults_ : blob_faults_).next();
            if (!fault) return 0;
            if (fault->stall.count() > 0) std::this_thread::sleep_for(fault->stall);
            return fault->status != 0 ? EIO : 0;
        });
        clients_.clear();
        settle();
    }

    httplib::Client& client_for(const std::string& base_url) {
        auto it = clients_.find(base_url);
        if (it == clients_.end()) {
            auto client = std::make_unique<httplib::Client>(base_url);
            client->enable_server_certificate_verification(false);
            client->set_keep_alive(true);
            client->set_tcp_nodelay(true);
            client->set_read_timeout(std::chrono::seconds(options_.real_limit.count()));
            it = clients_.emplace(base_url, std::move(client)).first;
        }
        return *it->second;
    }

    // Until the engine's threads all wait on the clock (none is due) and no ARM operation is left.
    void settle() {
        const auto until = std::chrono::steady_clock::now() + options_.real_limit;
        while (true) {
            if (emulator_->operations_idle()) {
                auto left = until - std::chrono::steady_clock::now();
                if (!clock_.settle(std::max(left, std::chrono::steady_clock::duration::zero()))) break;
                if (emulator_->operations_idle()) return;
            }
            if (std::chrono::steady_clock::now() > until) break;
            emulator_->wait_operations_idle(until);
        }
        fail("the virtual clock waited " + std::to_string(options_.real_limit.count()) +
             " s of real time for the emulator to settle: a real process (a job's or a setup task's) still runs");
    }

    void advance(Duration by) {
        settle();
        if (!clock_.advance(by, options_.real_limit)) {
            fail("the virtual clock waited " + std::to_string(options_.real_limit.count()) +
                 " s of real time for a real process to end");
        }
        settle();
    }

    // ---- variables ----

    std::string substitute(const std::string& text) const {
        std::string out;
        size_t pos = 0;
        while (true) {
            size_t open = text.find("${", pos);
            if (open == std::string::npos) break;
            size_t close = text.find('}', open);
            if (close == std::string::npos) fail("unterminated ${ in '" + text + "'");
            std::string name = text.substr(open + 2, close - open - 2);
            auto it = vars_.find(name);
            if (it == vars_.end()) fail("unknown variable ${" + name + "} (set or capture it first)");
            out.append(text, pos, open - pos).append(it->second);
            pos = close + 1;
        }
        return out.append(text, pos, std::string::npos);
    }

    std::string base_url(const std::string& endpoint) const {
        const auto& e = emulator_->endpoints();
        if (endpoint == "arm") return e.arm;
        if (endpoint == "blob") return e.blob;
        if (endpoint == "batch") return e.batch;
        return e.file;
    }

    std::optional<std::string> account_key(const std::string& account) const {
        if (account == storage::kDevAccountName) return std::string(storage::kDevAccountKey);
        for (const storage::Account& a : accounts_) {
            if (a.name == account) return a.key1;
        }
        return std::nullopt;
    }

    // ---- requests ----

    Response send(const std::string& base, httplib::Request request, bool storage) {
        if (storage && !request.has_header("Authorization")) {
            std::string path = request.target.substr(1, request.target.find_first_of("/?", 1) - 1);
            if (auto key = account_key(path)) storage::sign_shared_key(request, path, *key);
        }
        request.path = request.target;
        // ARM's requests are handed to its endpoint in this process (no TLS, no socket: most of
        // what a request cost the replay); the others go through the endpoints.
        if (base == emulator_->endpoints().arm) {
            request.target = encoded_as_sent(request.target);
            httplib::Response answered = emulator_->answer_arm(std::move(request));
            return {answered.status, std::move(answered.headers), std::move(answered.body)};
        }
        httplib::Result result = client_for(base).send(request);
        if (!result) fail("the request " + request.method + " " + request.target + " got no answer: " + httplib::to_string(result.error()));
        return {result->status, result->headers, result->body};
    }

    Response send(const RequestStep& r) {
        httplib::Request request;
        request.method = r.method;
        request.target = substitute(r.target);
        for (const auto& [name, value] : r.headers) request.set_header(name, substitute(value));
        if (r.body_file) {
            fs::path file = fs::path(scenario_.file).parent_path() / *r.body_file;
            std::optional<std::string> text = read_scenario_text(file.string());
            if (!text) fail("cannot read " + file.string());
            request.body = substitute(*text);
        } else if (r.body) {
            request.body = substitute(*r.body);
        }
        if (r.endpoint == "batch") {
            request.path = request.target;
            if (!request.has_header("Authorization")) {
                sign_batch_shared_key(request, std::string(batch::kDevBatchAccountName), std::string(batch::kDevBatchAccountKey));
            }
            return send(base_url(r.endpoint), std::move(request), false);
        }
        if (r.endpoint == "arm") {
            // ARM wants a bearer token; the emulator takes any.
            if (!request.has_header("Authorization")) request.set_header("Authorization", "Bearer scenario");
            if (!request.body.empty() && !request.has_header("Content-Type")) request.set_header("Content-Type", "application/json");
        }
        return send(base_url(r.endpoint), std::move(request), r.endpoint != "arm");
    }

    Response get_url(const std::string& url) {
        size_t slash = url.find('/', url.find("//") + 2);
        httplib::Request request;
        request.method = "GET";
        request.target = slash == std::string::npos ? "/" : url.substr(slash);
        return send(url.substr(0, slash), std::move(request), false);
    }

    // ---- steps ----

    void run_step(const SetStep& s) { vars_[s.name] = substitute(s.value); }

    void run_step(const RequestStep& r) {
        // Its effects may begin before the answer comes: the line goes first, the answer once
        // they have settled.
        trace_.add("replay", r.method + " " + r.endpoint + " " + r.target);
        last_ = send(r);
        settle();
        trace_.add("replay", "answered " + std::to_string(last_->status));
    }

    void run_step(const AdvanceStep& a) {
        trace_.add("replay", "advance " + format_duration(a.by));
        advance(a.by);
    }

    void run_step(const WaitStep& w) {
        Duration waited{0};
        int tries = 0;
        while (true) {
            Response r = send(w.probe);
            ++tries;
            std::optional<json> value = pointer_value(r.body, w.pointer);
            if (holds(value, w.comparison)) {
                last_ = std::move(r);
                trace_.add("replay", "waited " + format_duration(waited) + " until " + w.pointer + " " + describe(w.comparison));
                return;
            }
            if (waited + w.every > w.within) {
                std::string body = r.body.size() > 600 ? r.body.substr(0, 600) + "..." : r.body;
                fail("waited " + format_duration(waited) + " (" + std::to_string(tries) + " tries) for " + w.pointer + " " +
                     describe(w.comparison) + ", last " + describe(value) + " in " + body);
            }
            advance(w.every);
            waited += w.every;
        }
    }

    void run_step(const CaptureStep& c) {
        const Response& r = need_last();
        std::optional<json> value;
        if (c.from == CaptureStep::json) {
            value = pointer_value(r.body, substitute(c.subject));
        } else if (auto it = r.headers.find(c.subject); it != r.headers.end()) {
            value = it->second;
        }
        if (!value) fail("nothing to capture at " + c.subject + " in the last response");
        vars_[c.name] = value->is_string() ? value->get<std::string>() : value->dump();
    }

    void run_step(const ExpectStep& e) {
        std::optional<json> actual;
        std::string what;
        switch (e.kind) {
            case ExpectStep::status:
                actual = need_last().status;
                what = "status";
                break;
            case ExpectStep::json:
                what = substitute(e.subject);
                actual = pointer_value(need_last().body, what);
                break;
            case ExpectStep::header: {
                what = "header " + e.subject;
                const Response& r = need_last();
                if (auto it = r.headers.find(e.subject); it != r.headers.end()) actual = it->second;
                break;
            }
            case ExpectStep::body:
                what = "body";
                actual = need_last().body;
                break;
            case ExpectStep::file:
                what = "file " + substitute(e.subject);
                actual = file_content(what.substr(5));
                break;
            case ExpectStep::stdout_text: {
                std::string subject = substitute(e.subject);
                size_t space = subject.find(' ');
                std::string job = subject.substr(0, space);
                std::string file = space == std::string::npos ? "stdout.txt" : subject.substr(space + 1);
                what = "stdout of job " + job + " (" + file + ")";
                actual = output_file(job, "stdouterr", file);
                break;
            }
            case ExpectStep::states: {
                std::string job = substitute(e.subject);
                std::vector<std::string> states = jobs_.states_of(job);
                if (states != e.expected_states) {
                    fail("job " + job + " went through [" + join(states) + "], expected [" + join(e.expected_states) + "]");
                }
                trace_.add("replay", "expect states " + job + " " + join(states) + ": ok");
                return;
            }
        }
        Comparison wanted = e.comparison;
        if (wanted.value.is_string()) wanted.value = substitute(wanted.value.get<std::string>());
        if (!holds(actual, wanted)) fail("expected " + what + " " + describe(wanted) + ", got " + describe(actual));
        trace_.add("replay", "expect " + what + " " + describe(e.comparison) + ": ok");
    }

    void run_step(const FaultStep& f) {
        std::vector<std::string> args;
        for (const std::string& a : f.args) args.push_back(substitute(a));
        trace_.add("replay", "fault " + f.kind + (args.empty() ? "" : " " + join(args)));
        engine::LocalEngine& engine = emulator_->engine();
        if (f.kind == "preempt" || f.kind == "fail") {
            std::string node = args[0] == "node" ? args[1] : node_of_job(args[1]);
            std::optional<json> done;
            try {
                done = f.kind == "preempt" ? engine.preempt(node) : engine.fail(node);
            } catch (const std::exception& e) {
                fail(e.what());
            }
            if (!done) fail("there is no node " + node);
        } else if (f.kind == "kill") {
            std::string id = job_id(args[1]);
            if (state_of(args[1]) != "running") fail("job " + args[1] + " is not running (it is " + state_of(args[1]) + ")");
            engine.kill(id);
        } else if (f.kind == "storage") {
            // One count for the service: its REST requests and its volumes' mount operations.
            storage::RequestFaults& faults = args[0] == "blob" ? blob_faults_ : file_faults_;
            if (args[1] == "recover") {
                faults.recover();
            } else if (args[1] == "fail") {
                faults.fail_next(std::stoi(args[2]), std::stoi(args[3]));
            } else {
                faults.stall_next(std::stoi(args[2]), std::chrono::milliseconds(std::stoll(args[3])));
            }
        } else if (f.kind == "enospc") {
            size_t slash = args[1].find('/');
            auto kind = args[0] == "share" ? mounts::VolumeKind::share : mounts::VolumeKind::container;
            engine.mount_faults().set(kind, args[1].substr(0, slash), args[1].substr(slash + 1),
                                      {ENOSPC, 1'000'000'000, std::chrono::milliseconds(0)});
        } else if (f.kind == "restart") {
            settle();
            stop_emulator();
            trace_.add("replay", "emulator stopped");
            start_emulator(where_);
            trace_.add("replay", "emulator started");
        }
        settle();
    }

    // ---- what expectations and faults look at ----

    const Response& need_last() const {
        if (!last_) fail("no request has been made yet");
        return *last_;
    }

    static std::optional<json> pointer_value(const std::string& body, const std::string& pointer) {
        json doc = json::parse(body, nullptr, false);
        if (doc.is_discarded()) return std::nullopt;
        try {
            json::json_pointer p(pointer);
            if (!doc.contains(p)) return std::nullopt;
            return doc.at(p);
        } catch (const json::exception&) {
            return std::nullopt;
        }
    }

    std::string job_id(const std::string& name) const {
        std::optional<std::string> id = jobs_.id_of(name);
        if (!id) fail("there is no job " + name);
        return *id;
    }

    std::string state_of(const std::string& name) const {
        std::vector<std::string> states = jobs_.states_of(name);
        return states.empty() ? "" : states.back();
    }

    std::string node_of_job(const std::string& name) {
        std::string id = text::lower(job_id(name));
        for (const json& n : emulator_->engine().nodes()) {
            if (n["job"].is_string() && text::lower(n["job"].get<std::string>()) == id) return n["nodeId"];
        }
        fail("job " + name + " runs on no node (it is " + state_of(name) + ")");
    }

    // "share A/S/PATH" or "container A/C/BLOB" or "output JOB ID/PATH": the content, nullopt when absent.
    std::optional<json> file_content(const std::string& subject) {
        size_t space = subject.find(' ');
        std::string where = subject.substr(0, space), rest = subject.substr(space + 1);
        if (where == "output") {
            size_t gap = rest.find(' ');
            std::string job = rest.substr(0, gap), path = rest.substr(gap + 1);
            size_t slash = path.find('/');
            if (slash == std::string::npos) fail("expected OUTPUT-ID/PATH, got '" + path + "'");
            return output_file(job, path.substr(0, slash), path.substr(slash + 1));
        }
        httplib::Request request;
        request.method = "GET";
        request.target = "/" + text::percent_encode(rest, true);
        Response r = send(base_url(where == "share" ? "file" : "blob"), std::move(request), true);
        if (r.status == 404) return std::nullopt;
        if (r.status != 200) fail("reading " + subject + " answered " + std::to_string(r.status) + ": " + r.body);
        return r.body;
    }

    // A file of a job's output directory, through listOutputFiles and its download URL.
    std::optional<json> output_file(const std::string& job, const std::string& directory_id, const std::string& path) {
        std::string id = job_id(job);
        const bool preview = text::lower(id).find("/workspaces/") == std::string::npos;
        size_t slash = path.rfind('/');
        std::string directory = slash == std::string::npos ? "." : path.substr(0, slash);
        std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
        httplib::Request request;
        request.method = "POST";
        request.set_header("Authorization", "Bearer scenario");
        request.target = text::percent_encode(id, true) + "/listOutputFiles?api-version=" +
                         (preview ? "2017-09-01-preview" : "2018-05-01") + "&outputdirectoryid=" + directory_id +
                         "&directory=" + text::percent_encode(directory, true) + "&linkexpiryinminutes=60";
        Response listed = send(base_url("arm"), std::move(request), false);
        if (listed.status != 200) {
            fail("listOutputFiles of job " + job + " (" + directory_id + ") answered " + std::to_string(listed.status) +
                 ": " + listed.body);
        }
        json items = json::parse(listed.body, nullptr, false);
        for (const json& item : items.value("value", json::array())) {
            if (item.value("name", "") != name || item.value("downloadUrl", "").empty()) continue;
            Response file = get_url(item["downloadUrl"]);
            if (file.status != 200) fail("downloading " + path + " of job " + job + " answered " + std::to_string(file.status));
            return file.body;
        }
        return std::nullopt;
    }

    const Scenario& scenario_;
    std::uint64_t seed_;
    const ReplayOptions& options_;
    engine::VirtualClock clock_;
    TraceLog trace_;
    WorkloadPlayer player_;
    JobHistory jobs_;
    storage::RequestFaults blob_faults_;
    storage::RequestFaults file_faults_;
    std::vector<storage::Account> accounts_;
    std::unique_ptr<daemon::RunningEmulator> emulator_;
    std::map<std::string, std::unique_ptr<httplib::Client>> clients_;
    std::map<std::string, std::string> vars_;
    std::optional<Response> last_;
    Where where_;
};

// A temporary data directory, removed with what is in it (mounts released first by the stop).
struct TemporaryDirectory {
    TemporaryDirectory() {
        // $TMPDIR when set, else memory (/dev/shm): a replay's nodes and jobs make and remove
        // thousands of directories, which ext4 makes slow after many deletions.
        fs::path base = fs::temp_directory_path();
        std::error_code ec;
        if (!std::getenv("TMPDIR") && fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) base = "/dev/shm";
        std::string pattern = (base / "bai-replay-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot make a temporary directory");
        path = pattern;
    }
    ~TemporaryDirectory() {
        std::error_code ec;
        engine::remove_tree(path, ec);
    }
    fs::path path;
};

}  // namespace

ReplayResult replay(const Scenario& scenario, const ReplayOptions& options) {
    ReplayResult result;
    result.seed = options.seed.value_or(scenario.seed.value_or(1));
    std::optional<TemporaryDirectory> temporary;
    ReplayOptions effective = options;
    if (effective.data_dir.empty()) {
        temporary.emplace();
        effective.data_dir = temporary->path;
    }
    Session session(scenario, result.seed, effective);
    try {
        session.run();
        result.passed = true;
    } catch (const std::exception& e) {
        // StepFailure, or the emulator refusing to start (daemon::StartError).
        result.failure = e.what();
    }
    session.stop_emulator();
    result.trace = session.trace().lines();
    result.virtual_time = session.now() - replay_epoch();
    return result;
}

}  // namespace bai::scenarios
