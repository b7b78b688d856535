// Used by the build only, never by the arena: `java -XX:ArchiveClassesAtExit=bin/bot.jsa -cp bin/bot.jar
// dominoes.bot.WarmUp proto/examples` reads the example request of every variant (proto/examples/*.act.json, real
// requests written by the arena, in protobuf's JSON mapping) and
//  1. calls every policy's choose() on each: an exception or an index out of range fails the build;
//  2. starts the bot on a temporary Unix socket and sends it the requests through a real gRPC client.
// The JVM then writes every class it loaded to the class-data archive bin/bot.jsa, which bin/bot maps at each
// start (-XX:SharedArchiveFile) instead of loading those classes from the jar: that halves the start and the
// first decision. A bot works without the archive, only slower to start.
//
// This is also how to test a policy offline: JsonFormat.parser().merge(json, ActRequest.newBuilder()).
package dominoes.bot;

import com.google.protobuf.util.JsonFormat;
import dominoes.arena.v1.ActRequest;
import dominoes.arena.v1.BotGrpc;
import dominoes.arena.v1.HelloRequest;
import dominoes.arena.v1.MatchResult;
import dominoes.arena.v1.Notification;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

final class WarmUp {
  public static void main(String[] args) throws Exception {
    Path folder = Path.of(args[0]);
    List<Path> examples = new ArrayList<>();
    try (Stream<Path> files = Files.list(folder)) {
      files.filter(f -> f.toString().endsWith(".act.json")).sorted().forEach(examples::add);
    }
    if (examples.isEmpty()) throw new IllegalStateException("no *.act.json in " + folder);

    List<ActRequest> requests = new ArrayList<>();
    for (Path example : examples) {
      ActRequest.Builder request = ActRequest.newBuilder();
      JsonFormat.parser().ignoringUnknownFields().merge(Files.readString(example), request);
      requests.add(request.build());
    }

    // Every policy on every example, called directly: an exception or an index out of range is a bug.
    int status = 0;
    for (String policy : Bot.POLICIES) {
      Bot bot = new Bot("warm-up", policy);
      for (int k = 0; k < requests.size(); k++) {
        int legal = requests.get(k).getObservation().getLegalActionsCount();
        try {
          int index = bot.choose(requests.get(k));
          if (index < 0 || index >= legal) throw new IllegalStateException("index " + index + " of " + legal);
        } catch (RuntimeException e) {
          System.err.println("warm-up: policy " + policy + " failed on " + examples.get(k) + ": " + e);
          status = 1;
        }
      }
    }

    // The arena's calls through a real client, which loads the classes of the network path too.
    Path dir = Files.createTempDirectory("java-bot-warm-up");
    Path socket = dir.resolve("bot.sock");
    Server server = Bot.serve("unix:" + socket, "warm-up", Bot.POLICIES.get(0));
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    ManagedChannel channel = NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
        .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
        .eventLoopGroup(group)
        .overrideAuthority("localhost") // as the arena sends it
        .usePlaintext()
        .build();
    try {
      BotGrpc.BotBlockingStub bot = BotGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
      bot.hello(HelloRequest.newBuilder().setArenaVersion("warm-up").setProtocolVersion(1).build());
      for (int round = 0; round < 4; round++) {
        for (ActRequest request : requests) bot.act(request);
      }
      bot.notify(Notification.newBuilder()
          .setMatchId("warm-up")
          .setMatchEnd(MatchResult.newBuilder().addScores(100).addScores(0).setWinner(0))
          .build());
    } catch (StatusRuntimeException e) {
      System.err.println("warm-up: a call to the bot failed: " + e.getStatus());
      status = 1;
    } finally {
      channel.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
      Files.deleteIfExists(socket);
      Files.deleteIfExists(dir);
    }
    System.exit(status); // the server's threads would keep the JVM running
  }
}
