// Telling a bot that spoke plain text to a referee that serves TLS so, instead of retrying.
#pragma once

#include <grpcpp/support/status.h>

#include "tavolo/bot.hpp"

namespace tavolo {

// Whether a stream that ended with `status`, before the referee said a word, was a TCP
// connection made without TLS and closed at once, as a referee that serves TLS closes a
// plain-text one (a restarting referee refuses the connection instead; a slot's own Unix
// socket never serves TLS). After three such attempts in a row (one also happens when a
// referee goes down in the middle of a connection), run() stops the stream with one line
// naming TAVOLO_TLS_CA. gRPC C++ says "failed to connect to all addresses; last error:
// UNAVAILABLE: ipv4:127.0.0.1:PORT: Socket closed" on a channel's first attempt; a later
// one on the same channel may say "last error: UNKNOWN: ...: tcp handshaker shutdown"
// whatever the referee did, refused connections too, so that form is not counted and run()
// retries such a stream on a fresh channel each time.
bool tls_expected(const Settings& settings, const grpc::Status& status);

}  // namespace tavolo
