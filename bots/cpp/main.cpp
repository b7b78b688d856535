// An example dominoes bot in C++: a gRPC server for the Bot service of proto/dominoes/v1/bot.proto.
// Copy it and change choose() to write your own.
//
// Build: bash bots/build.sh cpp   (generates the protocol code from proto/ and writes bin/bot)
// Run:   bin/bot --listen 127.0.0.1:50055 [--policy random|heaviest] [--name NAME]
// The arena starts it with DOMINOES_BOT_LISTEN set instead of --listen.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dominoes/v1/bot.grpc.pb.h"

namespace pb = dominoes::v1;

// The arena sets the same message size limit at its end.
constexpr int kMaxMessageBytes = 16 << 20;
// The most policy calls that run at once (each on a thread of its own); more wait their turn.
constexpr size_t kWorkers = 32;

// --- The policy: everything a bot author changes is here. -------------------------------------------

// choose returns an index into req.observation().legal_actions(), which is never empty here.
// It may be called for many matches at once, on several threads: it must not touch shared state unguarded.
int choose(const std::string& policy, const pb::ActRequest& req) {
  const auto& legal = req.observation().legal_actions();
  if (policy == "heaviest") {
    // The placement with the most pips (the first of equals); otherwise index 0, because
    // with no placement the legal actions are a draw or a pass.
    int best = 0, best_pips = -1;
    for (int i = 0; i < legal.size(); ++i) {
      const pb::Action& a = legal[i];
      if (a.kind() != pb::ACTION_KIND_PLACE) continue;
      int pips = static_cast<int>(a.tile().low() + a.tile().high());
      if (pips > best_pips) best = i, best_pips = pips;
    }
    return best;
  }
  // "random": one generator per thread, so concurrent calls share nothing.
  thread_local std::mt19937 rng{std::random_device{}()};
  return std::uniform_int_distribution<int>(0, legal.size() - 1)(rng);
}

const char* const kPolicies[] = {"random", "heaviest"};

// --- The service. ------------------------------------------------------------------------------------

// The policy runs on a pool of worker threads of its own, up to kWorkers, started as the calls in flight need
// them; more calls wait in a queue. So a slow policy (a search that uses its move time) holds up neither gRPC's
// threads nor the other matches, and the thread count stays bounded (the sandbox allows 128 in all).
class Workers {
 public:
  explicit Workers(size_t max) : max_(max) {}
  ~Workers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  void submit(std::function<void()> job) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push(std::move(job));
    if (jobs_.size() > idle_ && threads_.size() < max_) threads_.emplace_back([this] { work(); });
    wake_.notify_one();
  }

 private:
  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++idle_;
      wake_.wait(lock, [this] { return done_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // done_
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  const size_t max_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::queue<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool done_ = false;
};

// gRPC's callback API: a handler returns at once and the call ends when its reactor's Finish() is called,
// here from a worker thread once the policy has chosen.
class BotService final : public pb::Bot::CallbackService {
 public:
  BotService(std::string name, std::string policy) : name_(std::move(name)), policy_(std::move(policy)) {}

  grpc::ServerUnaryReactor* Hello(grpc::CallbackServerContext* ctx, const pb::HelloRequest*,
                                  pb::HelloReply* reply) override {
    reply->set_name(name_);
    reply->set_version("1.0.0");
    reply->set_author("dominoes arena");
    reply->set_protocol_version(pb::PROTOCOL_VERSION_1);
    // No variants: every variant.
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerUnaryReactor* Act(grpc::CallbackServerContext* ctx, const pb::ActRequest* req,
                                pb::ActReply* reply) override {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    // ctx, req and reply stay valid until Finish(). A call that timed out while it waited is not played.
    workers_.submit([this, ctx, req, reply, reactor] {
      reactor->Finish(ctx->IsCancelled() ? grpc::Status::CANCELLED : act(*req, reply));
    });
    return reactor;
  }

  // Notify brings round and match results: a stateful bot would learn from the revealed hands here.
  grpc::ServerUnaryReactor* Notify(grpc::CallbackServerContext* ctx, const pb::Notification*,
                                   pb::NotifyReply*) override {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  grpc::Status act(const pb::ActRequest& req, pb::ActReply* reply) {
    const int n = req.observation().legal_actions_size();
    if (n == 0) {
      // A malformed request gets an error status; it must never bring the process down.
      return {grpc::StatusCode::INVALID_ARGUMENT, "the request has no legal actions"};
    }
    int i;
    try {
      i = choose(policy_, req);
    } catch (const std::exception& e) {
      return {grpc::StatusCode::INTERNAL, "policy " + policy_ + " failed: " + e.what()};
    } catch (...) {
      return {grpc::StatusCode::INTERNAL, "policy " + policy_ + " failed"};
    }
    if (i < 0 || i >= n) {
      // Better a clear bot error in the arena's record than an "illegal action" that hides the bug.
      return {grpc::StatusCode::INTERNAL, "policy " + policy_ + " chose index " + std::to_string(i) + " of " +
                                              std::to_string(n) + " legal actions"};
    }
    reply->set_index(static_cast<uint32_t>(i));
    return grpc::Status::OK;
  }

  const std::string name_, policy_;
  Workers workers_{kWorkers};
};

// --- Listening and running. --------------------------------------------------------------------------

[[noreturn]] void usage(const std::string& problem) {
  if (!problem.empty()) std::cerr << "error: " << problem << "\n";
  (problem.empty() ? std::cout : std::cerr)
      << "usage: bot [--listen ADDR] [--policy random|heaviest] [--name NAME]\n"
         "  ADDR is \"127.0.0.1:PORT\" (port 0: any free port) or \"unix:/path/to.sock\"; "
         "default: $DOMINOES_BOT_LISTEN\n";
  std::exit(problem.empty() ? 0 : 2);
}

int main(int argc, char** argv) {
  const char* env_listen = std::getenv("DOMINOES_BOT_LISTEN");
  std::string listen = env_listen ? env_listen : "", policy = "random", name;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "-h" || arg == "--help") usage("");
    const auto eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1), arg = arg.substr(0, eq);  // --name=NAME
    } else if (i + 1 < argc) {
      value = argv[++i];  // --name NAME
    } else {
      usage(arg.rfind("--", 0) == 0 ? arg + " needs a value" : "unexpected argument " + arg);
    }
    if (arg == "--listen") listen = value;
    else if (arg == "--policy") policy = value;
    else if (arg == "--name") name = value;
    else usage("unknown option " + arg);
  }
  bool known = false;
  for (const char* p : kPolicies) known = known || policy == p;
  if (!known) usage("unknown policy \"" + policy + "\"");
  if (listen.empty()) usage("no address to listen on: pass --listen ADDR or set DOMINOES_BOT_LISTEN");
  if (name.empty()) name = "cpp-" + policy;
  if (name.size() > 64) usage("the name is longer than 64 characters");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) usage("the name has a control character");
  }

  // A socket file left by a killed bot makes bind fail. Remove it, but only if it is a socket: a typo in
  // the address must not delete someone's file. ("unix:///path" is gRPC's other spelling of "unix:/path".)
  if (listen.rfind("unix:", 0) == 0) {
    std::string path = listen.substr(5);
    if (path.rfind("//", 0) == 0) path = path.substr(2);
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path.c_str());
  }

  // Block SIGTERM and SIGINT before gRPC starts its threads (they inherit the mask), so that only
  // sigwait() below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  BotService service(name, policy);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  // Never share a port with another process: a second bot on the same port must fail, not steal calls.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::cerr << "cpp bot: could not listen on " << listen << "\n";
    return 1;
  }

  // Show the port actually bound, so "127.0.0.1:0" (any free port) is usable too.
  std::string shown = listen;
  if (listen.rfind("unix:", 0) != 0) shown = listen.substr(0, listen.rfind(':') + 1) + std::to_string(port);
  std::cerr << "cpp bot: listening on " << shown << " (policy " << policy << ", name " << name << ")"
            << std::endl;

  // The arena stops a bot with SIGTERM (and SIGKILL 3 s later): finish the calls in flight, but never take
  // more than 2 s. Shutdown() cancels the calls still running then, yet waits for their policy to return,
  // so a policy that is still busy half a second later is abandoned.
  int sig = 0;
  sigwait(&stop_signals, &sig);
  auto stopped = std::async(std::launch::async, [&server] {
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  if (stopped.wait_for(std::chrono::milliseconds(2500)) == std::future_status::timeout) std::_Exit(0);
  return 0;
}
