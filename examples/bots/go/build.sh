#!/usr/bin/env bash
# Build the Go example bot from the repository's protos with Debian's packages only, offline:
#
#   apt-get install golang-go golang-google-grpc-dev golang-google-protobuf-dev \
#       golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc \
#       protobuf-compiler libprotobuf-dev
#   examples/bots/go/build.sh OUT_DIR        # writes OUT_DIR/nardy-go-bot
#
# golang-github-golang-protobuf-1-5-dev matters: grpc-go's codec goes through the github.com/golang/
# protobuf package, and only its 1.5 line understands the messages protoc-gen-go 1.28 generates
# (with 1.3, which apt may pick to satisfy grpc-go, every call panics in the unmarshaller).
#
# Debian installs Go libraries as source under /usr/share/gocode, which the go tool reads in
# GOPATH mode (GO111MODULE=off): no module download. The protos carry no go_package option, so
# protoc-gen-go is told each file's Go package with M flags.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
protos=$(cd "$here/../../../protos" && pwd)
out=${1:?usage: build.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
gopath="$out/gopath"
src="$gopath/src"
rm -rf "$src/nardybot"
if [ -e /usr/share/gocode/src/github.com/golang/protobuf/proto/table_unmarshal.go ]; then
  echo "golang-github-golang-protobuf-1-3-dev is installed: install golang-github-golang-protobuf-1-5-dev" >&2
  exit 1
fi
mkdir -p "$src/nardybot"

# Well-known types (google/protobuf/duration.proto ...): libprotobuf-dev installs them here.
wkt=/usr/include
mapping="Mnardy/game/v1/game.proto=nardybot/gen/gamev1,Mnardy/bot/v1/bot.proto=nardybot/gen/botv1"
protoc -I "$protos" -I "$wkt" \
  --go_out="$src" --go_opt="$mapping" \
  --go-grpc_out="$src" --go-grpc_opt="$mapping" \
  nardy/game/v1/game.proto nardy/bot/v1/bot.proto
cp "$here/main.go" "$src/nardybot/"

# The go tool caches builds under $HOME; without a home (some CI sandboxes) cache beside the output.
if [ -z "${GOCACHE:-}" ] && [ -z "${HOME:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ]; then
  export GOCACHE="$out/gocache"
fi
GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOFLAGS= \
  go build -o "$out/nardy-go-bot" nardybot
echo "built $out/nardy-go-bot"
