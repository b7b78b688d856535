// An example dominoes bot in Go: a gRPC server for the Bot service of proto/dominoes/v1/bot.proto.
// Copy it and change choose() to write your own.
//
// Build: bash bots/build.sh go   (generates gen/ from proto/ and writes bin/bot, a static binary)
// Run:   bin/bot --listen 127.0.0.1:50054 [--policy random|heaviest] [--name NAME]
// The arena starts it with DOMINOES_BOT_LISTEN set instead of --listen.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "dominoes-arena/bots/go/gen/dominoes/v1"
)

// The arena sets the same message size limit at its end.
const maxMessageBytes = 16 << 20

// --- The policy: everything a bot author changes is here. -------------------------------------------

// choose returns an index into req.Observation.LegalActions, which is never empty here.
// It may be called for many matches at once, so it must not touch shared state unguarded.
func (b *bot) choose(req *pb.ActRequest) int {
	legal := req.GetObservation().GetLegalActions()
	switch b.policy {
	case "heaviest":
		// The placement with the most pips (the first of equals); otherwise index 0, because
		// with no placement the legal actions are a draw or a pass.
		best, bestPips := 0, -1
		for i, a := range legal {
			if a.GetKind() != pb.ActionKind_ACTION_KIND_PLACE {
				continue
			}
			if p := int(a.GetTile().GetLow() + a.GetTile().GetHigh()); p > bestPips {
				best, bestPips = i, p
			}
		}
		return best
	default: // "random"; math/rand/v2's top-level functions are safe for concurrent calls.
		return rand.IntN(len(legal))
	}
}

var policies = []string{"random", "heaviest"}

// --- The service. ------------------------------------------------------------------------------------

type bot struct {
	// Embedding makes the bot compile (and answer UNIMPLEMENTED) if the service gains methods.
	pb.UnimplementedBotServer
	name, policy string
}

func (b *bot) Hello(context.Context, *pb.HelloRequest) (*pb.HelloReply, error) {
	return &pb.HelloReply{
		Name:            b.name,
		Version:         "1.0.0",
		Author:          "dominoes arena",
		ProtocolVersion: uint32(pb.ProtocolVersion_PROTOCOL_VERSION_1),
		Variants:        nil, // empty: every variant
	}, nil
}

func (b *bot) Act(_ context.Context, req *pb.ActRequest) (*pb.ActReply, error) {
	n := len(req.GetObservation().GetLegalActions())
	if n == 0 {
		// A malformed request gets an error status; it must never bring the process down.
		return nil, status.Error(codes.InvalidArgument, "the request has no legal actions")
	}
	i := b.choose(req)
	if i < 0 || i >= n {
		// Better a clear bot error in the arena's record than an "illegal action" that hides the bug.
		return nil, status.Errorf(codes.Internal, "policy %q chose index %d of %d legal actions", b.policy, i, n)
	}
	return &pb.ActReply{Choice: &pb.ActReply_Index{Index: uint32(i)}}, nil
}

// Notify brings round and match results: a stateful bot would learn from the revealed hands here.
func (b *bot) Notify(context.Context, *pb.Notification) (*pb.NotifyReply, error) {
	return &pb.NotifyReply{}, nil
}

// --- Listening and running. --------------------------------------------------------------------------

// listen opens "unix:/path" (also "unix:///path", as gRPC spells it) or "host:port".
func listen(addr string) (net.Listener, error) {
	path, isUnix := strings.CutPrefix(addr, "unix:")
	if !isUnix {
		return net.Listen("tcp", addr)
	}
	if p, ok := strings.CutPrefix(path, "//"); ok {
		path = p
	}
	// A socket file left by a killed bot makes bind fail with "address already in use". Remove it,
	// but only if it is a socket: a typo in the address must not delete someone's file.
	if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() == fs.ModeSocket {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing stale socket: %w", err)
		}
	}
	return net.Listen("unix", path) // the listener unlinks the file again when it closes
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("go bot: ")
	listenAddr := flag.String("listen", os.Getenv("DOMINOES_BOT_LISTEN"),
		`"127.0.0.1:PORT" or "unix:/path/to.sock" (default $DOMINOES_BOT_LISTEN)`)
	policy := flag.String("policy", "random", "the policy: "+strings.Join(policies, " or "))
	name := flag.String("name", "", `the name sent in the handshake (default "go-" + policy)`)
	flag.Parse()

	if !slices.Contains(policies, *policy) {
		usage(fmt.Sprintf("unknown policy %q", *policy))
	}
	if *listenAddr == "" {
		usage("no address to listen on: pass --listen ADDR or set DOMINOES_BOT_LISTEN")
	}
	if *name == "" {
		*name = "go-" + *policy
	}

	lis, err := listen(*listenAddr)
	if err != nil {
		log.Fatalf("could not listen on %s: %v", *listenAddr, err)
	}
	server := grpc.NewServer(grpc.MaxRecvMsgSize(maxMessageBytes), grpc.MaxSendMsgSize(maxMessageBytes))
	pb.RegisterBotServer(server, &bot{name: *name, policy: *policy})

	// The arena stops a bot with SIGTERM: finish the calls in flight, but never take more than 2 s.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	stopped := make(chan struct{})
	go func() {
		<-sig
		timer := time.AfterFunc(2*time.Second, server.Stop)
		server.GracefulStop()
		timer.Stop()
		close(stopped)
	}()

	// Show the address actually bound, so "127.0.0.1:0" (any free port) is usable too.
	shown := *listenAddr
	if lis.Addr().Network() == "tcp" {
		shown = lis.Addr().String()
	}
	log.Printf("listening on %s (policy %s, name %s)", shown, *policy, *name)
	if err := server.Serve(lis); err != nil {
		log.Fatalf("serve: %v", err)
	}
	// Serve returns as soon as the listener closes; the calls in flight finish before stopped is closed.
	<-stopped
}

func usage(problem string) {
	fmt.Fprintf(os.Stderr, "error: %s\n", problem)
	flag.Usage()
	os.Exit(2)
}
