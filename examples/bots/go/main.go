// An example nardy arena bot in Go: a nardy.bot.v1.BotService server that plays a (seeded)
// random legal play (preferring, in plakoto, the plays that pin the most), never doubles and
// always takes. Built only from Debian packages (see
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
	gamev1 "nardybot/gen/gamev1"
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
	// Where plays differ in pins (plakoto), keep those that leave the opponent the most pinned
	// checkers net of the bot's own; elsewhere every play scores 0 and the choice is plain random.
	var candidates []*gamev1.LegalPlay
	best := 0
	for i, play := range plays {
		pinned := readSides(play.GetResult()).pinned // the result is still the bot's view
		score := pinned[1] - pinned[0]
		if i == 0 || score > best {
			candidates, best = nil, score
		}
		if score == best {
			candidates = append(candidates, play)
		}
	}
	b.mu.Lock()
	choice := candidates[b.random.Intn(len(candidates))]
	b.mu.Unlock()
	position := req.GetContext().GetPosition()
	seen := readSides(position)
	return &botv1.ChoosePlayResponse{
		Choice: &botv1.ChoosePlayResponse_PlayIndex{PlayIndex: choice.GetIndex()},
		Info: &botv1.DecisionInfo{
			Comment: fmt.Sprintf("random among %d of %d", len(candidates), len(plays)),
			Values: map[string]string{
				"engine":   "go",
				"position": position.GetPositionId(),
				"checkers": pair(seen.checkers),
				"held":     pair(seen.held),
				"pinned":   pair(seen.pinned),
			},
		},
	}, nil
}

// sides is what a Position says about each side, [mover, opponent], pinned checkers included
// (RULES.md §3.12.2, plakoto): Pinned lists the points holding one checker pinned beneath the
// stack that Points counts. That checker is the OTHER side's: it counts among its owner's
// checkers, but the point belongs to the stack's owner (closed to the pinned side). Pinned is
// empty in every variant that does not pin.
type sides struct {
	checkers, held, pinned [2]int
}

func readSides(position *gamev1.Position) sides {
	var s sides
	s.checkers[0] = int(position.GetBar().GetMover() + position.GetOff().GetMover())
	s.checkers[1] = int(position.GetBar().GetOpponent() + position.GetOff().GetOpponent())
	points := position.GetPoints()
	for _, n := range points {
		if n > 0 {
			s.checkers[0] += int(n)
			s.held[0]++
		} else if n < 0 {
			s.checkers[1] -= int(n)
			s.held[1]++
		}
	}
	for _, p := range position.GetPinned() {
		if p < 1 || int(p) > len(points) {
			continue
		}
		owner := 0 // beneath the opponent's stack: the mover's checker
		if points[p-1] > 0 {
			owner = 1
		}
		s.pinned[owner]++
		s.checkers[owner]++
	}
	return s
}

func pair(v [2]int) string {
	return fmt.Sprintf("%d/%d", v[0], v[1])
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
