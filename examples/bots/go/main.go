// An example nardy arena bot in Go: a nardy.bot.v1.BotService server that plays a (seeded)
// random legal play, never doubles and always takes. Built only from Debian packages (see
// build.sh): the gRPC and protobuf runtimes come from golang-google-grpc-dev and
// golang-google-protobuf-dev, the code of the protos from protoc-gen-go and protoc-gen-go-grpc.
//
//	examples/bots/go/build.sh OUT_DIR      # generates the code and builds OUT_DIR/nardy-go-bot
//	OUT_DIR/nardy-go-bot [PORT] [SEED]     # PORT 0 (the default) picks a free port
//
// The bot prints "LISTENING <host>:<port>" once it accepts calls, the line the arena's local-bot
// supervisor and the tests wait for. Set NARDY_BOT_TOKEN to refuse callers that do not send
// "authorization: Bearer <token>" (the token RegisterBot returned to the arena).
package main

import (
	"context"
	"crypto/subtle"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	botv1 "nardybot/gen/botv1"
)

type bot struct {
	botv1.UnimplementedBotServiceServer
	mu     sync.Mutex // the random stream is shared by concurrent calls
	random *rand.Rand
	token  string
}

// authorize refuses a call without the arena's bearer token (when one is configured). The
// comparison takes the same time wherever the first difference is.
func (b *bot) authorize(ctx context.Context) error {
	if b.token == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	want := []byte("Bearer " + b.token)
	for _, got := range md.Get("authorization") {
		if subtle.ConstantTimeCompare([]byte(got), want) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "wrong or missing arena token")
}

func (b *bot) GetInfo(ctx context.Context, _ *botv1.GetInfoRequest) (*botv1.GetInfoResponse, error) {
	if err := b.authorize(ctx); err != nil {
		return nil, err
	}
	return &botv1.GetInfoResponse{Info: &botv1.BotInfo{
		Name:        "go-random",
		Version:     "0.1.0",
		Author:      "nardy examples",
		Description: "Plays a random legal play (Go, Debian's grpc-go).",
	}}, nil
}

func (b *bot) ChoosePlay(ctx context.Context, req *botv1.ChoosePlayRequest) (*botv1.ChoosePlayResponse, error) {
	if err := b.authorize(ctx); err != nil {
		return nil, err
	}
	plays := req.GetContext().GetLegalPlays()
	if len(plays) == 0 {
		return nil, status.Error(codes.InvalidArgument, "no legal plays in the request")
	}
	b.mu.Lock()
	choice := plays[b.random.Intn(len(plays))]
	b.mu.Unlock()
	return &botv1.ChoosePlayResponse{
		Choice: &botv1.ChoosePlayResponse_PlayIndex{PlayIndex: choice.GetIndex()},
		Info: &botv1.DecisionInfo{
			Comment: fmt.Sprintf("random among %d", len(plays)),
			Values:  map[string]string{"engine": "go"},
		},
	}, nil
}

func (b *bot) DecideDouble(ctx context.Context, _ *botv1.DecideDoubleRequest) (*botv1.DecideDoubleResponse, error) {
	if err := b.authorize(ctx); err != nil {
		return nil, err
	}
	return &botv1.DecideDoubleResponse{Action: botv1.DoubleAction_DOUBLE_ACTION_ROLL}, nil
}

func (b *bot) RespondToDouble(ctx context.Context, _ *botv1.RespondToDoubleRequest) (*botv1.RespondToDoubleResponse, error) {
	if err := b.authorize(ctx); err != nil {
		return nil, err
	}
	return &botv1.RespondToDoubleResponse{Action: botv1.TakeAction_TAKE_ACTION_TAKE}, nil
}

func argument(index int, fallback int64) int64 {
	if len(os.Args) <= index {
		return fallback
	}
	value, err := strconv.ParseInt(os.Args[index], 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "usage: %s [PORT] [SEED]: %q is not a number\n", os.Args[0], os.Args[index])
		os.Exit(2)
	}
	return value
}

func main() {
	port, seed := argument(1, 0), argument(2, 1)
	listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot listen: %v\n", err)
		os.Exit(1)
	}
	const maxMessage = 4 * 1024 * 1024
	server := grpc.NewServer(grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	botv1.RegisterBotServiceServer(server, &bot{
		random: rand.New(rand.NewSource(seed)),
		token:  os.Getenv("NARDY_BOT_TOKEN"),
	})
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		server.GracefulStop()
	}()
	fmt.Printf("LISTENING %s\n", listener.Addr())
	if err := server.Serve(listener); err != nil {
		fmt.Fprintf(os.Stderr, "serve: %v\n", err)
		os.Exit(1)
	}
}
