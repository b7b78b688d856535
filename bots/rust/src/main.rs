//! An example dominoes bot in Rust: a tonic gRPC server for the Bot service of proto/dominoes/v1/bot.proto.
//! Copy it and change `choose()` to write your own.
//!
//! Build: bash bots/build.sh rust   (generates the protocol code in build.rs and writes bin/bot)
//! Run:   bin/bot --listen 127.0.0.1:50055 [--policy random|heaviest] [--name NAME]
//! The arena starts it with DOMINOES_BOT_LISTEN set instead of --listen.

use std::io::ErrorKind;
use std::os::unix::fs::FileTypeExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::{TcpListener, UnixListener};
use tokio::signal::unix::{SignalKind, signal};
use tokio_stream::wrappers::UnixListenerStream;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

/// The generated protocol code (messages, enums, the `Bot` trait and `BotServer`), written by build.rs.
/// A readable copy is in gen/dominoes.v1.rs after a build.
pub mod pb {
    tonic::include_proto!("dominoes.v1");
}
use pb::bot_server::{Bot, BotServer};
use pb::{ActRequest, ActionKind};

/// The arena sets the same message size limit at its end.
const MAX_MESSAGE_BYTES: usize = 16 << 20;

// --- The policy: everything a bot author changes is here. ---------------------------------------------

/// The bot. A stateful bot adds its memory here, e.g. `memory: Mutex<HashMap<String, Memory>>` keyed by
/// `req.match_id` (calls for different matches arrive at once), filled in `choose` and in `notify`.
struct MyBot {
    name: String,
    policy: Policy,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Policy {
    Random,
    Heaviest,
}

const POLICIES: [(&str, Policy); 2] = [("random", Policy::Random), ("heaviest", Policy::Heaviest)];

impl Policy {
    fn name(self) -> &'static str {
        POLICIES.iter().find(|(_, p)| *p == self).map_or("?", |(n, _)| n)
    }
}

impl MyBot {
    /// Returns an index into `req.observation.legal_actions`, which is never empty here.
    /// The generated types are in the module `pb` (read them in gen/dominoes.v1.rs). Calls for different
    /// matches arrive concurrently, hence `&self`: state shared between calls goes in a `Mutex` of `MyBot`.
    fn choose(&self, req: &ActRequest) -> usize {
        let legal = legal_actions(req);
        match self.policy {
            // The placement with the most pips (the first of equals); otherwise index 0, because with no
            // placement the legal actions are a draw or a pass.
            Policy::Heaviest => {
                let (mut best, mut best_pips) = (0, -1);
                for (i, action) in legal.iter().enumerate() {
                    if action.kind() != ActionKind::Place {
                        continue;
                    }
                    let tile = action.tile.unwrap_or_default(); // a Tile is Copy; absent would be [0|0]
                    let pips = i64::from(tile.low + tile.high);
                    if pips > best_pips {
                        (best, best_pips) = (i, pips);
                    }
                }
                best
            }
            // A uniformly random legal action; fastrand keeps one generator per thread.
            Policy::Random => fastrand::usize(..legal.len()),
        }
    }
}

// --- The service. ---------------------------------------------------------------------------------------

fn legal_actions(req: &ActRequest) -> &[pb::Action] {
    req.observation.as_ref().map_or(&[], |o| o.legal_actions.as_slice())
}

#[tonic::async_trait]
impl Bot for MyBot {
    async fn hello(&self, _: Request<pb::HelloRequest>) -> Result<Response<pb::HelloReply>, Status> {
        Ok(Response::new(pb::HelloReply {
            name: self.name.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            author: "dominoes arena".to_string(),
            protocol_version: pb::ProtocolVersion::ProtocolVersion1 as u32,
            variants: vec![], // empty: every variant
        }))
    }

    async fn act(&self, request: Request<ActRequest>) -> Result<Response<pb::ActReply>, Status> {
        let req = request.into_inner();
        let n = legal_actions(&req).len();
        if n == 0 {
            // A malformed request gets an error status; it must never bring the process down.
            return Err(Status::invalid_argument("the request has no legal actions"));
        }
        // A panic in the policy (an index out of bounds, an unwrap) becomes a bot error for this call, and the
        // bot keeps serving; the panic message is in the bot's log.
        let i = catch_unwind(AssertUnwindSafe(|| self.choose(&req))).map_err(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(ToString::to_string)
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Status::internal(format!("the policy panicked: {what}"))
        })?;
        if i >= n {
            // Better a clear bot error in the arena's record than an "illegal action" that hides the bug.
            return Err(Status::internal(format!(
                "policy {} chose index {i} of {n} legal actions",
                self.policy.name()
            )));
        }
        Ok(Response::new(pb::ActReply {
            choice: Some(pb::act_reply::Choice::Index(i as u32)),
            ..Default::default() // no comment, no belief: fields the protocol adds later stay empty too
        }))
    }

    /// Round and match results: a stateful bot would learn from the revealed hands here.
    async fn notify(&self, _: Request<pb::Notification>) -> Result<Response<pb::NotifyReply>, Status> {
        Ok(Response::new(pb::NotifyReply {}))
    }
}

// --- Listening and running. -------------------------------------------------------------------------------

const USAGE: &str = "usage: bot [--listen ADDR] [--policy random|heaviest] [--name NAME]
  --listen ADDR   \"127.0.0.1:PORT\" (port 0: any free port) or \"unix:/path/to.sock\" (default $DOMINOES_BOT_LISTEN)
  --policy NAME   random (default) or heaviest
  --name NAME     the name sent in the handshake (default \"rust-\" + the policy)";

fn usage(problem: &str) -> ! {
    eprintln!("error: {problem}\n{USAGE}");
    std::process::exit(2);
}

struct Options {
    listen: String,
    policy: Policy,
    name: String,
}

/// `--flag VALUE` or `--flag=VALUE`; no dependency for three options.
fn parse_args() -> Options {
    let mut listen = std::env::var("DOMINOES_BOT_LISTEN").unwrap_or_default();
    let (mut policy, mut name) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if !matches!(flag.as_str(), "--listen" | "--policy" | "--name") {
            usage(&format!("unknown argument {arg:?}"));
        }
        let value = inline.or_else(|| args.next()).unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        match flag.as_str() {
            "--listen" => listen = value,
            "--policy" => policy = Some(value),
            _ => name = Some(value),
        }
    }
    let policy_name = policy.unwrap_or_else(|| "random".to_string());
    let policy = POLICIES
        .iter()
        .find(|(n, _)| *n == policy_name)
        .map_or_else(|| usage(&format!("unknown policy {policy_name:?}")), |(_, p)| *p);
    if listen.is_empty() {
        usage("no address to listen on: pass --listen ADDR or set DOMINOES_BOT_LISTEN");
    }
    let name = name.unwrap_or_else(|| format!("rust-{policy_name}"));
    // The arena refuses a handshake whose name is empty, longer than 64 characters or not printable.
    if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
        usage("--name must be 1 to 64 printable characters");
    }
    Options { listen, policy, name }
}

/// A future that completes on SIGTERM (how the arena stops a bot) or SIGINT.
async fn stop_signal() {
    let mut term = signal(SignalKind::terminate()).expect("installing the SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("installing the SIGINT handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// Removes a socket file left behind by a killed bot, which would make bind fail with "address in use";
/// only if it is a socket, so that a typo in the address cannot delete someone's file.
fn remove_stale_socket(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path),
        Ok(_) => Ok(()), // bind will fail with a clear error
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn fail(what: &str) -> ! {
    eprintln!("rust bot: {what}");
    std::process::exit(1);
}

fn main() {
    let options = parse_args();
    // One worker thread per CPU the bot may use (std reads the cgroup's CPU quota), at most 4: the sandbox
    // gives 1 CPU and 128 processes+threads.
    let workers = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(4);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .max_blocking_threads(8)
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&format!("could not start the runtime: {e}")));
    runtime.block_on(serve(options));
}

async fn serve(options: Options) {
    let Options { listen, policy, name } = options;
    let service = BotServer::new(MyBot { name: name.clone(), policy })
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);

    // The arena stops a bot with SIGTERM: finish the calls in flight, but never take more than 2 s.
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let mut socket_path: Option<PathBuf> = None;
    let shutdown = async {
        let _ = stop_rx.await;
    };

    let result = if let Some(path) = listen.strip_prefix("unix:") {
        // "unix:/path", also "unix:///path" as gRPC spells it.
        let path = PathBuf::from(path.strip_prefix("//").unwrap_or(path));
        if let Err(e) = remove_stale_socket(&path) {
            fail(&format!("could not remove the stale socket {}: {e}", path.display()));
        }
        let listener =
            UnixListener::bind(&path).unwrap_or_else(|e| fail(&format!("could not listen on {listen}: {e}")));
        socket_path = Some(path.clone());
        spawn_stopper(stop_tx, socket_path.clone());
        eprintln!("rust bot: listening on {listen} (policy {}, name {name})", policy.name());
        Server::builder()
            .serve_with_incoming_shutdown(service, UnixListenerStream::new(listener), shutdown)
            .await
    } else {
        let listener = TcpListener::bind(&listen)
            .await
            .unwrap_or_else(|e| fail(&format!("could not listen on {listen}: {e}")));
        // Show the address actually bound, so "127.0.0.1:0" (any free port) is usable too.
        let shown = listener.local_addr().map_or(listen.clone(), |a| a.to_string());
        spawn_stopper(stop_tx, None);
        eprintln!("rust bot: listening on {shown} (policy {}, name {name})", policy.name());
        let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
        Server::builder().serve_with_incoming_shutdown(service, incoming, shutdown).await
    };
    if let Some(path) = socket_path {
        let _ = std::fs::remove_file(path);
    }
    if let Err(e) = result {
        fail(&format!("serve: {e}"));
    }
}

/// On SIGTERM or SIGINT: start the graceful shutdown, and exit anyway 2 s later.
fn spawn_stopper(stop: tokio::sync::oneshot::Sender<()>, socket_path: Option<PathBuf>) {
    tokio::spawn(async move {
        stop_signal().await;
        let _ = stop.send(());
        tokio::time::sleep(Duration::from_secs(2)).await;
        eprintln!("rust bot: calls still running 2 s after the stop signal; exiting");
        if let Some(path) = socket_path {
            let _ = std::fs::remove_file(path);
        }
        std::process::exit(0);
    });
}
