#!/usr/bin/env bash
# Smoke test of the gateway on its three runtimes, after a type check:
#   0. tsc --noEmit over src, test and scripts (Bun runs TypeScript unchecked, so a type
#      error would otherwise land unseen);
#   1. the compiled executable (npm run build), run ALONE from an empty temp folder
#      with an empty environment;
#   2. Deno from the repo (node_modules/.bin/deno run -A src/runtime/deno.ts);
#   3. Node from the repo (npm run build:node, then node dist/node/node.js).
# Each runs: start on a free 127.0.0.1 port + /health, demo key from the first-start
# banner, a plain and a streamed demo chat completion, and SIGTERM -> exit 0.
#
# Output contract (read by CI): exactly one line per check,
#   SMOKE PASS <name>   or   SMOKE FAIL <name>: <reason>
# plus `SMOKE METRIC <name> <value>` lines for the executable. Exit code 1 if any
# check failed. Every wait is bounded; background processes are cleaned up on exit.
#
#   scripts/smoke.sh            (from anywhere; it cd's to the repo root)
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO" || exit 2

HEALTH_TIMEOUT_S=30    # start -> first 200 on /health
KEY_TIMEOUT_S=5        # /health 200 -> banner line with the demo key in stdout
REQUEST_TIMEOUT_S=20   # one chat request
EXIT_TIMEOUT_S=15      # SIGTERM -> process gone
IDLE_SETTLE_S=1        # pause after the requests before reading VmRSS

FAILURES=0
PIDS=()
TMPDIRS=()

pass() { echo "SMOKE PASS $1"; }
fail() { echo "SMOKE FAIL $1: $2"; FAILURES=$((FAILURES + 1)); }
metric() { echo "SMOKE METRIC $1 $2"; }
note() { echo "smoke: $*" >&2; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

cleanup() {
  local pid deadline
  for pid in "${PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      deadline=$(( $(now_ms) + 5000 ))
      while kill -0 "$pid" 2>/dev/null && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null
    fi
  done
  for dir in "${TMPDIRS[@]}"; do rm -rf -- "$dir"; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Sets NEW_TMPDIR to a fresh folder that is removed on exit. Not called through $(...):
# a subshell could not record it in TMPDIRS.
NEW_TMPDIR=""
new_tmpdir() {
  NEW_TMPDIR="$(mktemp -d)" || { note "mktemp -d failed"; exit 2; }
  TMPDIRS+=("$NEW_TMPDIR")
}

# A free TCP port on 127.0.0.1 (the OS picks it; tiny race before the gateway binds it).
free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# Prints the last lines of a runtime's logs to stderr, to explain a failure.
dump_logs() {
  local dir="$1"
  note "---- stdout (last 20 lines) ----"; tail -n 20 "$dir/stdout" >&2 2>/dev/null
  note "---- stderr (last 20 lines) ----"; tail -n 20 "$dir/stderr" >&2 2>/dev/null
}

# One-line summary of a log file for a FAIL reason.
last_line() { tail -n 5 "$1" 2>/dev/null | tr -s '\r\n\t' '   ' | cut -c1-300; }

# smoke_running <name> <pid> <port> <logdir> <t0_ms> <want_metrics 0|1>
# Runs the checks against a process already started in the background.
smoke_running() {
  local name="$1" pid="$2" port="$3" dir="$4" t0="$5" want_metrics="$6"
  local base="http://127.0.0.1:$port" code="" deadline ttfb="" key="" body

  # --- health: first 200 within HEALTH_TIMEOUT_S, process still alive
  deadline=$(( t0 + HEALTH_TIMEOUT_S * 1000 ))
  while :; do
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$base/health" 2>/dev/null)"
    if [ "$code" = "200" ]; then ttfb=$(( $(now_ms) - t0 )); break; fi
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    if [ "$(now_ms)" -ge "$deadline" ]; then break; fi
    sleep 0.02
  done
  if [ -n "$ttfb" ]; then
    pass "$name health"
    note "$name: first 200 on /health after ${ttfb} ms"
    [ "$want_metrics" = 1 ] && metric "${name}_time_to_first_200_ms" "$ttfb"
  else
    local why
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null; why="process exited (code $?) before /health answered 200; stderr: $(last_line "$dir/stderr")"
    else
      why="no 200 on $base/health within ${HEALTH_TIMEOUT_S} s (last status '${code:-none}')"
    fi
    fail "$name health" "$why"
    dump_logs "$dir"
    for check in demo-key chat chat-stream media; do fail "$name $check" "skipped: gateway did not become healthy"; done
    [ "$want_metrics" = 1 ] && fail "$name idle-rss" "skipped: gateway did not become healthy"
    stop_and_check "$name" "$pid" "$dir"
    return
  fi

  # --- demo key from the first-start banner
  deadline=$(( $(now_ms) + KEY_TIMEOUT_S * 1000 ))
  while :; do
    key="$(sed -n 's/.*Demo API key (shown once): \(sk-gw-[A-Za-z0-9_-]*\).*/\1/p' "$dir/stdout" 2>/dev/null | head -n 1)"
    [ -n "$key" ] && break
    [ "$(now_ms)" -ge "$deadline" ] && break
    sleep 0.05
  done
  if [ -n "$key" ]; then
    pass "$name demo-key"
  else
    fail "$name demo-key" "no 'Demo API key (shown once): sk-gw-...' line in stdout within ${KEY_TIMEOUT_S} s"
    dump_logs "$dir"
  fi

  local payload='{"model":"demo-chat","messages":[{"role":"user","content":"Hello"}]}'
  local payload_stream='{"model":"demo-chat","messages":[{"role":"user","content":"Hello"}],"stream":true}'

  # --- plain chat completion
  if [ -z "$key" ]; then
    fail "$name chat" "skipped: no demo key"
  else
    code="$(curl -s -o "$dir/chat.json" -w '%{http_code}' --max-time "$REQUEST_TIMEOUT_S" \
      -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
      -d "$payload" "$base/v1/chat/completions" 2>"$dir/curl-chat.err")"
    body="$(head -c 300 "$dir/chat.json" 2>/dev/null | tr -s '\r\n' '  ')"
    if [ "$code" != "200" ]; then
      fail "$name chat" "HTTP ${code:-none} (curl: $(last_line "$dir/curl-chat.err")); body: $body"
    elif ! grep -Eq '"object"[[:space:]]*:[[:space:]]*"chat\.completion"' "$dir/chat.json"; then
      fail "$name chat" "200 but no \"object\":\"chat.completion\" in body: $body"
    else
      pass "$name chat"
    fi
  fi

  # --- streamed chat completion (SSE, last event data: [DONE])
  if [ -z "$key" ]; then
    fail "$name chat-stream" "skipped: no demo key"
  else
    code="$(curl -s -N -o "$dir/stream.txt" -w '%{http_code}' --max-time "$REQUEST_TIMEOUT_S" \
      -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
      -d "$payload_stream" "$base/v1/chat/completions" 2>"$dir/curl-stream.err")"
    local curl_rc=$?
    local last
    last="$(tr -d '\r' < "$dir/stream.txt" 2>/dev/null | awk 'NF { l = $0 } END { print l }')"
    if [ "$code" != "200" ]; then
      fail "$name chat-stream" "HTTP ${code:-none} (curl exit $curl_rc); body: $(head -c 300 "$dir/stream.txt" 2>/dev/null | tr -s '\r\n' '  ')"
    elif [ "$curl_rc" -ne 0 ]; then
      fail "$name chat-stream" "curl exit $curl_rc ($(last_line "$dir/curl-stream.err")); last line: $last"
    elif [ "$last" != "data: [DONE]" ]; then
      fail "$name chat-stream" "body does not end with 'data: [DONE]'; last line: $(echo "$last" | cut -c1-200)"
    else
      pass "$name chat-stream"
    fi
  fi

  # --- other modalities: speech to a WAV file, that file uploaded for transcription, and
  # embeddings (exercises temp-file uploads and multipart under each runtime)
  if [ -z "$key" ]; then
    fail "$name media" "skipped: no demo key"
  else
    local speech_code transcript_code embed_code
    speech_code="$(curl -s -o "$dir/speech.wav" -w '%{http_code}' --max-time "$REQUEST_TIMEOUT_S" \
      -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
      -d '{"model":"demo-tts","input":"Smoke test of the speech endpoint","response_format":"wav"}' \
      "$base/v1/audio/speech" 2>/dev/null)"
    transcript_code="$(curl -s -o "$dir/transcript.json" -w '%{http_code}' --max-time "$REQUEST_TIMEOUT_S" \
      -H "Authorization: Bearer $key" -F "file=@$dir/speech.wav" -F model=demo-transcribe -F response_format=verbose_json \
      "$base/v1/audio/transcriptions" 2>/dev/null)"
    embed_code="$(curl -s -o "$dir/embed.json" -w '%{http_code}' --max-time "$REQUEST_TIMEOUT_S" \
      -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
      -d '{"model":"demo-embed","input":["one","two"]}' "$base/v1/embeddings" 2>/dev/null)"
    if [ "$speech_code" != "200" ] || [ "$(head -c 4 "$dir/speech.wav" 2>/dev/null)" != "RIFF" ]; then
      fail "$name media" "speech: HTTP ${speech_code:-none}, body starts $(head -c 60 "$dir/speech.wav" 2>/dev/null | tr -cd '[:print:]')"
    elif [ "$transcript_code" != "200" ] || ! grep -q '"duration"' "$dir/transcript.json"; then
      fail "$name media" "transcription: HTTP ${transcript_code:-none}; body: $(head -c 200 "$dir/transcript.json" 2>/dev/null)"
    elif [ "$embed_code" != "200" ] || ! grep -q '"embedding"' "$dir/embed.json"; then
      fail "$name media" "embeddings: HTTP ${embed_code:-none}; body: $(head -c 200 "$dir/embed.json" 2>/dev/null)"
    else
      pass "$name media"
    fi
  fi

  # --- idle RSS (executable only)
  if [ "$want_metrics" = 1 ]; then
    sleep "$IDLE_SETTLE_S"
    local rss_kb
    rss_kb="$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)"
    if [ -n "$rss_kb" ]; then
      metric "${name}_idle_rss_mb" "$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')"
      pass "$name idle-rss"
    else
      fail "$name idle-rss" "could not read VmRSS from /proc/$pid/status (process gone?)"
    fi
  fi

  stop_and_check "$name" "$pid" "$dir"
}

# SIGTERM, then the process must be gone within EXIT_TIMEOUT_S with exit code 0.
stop_and_check() {
  local name="$1" pid="$2" dir="$3" deadline rc
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null; rc=$?
    fail "$name sigterm" "process had already exited (code $rc) before SIGTERM"
    return
  fi
  kill -TERM "$pid"
  deadline=$(( $(now_ms) + EXIT_TIMEOUT_S * 1000 ))
  while kill -0 "$pid" 2>/dev/null && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.05; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    fail "$name sigterm" "still running ${EXIT_TIMEOUT_S} s after SIGTERM (killed)"
    dump_logs "$dir"
    return
  fi
  wait "$pid" 2>/dev/null; rc=$?
  if [ "$rc" -eq 0 ]; then
    pass "$name sigterm"
  else
    fail "$name sigterm" "exit code $rc after SIGTERM; stderr: $(last_line "$dir/stderr")"
    dump_logs "$dir"
  fi
}

# Environment for the repo runtimes: ours, minus anything that configures the gateway.
gateway_env_unset() {
  local var
  for var in PORT HOST DATABASE_URL DATABASE_AUTH_TOKEN; do printf -- '-u\0%s\0' "$var"; done
  env | sed -n 's/^\(GATEWAY_[A-Za-z0-9_]*\)=.*/\1/p' | while read -r var; do printf -- '-u\0%s\0' "$var"; done
}

# ---------------------------------------------------------------- 1. executable
smoke_binary() {
  local name="binary" dir port t0 pid
  new_tmpdir; dir="$NEW_TMPDIR"
  note "building the executable (npm run build)"
  if ! npm run build >"$dir/build.log" 2>&1; then
    fail "$name build" "npm run build failed: $(last_line "$dir/build.log")"
    tail -n 30 "$dir/build.log" >&2
    for check in health demo-key chat chat-stream media idle-rss sigterm; do fail "$name $check" "skipped: build failed"; done
    return
  fi
  if [ ! -x dist/gateway ]; then
    fail "$name build" "npm run build succeeded but dist/gateway is missing or not executable"
    for check in health demo-key chat chat-stream media idle-rss sigterm; do fail "$name $check" "skipped: build failed"; done
    return
  fi
  pass "$name build"
  local size_bytes
  size_bytes="$(stat -c %s dist/gateway)"
  metric "${name}_size_mb" "$(awk -v b="$size_bytes" 'BEGIN { printf "%.1f", b / 1048576 }')"

  local run
  new_tmpdir; run="$NEW_TMPDIR"
  cp dist/gateway "$run/gateway"
  port="$(free_port)" || { fail "$name health" "could not pick a free port"; return; }
  note "$name: starting $run/gateway on 127.0.0.1:$port"
  t0="$(now_ms)"
  # exec chain: subshell -> env -> gateway, so $! is the gateway's pid.
  ( cd "$run" && exec env -i PATH=/usr/bin:/bin HOME="$run" TMPDIR="$run" PORT="$port" HOST=127.0.0.1 ./gateway ) \
    >"$dir/stdout" 2>"$dir/stderr" </dev/null &
  pid=$!
  PIDS+=("$pid")
  smoke_running "$name" "$pid" "$port" "$dir" "$t0" 1
  if [ -f "$run/data/gateway.db" ]; then
    note "$name: database created at $run/data/gateway.db"
  else
    note "$name: WARNING no $run/data/gateway.db after the run"
  fi
}

# ---------------------------------------------------------------- 2. Deno
smoke_deno() {
  local name="deno" dir port t0 pid
  new_tmpdir; dir="$NEW_TMPDIR"
  if [ ! -x node_modules/.bin/deno ]; then
    fail "$name health" "node_modules/.bin/deno not found (npm install?)"
    for check in demo-key chat chat-stream media sigterm; do fail "$name $check" "skipped: no deno"; done
    return
  fi
  port="$(free_port)" || { fail "$name health" "could not pick a free port"; return; }
  note "$name: starting src/runtime/deno.ts on 127.0.0.1:$port"
  local unset_args=()
  mapfile -d '' unset_args < <(gateway_env_unset)
  t0="$(now_ms)"
  env "${unset_args[@]}" DENO_NO_UPDATE_CHECK=1 NO_COLOR=1 \
    DATABASE_URL="file:$dir/data/gateway.db" PORT="$port" HOST=127.0.0.1 \
    node_modules/.bin/deno run -A src/runtime/deno.ts >"$dir/stdout" 2>"$dir/stderr" </dev/null &
  pid=$!
  PIDS+=("$pid")
  smoke_running "$name" "$pid" "$port" "$dir" "$t0" 0
}

# ---------------------------------------------------------------- 3. Node
smoke_node() {
  local name="node" dir port t0 pid
  new_tmpdir; dir="$NEW_TMPDIR"
  note "bundling for Node (npm run build:node)"
  if ! npm run build:node >"$dir/build.log" 2>&1; then
    fail "$name build" "npm run build:node failed: $(last_line "$dir/build.log")"
    tail -n 30 "$dir/build.log" >&2
    for check in health demo-key chat chat-stream media sigterm; do fail "$name $check" "skipped: build failed"; done
    return
  fi
  if [ ! -f dist/node/node.js ]; then
    fail "$name build" "npm run build:node succeeded but dist/node/node.js is missing"
    for check in health demo-key chat chat-stream media sigterm; do fail "$name $check" "skipped: build failed"; done
    return
  fi
  pass "$name build"
  port="$(free_port)" || { fail "$name health" "could not pick a free port"; return; }
  note "$name: starting dist/node/node.js ($(node --version)) on 127.0.0.1:$port"
  local unset_args=()
  mapfile -d '' unset_args < <(gateway_env_unset)
  t0="$(now_ms)"
  env "${unset_args[@]}" DATABASE_URL="file:$dir/data/gateway.db" PORT="$port" HOST=127.0.0.1 \
    node dist/node/node.js >"$dir/stdout" 2>"$dir/stderr" </dev/null &
  pid=$!
  PIDS+=("$pid")
  smoke_running "$name" "$pid" "$port" "$dir" "$t0" 0
}

smoke_types() {
  local out
  if out="$(npx --no-install tsc --noEmit -p . 2>&1)"; then
    pass "typecheck"
  else
    fail "typecheck" "$(grep -m3 'error TS' <<<"$out" | tr '\n' ' ' | cut -c1-300)"
  fi
}

for tool in node npm curl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SMOKE FAIL prerequisites: $tool not on PATH"; exit 1; }
done

smoke_types
smoke_binary
smoke_deno
smoke_node

if [ "$FAILURES" -gt 0 ]; then
  note "$FAILURES check(s) failed"
  exit 1
fi
note "all checks passed"
exit 0
