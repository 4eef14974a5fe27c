#!/usr/bin/env bash
# `mannerly gate` under load, with nginx alone beside it in the same run:
# open-loop requests at RATE per second for SECONDS (latency counted from
# when each request was due), against
#   1. nginx alone (serves a small file, no gate): the floor of the setup;
#   2. the gate directly, as a forward-auth hook calls it;
#   3. nginx with auth_request to the gate (keep-alive upstream), serving
#      the same file. (nginx's `return` runs before the access phase, so a
#      location that only returns is never gated: serve or proxy.)
# The mix cycles through a request signed with Web Bot Auth (verified with
# the given key), a Googlebot in its ranges, one outside them (refused), a
# browser and a bot slowed by a rate rule: every decision from cached keys
# and ranges.
#
#   tools/gate-bench/run.sh [RATE] [SECONDS]     (default 2000, 10)
#
# Needs nginx.
set -euo pipefail
cd "$(dirname "$0")/../.."
rate=${1:-2000}
seconds=${2:-10}
cargo build --release --quiet -p mannerly-cli --bin mannerly
cargo build --release --quiet -p mannerly-gate --example load
bin=$PWD/target/release/mannerly
load=$PWD/target/release/examples/load
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
gate=$(port); alone=$(port); front=$(port)

"$bin" keys generate --out "$work/keys" > /dev/null
printf '{"prefixes": [{"ipv4Prefix": "66.249.64.0/19"}]}' > "$work/google.json"
printf '[[rule]]\nwho = "spoofer"\ndo = "deny"\n[[rule]]\nwho = "token:GreedyBot"\ndo = "slow"\nrate = 100.0\n' > "$work/policy.toml"
"$bin" gate --listen "127.0.0.1:$gate" --policy "$work/policy.toml" --nginx --offline --allow-http \
    --keys "$work/keys/public.jwk.json" --ip-ranges "Googlebot=$work/google.json" --cache "$work/cache" 2> "$work/gate.err" &
pids+=($!)

mkdir -p "$work/ngx" "$work/www"
echo ok > "$work/www/page"
cat > "$work/nginx.conf" <<NGINX
daemon off; master_process off; worker_processes 1; pid $work/nginx.pid; error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  client_body_temp_path $work/ngx/b; proxy_temp_path $work/ngx/p; fastcgi_temp_path $work/ngx/f;
  uwsgi_temp_path $work/ngx/u; scgi_temp_path $work/ngx/s;
  access_log off;
  keepalive_requests 100000;
  upstream mannerly_gate { server 127.0.0.1:$gate; keepalive 64; }
  server { listen 127.0.0.1:$alone; root $work/www; }
  server {
    listen 127.0.0.1:$front;
    location / {
      auth_request /_mannerly_gate;
      auth_request_set \$gate_action \$upstream_http_x_mannerly_action;
      auth_request_set \$gate_retry \$upstream_http_retry_after;
      error_page 403 = @mannerly_refused;
      root $work/www;
    }
    location = /_mannerly_gate {
      internal;
      proxy_pass http://mannerly_gate;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Forwarded-Method \$request_method;
      proxy_set_header X-Forwarded-Proto \$scheme;
      proxy_set_header X-Forwarded-Host \$http_host;
      proxy_set_header X-Forwarded-Uri \$request_uri;
      proxy_set_header X-Forwarded-For \$remote_addr;
    }
    location @mannerly_refused {
      if (\$gate_action = slow) { add_header Retry-After \$gate_retry always; return 429; }
      return 403;
    }
  }
}
NGINX
nginx -c "$work/nginx.conf" &
pids+=($!)
for p in $gate $alone $front; do
    for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && break; sleep 0.1; done
done

# The request templates: through nginx (the client's own headers) and to
# the gate directly (with the forward-auth headers nginx would add).
signed=$("$bin" sign --key "$work/keys/private.pem" --validity 3600 \
    --signature-agent https://crawler.example/.well-known/http-message-signatures-directory http://bench.test/page)
ua_bot="User-Agent: mannerly/0.1.0 (+https://example.invalid/mannerly)"
ua_google="User-Agent: Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
ua_browser="User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
ua_greedy="User-Agent: GreedyBot/1.0"
fwd="X-Forwarded-Method: GET
X-Forwarded-Proto: http
X-Forwarded-Host: bench.test
X-Forwarded-Uri: /page"
printf 'Host: bench.test\n%s\n%s\n\nHost: bench.test\n%s\n\nHost: bench.test\n%s\n\nHost: bench.test\n%s\n\nHost: bench.test\n%s\n' "$ua_bot" "$signed" "$ua_google" "$ua_google" "$ua_browser" "$ua_greedy" > "$work/nginx.tpl"
printf '%s\n%s\nX-Forwarded-For: 203.0.113.7\n%s\n\n%s\n%s\nX-Forwarded-For: 66.249.66.1\n\n%s\n%s\nX-Forwarded-For: 203.0.113.9\n\n%s\n%s\nX-Forwarded-For: 203.0.113.10\n\n%s\n%s\nX-Forwarded-For: 203.0.113.11\n' \
    "$fwd" "$ua_bot" "$signed" "$fwd" "$ua_google" "$fwd" "$ua_google" "$fwd" "$ua_browser" "$fwd" "$ua_greedy" > "$work/gate.tpl"

echo "$(nproc) cores; $rate requests/s for $seconds s each, open loop"
printf '%-22s %s\n' "nginx alone" "$("$load" "http://127.0.0.1:$alone/page" "$rate" "$seconds" "$work/nginx.tpl")"
printf '%-22s %s\n' "gate directly" "$("$load" "http://127.0.0.1:$gate/" "$rate" "$seconds" "$work/gate.tpl")"
printf '%-22s %s\n' "nginx + gate" "$("$load" "http://127.0.0.1:$front/page" "$rate" "$seconds" "$work/nginx.tpl")"
