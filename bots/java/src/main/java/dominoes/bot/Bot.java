// An example dominoes bot in Java: a gRPC server for the Bot service of proto/dominoes/v1/bot.proto.
// Change choose() to write your own; the rest is the plumbing.
//
// Build: bash bots/build.sh java   (generates the protocol classes from proto/ and writes bin/bot.jar, one jar)
// Run:   bots/java/bot --listen 127.0.0.1:50055 [--policy random|heaviest] [--name NAME]
// The arena starts it with DOMINOES_BOT_LISTEN set instead of --listen.
package dominoes.bot;

import dominoes.arena.v1.Action;
import dominoes.arena.v1.ActionKind;
import dominoes.arena.v1.ActReply;
import dominoes.arena.v1.ActRequest;
import dominoes.arena.v1.BotGrpc;
import dominoes.arena.v1.HelloReply;
import dominoes.arena.v1.HelloRequest;
import dominoes.arena.v1.Notification;
import dominoes.arena.v1.NotifyReply;
import dominoes.arena.v1.ProtocolVersion;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

public final class Bot extends BotGrpc.BotImplBase {
  /** The arena sets the same message size limit at its end. */
  static final int MAX_MESSAGE_BYTES = 16 << 20;

  /** Threads that run the calls; calls for different matches arrive concurrently. */
  static final int CALL_THREADS = 4;

  // --- The policy: everything a bot author changes is here. -------------------------------------------

  static final List<String> POLICIES = List.of("random", "heaviest");

  /**
   * Returns an index into request.getObservation().getLegalActionsList(), which is never empty here.
   * It may be called for many matches at once (from several threads), so it must not touch shared state
   * unguarded.
   */
  int choose(ActRequest request) {
    List<Action> legal = request.getObservation().getLegalActionsList();
    switch (policy) {
      case "heaviest": {
        // The placement with the most pips (the first of equals); otherwise index 0, because with
        // no placement the legal actions are a draw or a pass.
        int best = 0, bestPips = -1;
        for (int i = 0; i < legal.size(); i++) {
          Action a = legal.get(i);
          if (a.getKind() != ActionKind.ACTION_KIND_PLACE) continue;
          int pips = a.getTile().getLow() + a.getTile().getHigh();
          if (pips > bestPips) {
            best = i;
            bestPips = pips;
          }
        }
        return best;
      }
      default: // "random"
        return ThreadLocalRandom.current().nextInt(legal.size());
    }
  }

  // --- The service. ------------------------------------------------------------------------------------

  final String name, policy;

  Bot(String name, String policy) {
    this.name = name;
    this.policy = policy;
  }

  @Override
  public void hello(HelloRequest request, StreamObserver<HelloReply> reply) {
    reply.onNext(HelloReply.newBuilder()
        .setName(name)
        .setVersion("1.0.0")
        .setAuthor("dominoes arena")
        .setProtocolVersion(ProtocolVersion.PROTOCOL_VERSION_1_VALUE)
        // no variants: every variant
        .build());
    reply.onCompleted();
  }

  @Override
  public void act(ActRequest request, StreamObserver<ActReply> reply) {
    int n = request.getObservation().getLegalActionsCount();
    if (n == 0) {
      // A malformed request gets an error status; it must never bring the process down.
      reply.onError(Status.INVALID_ARGUMENT.withDescription("the request has no legal actions").asRuntimeException());
      return;
    }
    int i;
    try {
      i = choose(request);
    } catch (RuntimeException e) {
      e.printStackTrace();
      reply.onError(Status.INTERNAL.withDescription("policy " + policy + " failed: " + e).asRuntimeException());
      return;
    }
    if (i < 0 || i >= n) {
      // Better a clear bot error in the arena's record than an "illegal action" that hides the bug.
      reply.onError(Status.INTERNAL
          .withDescription("policy " + policy + " chose index " + i + " of " + n + " legal actions")
          .asRuntimeException());
      return;
    }
    reply.onNext(ActReply.newBuilder().setIndex(i).build());
    reply.onCompleted();
  }

  /** Round and match results: a stateful bot would learn from the revealed hands here. */
  @Override
  public void notify(Notification request, StreamObserver<NotifyReply> reply) {
    reply.onNext(NotifyReply.getDefaultInstance());
    reply.onCompleted();
  }

  // --- Listening and running. --------------------------------------------------------------------------

  /**
   * A server builder for "unix:/path" (also "unix:///path", as gRPC spells it) or "host:port". Both use
   * Netty's plain Java (NIO) transport: Java 16+ has Unix sockets built in, so no native library is needed.
   */
  static NettyServerBuilder listen(String addr, EventLoopGroup boss, EventLoopGroup worker) throws IOException {
    NettyServerBuilder builder;
    if (addr.startsWith("unix:")) {
      String path = addr.substring("unix:".length());
      if (path.startsWith("//")) path = path.substring(2);
      Path socket = Path.of(path);
      // A socket file left by a killed bot makes bind fail with "address already in use". Remove it,
      // but only if it is a socket: a typo in the address must not delete someone's file.
      if (Files.exists(socket, LinkOption.NOFOLLOW_LINKS)
          && ((Integer) Files.getAttribute(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 0170000) == 0140000) {
        Files.delete(socket);
      }
      builder = NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(socket))
          .channelType(NioServerDomainSocketChannel.class);
    } else {
      int colon = addr.lastIndexOf(':');
      if (colon < 0) throw new IOException("not unix:/path nor host:port");
      String host = addr.substring(0, colon).replaceAll("^\\[|\\]$", "");
      int port;
      try {
        port = Integer.parseInt(addr.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new IOException("bad port in " + addr);
      }
      builder = NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
          .channelType(NioServerSocketChannel.class);
    }
    return builder.bossEventLoopGroup(boss).workerEventLoopGroup(worker);
  }

  /** Kept referenced: java.util.logging forgets the level of a logger nobody holds. */
  static final Logger BOOTSTRAP_LOG = Logger.getLogger("io.grpc.netty.shaded.io.netty.bootstrap");

  /** Netty's settings for a sandbox; two of its warnings say nothing wrong here, and the others are kept. */
  static void quietNetty() {
    // The plain Java transport only: no native library to look for, unpack into /tmp and load.
    System.setProperty("io.grpc.netty.shaded.io.netty.transport.noNative", "true");
    // Netty names its channels after a network card's address, and a sandbox has none: give it random bytes.
    String machineId = "io.grpc.netty.shaded.io.netty.machineId";
    if (System.getProperty(machineId) == null) {
      byte[] id = new byte[8];
      ThreadLocalRandom.current().nextBytes(id);
      System.setProperty(machineId, HexFormat.ofDelimiter(":").formatHex(id));
    }
    // gRPC asks for TCP keep-alive on every connection, which a Unix socket does not have.
    BOOTSTRAP_LOG.setLevel(Level.SEVERE);
  }

  public static void main(String[] args) throws Exception {
    String listen = System.getenv("DOMINOES_BOT_LISTEN"), policy = "random", name = null;
    for (int k = 0; k < args.length; k++) {
      String arg = args[k], value = null;
      if (arg.equals("-h") || arg.equals("--help")) {
        System.out.println(USAGE);
        return;
      }
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        value = arg.substring(eq + 1);
        arg = arg.substring(0, eq);
      } else if (k + 1 < args.length) {
        value = args[k + 1];
      }
      if (!List.of("--listen", "--policy", "--name").contains(arg)) usage("unknown argument " + args[k]);
      if (value == null) usage(arg + " needs a value");
      if (eq < 0) k++;
      switch (arg) {
        case "--listen": listen = value; break;
        case "--policy": policy = value; break;
        default: name = value;
      }
    }
    if (!POLICIES.contains(policy)) usage("unknown policy \"" + policy + "\"");
    if (listen == null || listen.isEmpty()) usage("no address to listen on: pass --listen ADDR or set DOMINOES_BOT_LISTEN");
    if (name == null) name = "java-" + policy;

    Server server;
    try {
      server = serve(listen, name, policy);
    } catch (IOException | IllegalArgumentException e) {
      System.err.println("java bot: could not listen on " + listen + ": " + e.getMessage());
      System.exit(1);
      return;
    }
    // Show the address actually bound, so "127.0.0.1:0" (any free port) is usable too.
    SocketAddress bound = server.getListenSockets().get(0);
    String shown = bound instanceof InetSocketAddress
        ? ((InetSocketAddress) bound).getHostString() + ":" + ((InetSocketAddress) bound).getPort()
        : listen;
    System.err.printf("java bot: listening on %s (policy %s, name %s)%n", shown, policy, name);
    server.awaitTermination();
  }

  /** Starts the server; it stops when the JVM does (SIGTERM, SIGINT or System.exit). */
  static Server serve(String listen, String name, String policy) throws IOException {
    quietNetty();
    // One thread accepts, one does the network I/O, CALL_THREADS run the calls: a sandbox allows 128 threads.
    EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    EventLoopGroup worker = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    ExecutorService calls = Executors.newFixedThreadPool(CALL_THREADS);
    Server server = listen(listen, boss, worker)
        .executor(calls)
        .maxInboundMessageSize(MAX_MESSAGE_BYTES)
        .addService(new Bot(name, policy))
        .build()
        .start();

    // The arena stops a bot with SIGTERM: finish the calls in flight, but never take more than 2 s.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.shutdown();
      try {
        if (!server.awaitTermination(2, TimeUnit.SECONDS)) server.shutdownNow();
      } catch (InterruptedException e) {
        server.shutdownNow();
      }
      calls.shutdownNow();
      boss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      worker.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }));
    return server;
  }

  static final String USAGE =
      "usage: bot [--listen ADDR] [--policy random|heaviest] [--name NAME]\n"
      + "  ADDR is \"127.0.0.1:PORT\" or \"unix:/path/to.sock\"; default: $DOMINOES_BOT_LISTEN";

  static void usage(String problem) {
    System.err.println("error: " + problem + "\n" + USAGE);
    System.exit(2);
  }
}
